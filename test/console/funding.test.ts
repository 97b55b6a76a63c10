import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Funding } from '../../src/portal/billing/service.js';
import { listMail } from '../../src/portal/mail.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';

let ctx: TestContext;
let operator: PortalUser;

beforeAll(async () => {
  ctx = await buildTestContext();
  operator = await operatorUser(ctx.app, ctx.database.db);
});
afterAll(() => ctx.close());

/** An organization whose owner announced a transfer of `amount` kobo, as the portal's fund page does. */
async function announced(amount: number) {
  const setup = await portalOrg(ctx.database.db, { fund: 0 });
  const request = await new Funding(ctx.database.db).request(setup.org.id, { amount }, { kind: 'member', personId: setup.owner.personId });
  return { ...setup, request };
}

const balanceOf = async (orgId: string) =>
  Number((await ctx.database.db.selectFrom('organizations').select('balance').where('id', '=', orgId).executeTakeFirstOrThrow()).balance);

describe('fundings in the console', () => {
  it('lists pending transfers of every organization; confirming credits the wallet once, with a ledger row, the operator in the audit log and a mail', async () => {
    const { org, owner, request } = await announced(2_500_000);
    const listed = await portal(ctx.app, operator, { method: 'GET', url: '/api/console/funding-requests?status=pending&limit=100' });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.find((row: { id: string }) => row.id === request.id)).toMatchObject({ orgId: org.id, orgName: org.name, amount: 2_500_000, status: 'pending' });

    const confirm = () => portal(ctx.app, operator, { method: 'POST', url: `/api/console/funding-requests/${request.id}/confirm` });
    const confirmed = await confirm();
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.json()).toMatchObject({ id: request.id, status: 'confirmed' });
    expect(confirmed.json().ledgerEntryId).toEqual(expect.any(Number));
    expect(await balanceOf(org.id)).toBe(2_500_000);

    const again = await confirm();
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ status: 'error', code: 'CONFLICT' });
    expect(await balanceOf(org.id)).toBe(2_500_000);

    const ledger = await ctx.database.db.selectFrom('ledger_entries').selectAll().where('org_id', '=', org.id).execute();
    expect(ledger.map((row) => [row.kind, Number(row.amount), row.description])).toEqual([['credit', 2_500_000, `Bank transfer ${request.reference}`]]);
    const audit = await ctx.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', '=', 'funding.confirmed').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_kind: 'operator', actor_id: operator.personId, target: request.reference });
    expect((await listMail(ctx.database.db, { to: owner.email })).length).toBeGreaterThan(0);
  });

  it('rejects with a reason the customer sees and credits nothing; bad input is refused in style A', async () => {
    const { org, owner, request } = await announced(1_000_000);
    const reject = (id: string, payload: object) => portal(ctx.app, operator, { method: 'POST', url: `/api/console/funding-requests/${id}/reject`, payload });
    expect((await reject(request.id, { reason: '' })).statusCode).toBe(400);
    expect((await reject(request.id, { reason: 'x'.repeat(501) })).statusCode).toBe(400);
    const rejected = await reject(request.id, { reason: 'No transfer with this reference reached our account' });
    expect(rejected.statusCode).toBe(200);
    expect(rejected.json()).toMatchObject({ status: 'rejected', reason: 'No transfer with this reference reached our account', ledgerEntryId: null });
    expect(await balanceOf(org.id)).toBe(0);
    const seen = (await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/funding-requests` })).json();
    expect(seen.data[0]).toMatchObject({ status: 'rejected', reason: 'No transfer with this reference reached our account' });

    const unknown = await portal(ctx.app, operator, { method: 'POST', url: '/api/console/funding-requests/00000000-0000-4000-8000-000000000000/confirm' });
    expect(unknown.statusCode).toBe(404);
    expect((await portal(ctx.app, operator, { method: 'POST', url: '/api/console/funding-requests/nope/confirm' })).statusCode).toBe(404);
    expect((await portal(ctx.app, operator, { method: 'GET', url: '/api/console/funding-requests?status=bogus' })).statusCode).toBe(400);
  });

  it('says when other organizations announced the same reference (pending or confirmed), to the operator only', async () => {
    const reference = `SHARED ${Date.now() % 1_000_000}`;
    const announce = async (amount: number) => {
      const setup = await portalOrg(ctx.database.db, { fund: 0 });
      const request = await new Funding(ctx.database.db).request(setup.org.id, { amount, reference }, { kind: 'member', personId: setup.owner.personId });
      return { ...setup, request };
    };
    const first = await announce(1_000_000);
    const second = await announce(2_000_000);
    const withdrawn = await announce(3_000_000);
    await new Funding(ctx.database.db).withdraw(withdrawn.org.id, withdrawn.request.id, { kind: 'member', personId: withdrawn.owner.personId });
    const listed = (await portal(ctx.app, operator, { method: 'GET', url: '/api/console/funding-requests?limit=100' })).json().data as { id: string; alsoAnnouncedBy: unknown[] }[];
    const row = (id: string) => listed.find((entry) => entry.id === id)!;
    expect(row(first.request.id).alsoAnnouncedBy).toEqual([{ orgId: second.org.id, orgName: second.org.name, status: 'pending', amount: 2_000_000 }]);
    expect(row(second.request.id).alsoAnnouncedBy).toEqual([{ orgId: first.org.id, orgName: first.org.name, status: 'pending', amount: 1_000_000 }]);
    // A withdrawn request counts for nobody, though its own row still names the standing ones.
    expect(row(withdrawn.request.id).alsoAnnouncedBy).toHaveLength(2);
    // A confirmed one still counts: a second transfer with its words may be someone else's.
    await portal(ctx.app, operator, { method: 'POST', url: `/api/console/funding-requests/${first.request.id}/confirm` });
    const again = (await portal(ctx.app, operator, { method: 'GET', url: '/api/console/funding-requests?status=pending&limit=100' })).json().data as { id: string; alsoAnnouncedBy: unknown[] }[];
    expect(again.find((entry) => entry.id === second.request.id)!.alsoAnnouncedBy).toEqual([{ orgId: first.org.id, orgName: first.org.name, status: 'confirmed', amount: 1_000_000 }]);
    // The customers' own list names nobody else.
    const own = await portal(ctx.app, second.owner, { method: 'GET', url: `/api/orgs/${second.org.id}/funding-requests` });
    expect(own.statusCode).toBe(200);
    expect(own.body).not.toContain('alsoAnnouncedBy');
    expect(own.body).not.toContain(first.org.name);
  });

  it('is closed to customers, who cannot confirm their own transfer', async () => {
    const { org, owner, request } = await announced(1_000_000);
    expect((await portal(ctx.app, owner, { method: 'GET', url: '/api/console/funding-requests' })).statusCode).toBe(403);
    const own = await portal(ctx.app, owner, { method: 'POST', url: `/api/console/funding-requests/${request.id}/confirm` });
    expect(own.statusCode).toBe(403);
    expect(await balanceOf(org.id)).toBe(0);
    expect((await portal(ctx.app, undefined, { method: 'GET', url: '/api/console/funding-requests' })).statusCode).toBe(401);
  });
});
