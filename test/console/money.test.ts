import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRegistry } from '../../src/identities/registry/import.js';
import { Funding } from '../../src/portal/billing/service.js';
import { listMail } from '../../src/portal/mail.js';
import { recordCircuitClosed, recordCircuitOpened } from '../../src/webhooks/circuits.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, operatorUser, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';

let ctx: TestContext;
let operator: PortalUser;

const LIVE_TIN = { tin: '11112222-0001', taxpayerName: 'OBI VENTURES' };
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  ctx = await buildTestContext();
  operator = await operatorUser(ctx.app, ctx.database.db);
  expect((await importRegistry(ctx.database.db, Readable.from([JSON.stringify({ type: 'tin', record: LIVE_TIN })]))).imported).toBe(1);
});
afterAll(() => ctx.close());

/** As the operator unless told otherwise; null: signed out. */
type As = PortalUser | null;
const get = (url: string, user: As = operator) => portal(ctx.app, user ?? undefined, { method: 'GET', url });
const adjust = (orgId: string, payload: object, user: As = operator) =>
  portal(ctx.app, user ?? undefined, { method: 'POST', url: `/api/console/organizations/${orgId}/adjustments`, payload });
const setPrice = (type: string, payload: object, user: As = operator) => portal(ctx.app, user ?? undefined, { method: 'PUT', url: `/api/console/prices/${type}`, payload });

const balanceOf = async (orgId: string) =>
  Number((await ctx.database.db.selectFrom('organizations').select('balance').where('id', '=', orgId).executeTakeFirstOrThrow()).balance);
const ledgerOf = (orgId: string) => ctx.database.db.selectFrom('ledger_entries').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
const auditOf = (orgId: string, action: string) => ctx.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', orgId).where('action', '=', action).execute();

/** A delivery of the org's mode with its attempts (status codes; null: no answer), as the worker writes them. */
async function delivery(orgId: string, mode: 'test' | 'live', status: 'pending' | 'delivered' | 'failed', attempts: (number | null)[], start: number) {
  // Raw SQL: the payload is beside the point here (and encrypted at rest when written through Kysely).
  const { rows } = await sql<{ id: number }>`
    insert into webhook_deliveries (message_id, org_id, mode, event_type, payload, status, attempts)
    values (${`msg_${Math.random().toString(36).slice(2)}`}, ${orgId}, ${mode}, 'webhook.test', '{}', ${status}, ${attempts.length})
    returning id`.execute(ctx.database.db);
  const row = rows[0]!;
  for (const [i, code] of attempts.entries()) {
    await ctx.database.db
      .insertInto('webhook_attempts')
      .values({ delivery_id: row.id, attempted_at: new Date(start + i * 60_000), status_code: code, latency_ms: 40, error: code === null ? 'connect ECONNREFUSED' : null })
      .execute();
  }
}

describe('organization detail in the console', () => {
  it('shows access, members, secrets without their values, webhook health per mode, usage and balance of that organization only', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 300_000 });
    const developer = await portalUser(ctx.database.db, { name: 'Dayo Developer' });
    await addMember(ctx.database.db, org.id, developer.personId, 'developer');
    const other = await portalOrg(ctx.database.db, { fund: 700_000 });

    // Usage: two test lookups here, one in the other organization.
    for (const secret of [org.testSecret, org.testSecret, other.org.testSecret]) {
      expect((await ctx.app.inject({ method: 'GET', url: '/v1/verifications/identities/tin/23456789-0001', headers: bearer(secret) })).statusCode).toBe(200);
    }
    // The live endpoint has been failing since its last success; test has none set; the other org's is healthy.
    await ctx.database.db.insertInto('webhook_endpoints').values({ org_id: org.id, mode: 'live', url: 'https://hooks.example.com/vouch', secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=' }).execute();
    await ctx.database.db.insertInto('webhook_endpoints').values({ org_id: other.org.id, mode: 'test', url: 'https://other.example.com/hook', secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=' }).execute();
    const t0 = Date.now() - 3_600_000;
    await delivery(org.id, 'live', 'delivered', [200], t0);
    await delivery(org.id, 'live', 'pending', [500, 503], t0 + 10 * 60_000);
    await delivery(org.id, 'live', 'pending', [null], t0 + 20 * 60_000);
    await delivery(other.org.id, 'test', 'delivered', [200], t0);
    // An access request waiting.
    await ctx.database.db.updateTable('organizations').set({ enabled: false }).where('id', '=', org.id).execute();
    const asked = await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/access-requests`, payload: { riskLevel: 'LOW', payloadType: 'HALF', useCase: 'Loans' } });
    expect(asked.statusCode).toBe(201);

    const res = await get(`/api/console/organizations/${org.id}`);
    expect(res.statusCode).toBe(200);
    const detail = res.json();
    expect(detail).toMatchObject({
      id: org.id,
      name: org.name,
      balance: 300_000,
      access: { enabled: false, riskLevel: 'NONE', payloadType: 'FULL', pendingRequest: { status: 'pending', riskLevel: 'LOW', payloadType: 'HALF', useCase: 'Loans' } },
    });
    expect(detail.members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [owner.email, 'owner'],
      [developer.email, 'developer'],
    ]);
    expect(detail.secrets.map((s: { mode: string; status: string }) => [s.mode, s.status]).sort()).toEqual([
      ['live', 'active'],
      ['test', 'active'],
    ]);
    expect(detail.secrets[0]).toEqual({ mode: expect.any(String), hint: expect.any(String), status: 'active', createdAt: expect.any(String), lastUsedAt: null, revokedAt: null });
    // Never a secret's value, not even the test one (which the portal shows its developers).
    expect(res.body).not.toContain(org.testSecret);
    expect(res.body).not.toContain(org.liveSecret);
    expect(res.body).not.toContain('whsec_');

    const [test, live] = detail.webhooks;
    expect(test).toMatchObject({ mode: 'test', url: null, state: 'no_endpoint', backlog: 0, lastSuccessAt: null, lastFailure: null });
    expect(live).toMatchObject({ mode: 'live', url: 'https://hooks.example.com/vouch', state: 'failing', consecutiveFailures: 3, backlog: 2, backlogCapped: false });
    expect(new Date(live.lastSuccessAt).getTime()).toBe(t0);
    expect(new Date(live.failingSince).getTime()).toBe(t0 + 10 * 60_000);
    expect(live.lastFailure).toEqual({ at: new Date(t0 + 20 * 60_000).toISOString(), statusCode: null, error: 'connect ECONNREFUSED' });
    expect(new Date(live.oldestPendingAt).getTime()).toBeGreaterThan(0);

    const [testUsage, liveUsage] = detail.usage;
    expect(testUsage).toMatchObject({ mode: 'test', total: { count: 2, amount: 0 }, types: [{ type: 'tin', count: 2, amount: 0 }] });
    expect(liveUsage).toMatchObject({ mode: 'live', total: { count: 0, amount: 0 }, types: [] });

    // Nothing of the other organization.
    expect(res.body).not.toContain(other.owner.email);
    expect(res.body).not.toContain('other.example.com');
    expect(res.body).not.toContain(other.org.id);
    const otherDetail = (await get(`/api/console/organizations/${other.org.id}`)).json();
    expect(otherDetail.members.map((m: { email: string }) => m.email)).toEqual([other.owner.email]);
    expect(otherDetail.usage[0].total.count).toBe(1);
    expect(otherDetail.webhooks[0]).toMatchObject({ state: 'healthy', consecutiveFailures: 0, backlog: 0 });
    expect(otherDetail.webhooks[1]).toMatchObject({ state: 'no_endpoint' });
  });

  it('shows the circuit a delivery worker opened for the URL, and that it closed', async () => {
    const org = await ctx.org();
    const url = 'https://down.example.com/';
    await ctx.database.db.insertInto('webhook_endpoints').values({ org_id: org.id, mode: 'test', url, secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=' }).execute();
    const start = Date.now() - 3_600_000;
    await delivery(org.id, 'test', 'pending', [500, 500, 500, 500, 500, 500, 500, 500, 500, 502], start);
    const probeAt = new Date(Date.now() + 60_000);
    await recordCircuitOpened(ctx.database.db, { url, probeAt, failures: 10, lastStatusCode: 502, lastError: null });
    const opened = (await get(`/api/console/organizations/${org.id}`)).json().webhooks[0];
    expect(opened).toMatchObject({ state: 'circuit_open', consecutiveFailures: 10, lastSuccessAt: null, lastFailure: { statusCode: 502 }, backlog: 1 });
    expect(opened.circuit).toEqual({ openedAt: expect.any(String), probeAt: probeAt.toISOString() });
    expect(opened.failingSince).toBe(opened.circuit.openedAt);

    await recordCircuitClosed(ctx.database.db, url);
    const closed = (await get(`/api/console/organizations/${org.id}`)).json().webhooks[0];
    expect(closed).toMatchObject({ state: 'failing', circuit: null, consecutiveFailures: 10 });
    expect(new Date(closed.failingSince).getTime()).toBe(start);
  });

  it('is 404 for an unknown organization and closed to customers and the signed out', async () => {
    expect((await get(`/api/console/organizations/${UNKNOWN}`)).statusCode).toBe(404);
    expect((await get('/api/console/organizations/not-an-id')).json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    expect((await get(`/api/console/organizations/${UNKNOWN}/ledger`)).statusCode).toBe(404);
    expect((await get(`/api/console/organizations/${UNKNOWN}/ledger.csv`)).statusCode).toBe(404);
    expect((await adjust(UNKNOWN, { direction: 'credit', amount: 100, reason: 'x' })).statusCode).toBe(404);
    expect((await adjust('nope', { direction: 'credit', amount: 100, reason: 'x' })).statusCode).toBe(404);

    const { org, owner } = await portalOrg(ctx.database.db);
    for (const user of [owner, null]) {
      const expected = user ? 403 : 401;
      expect((await get(`/api/console/organizations/${org.id}`, user)).statusCode).toBe(expected);
      expect((await get(`/api/console/organizations/${org.id}/ledger`, user)).statusCode).toBe(expected);
      expect((await get(`/api/console/organizations/${org.id}/ledger.csv`, user)).statusCode).toBe(expected);
      expect((await adjust(org.id, { direction: 'credit', amount: 100_000, reason: 'free money' }, user)).statusCode).toBe(expected);
      expect((await get('/api/console/prices', user)).statusCode).toBe(expected);
      expect((await setPrice('tin', { amount: 1 }, user)).statusCode).toBe(expected);
    }
    expect(await balanceOf(org.id)).toBe(100_000);
    expect((await ledgerOf(org.id)).length).toBe(1);
  });
});

describe('money in the console', () => {
  it('credits a wallet with a reason: one ledger row naming the operator, the audit row, the owners mailed; the customer sees it', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 50_000 });
    const res = await adjust(org.id, { direction: 'credit', amount: 1_250_050, reason: '  Goodwill for the outage of 3 March  ' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.balance).toBe(1_300_050);
    expect(body.entry).toMatchObject({
      kind: 'credit',
      amount: 1_250_050,
      balanceAfter: 1_300_050,
      description: 'Credit by your account manager: Goodwill for the outage of 3 March',
      operator: { id: operator.personId, email: operator.email, name: 'Ada Ops' },
    });
    expect(await balanceOf(org.id)).toBe(1_300_050);
    const rows = await ledgerOf(org.id);
    expect(rows.at(-1)).toMatchObject({ kind: 'credit', actor_person_id: operator.personId });
    expect(rows[0]).toMatchObject({ actor_person_id: null });
    const audit = await auditOf(org.id, 'wallet.credited');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor_kind: 'operator',
      actor_id: operator.personId,
      before: { balance: 50_000 },
      after: { balance: 1_300_050, amount: 1_250_050, reason: 'Goodwill for the outage of 3 March', ledgerEntryId: body.entry.id },
    });
    const mails = await listMail(ctx.database.db, { to: owner.email });
    expect(mails.find((m) => m.kind === 'wallet_credited')?.text).toContain('Goodwill for the outage of 3 March');

    // The console's ledger names the operator; the customer's shows the row, never who.
    const consoleLedger = (await get(`/api/console/organizations/${org.id}/ledger?limit=1`)).json();
    expect(consoleLedger).toMatchObject({ total: 2, data: [{ id: body.entry.id, operator: { email: operator.email } }] });
    const customer = await get(`/api/orgs/${org.id}/ledger`, owner);
    expect(customer.json().data[0]).toEqual({
      id: body.entry.id,
      kind: 'credit',
      amount: 1_250_050,
      balanceAfter: 1_300_050,
      description: 'Credit by your account manager: Goodwill for the outage of 3 March',
      createdAt: expect.any(String),
    });
    expect(customer.body).not.toContain(operator.email);
    const csv = await get(`/api/console/organizations/${org.id}/ledger.csv`);
    expect(csv.statusCode).toBe(200);
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('id,created_at,date,kind,description,amount_naira,amount_kobo,balance_after_naira,balance_after_kobo,operator');
    expect(lines[2]).toMatch(new RegExp(`,credit,Credit by your account manager: Goodwill for the outage of 3 March,12500\\.50,1250050,13000\\.50,1300050,${operator.email}$`));
    expect(lines[1]).toMatch(/,initial funding,500\.00,50000,500\.00,50000,$/);
  });

  it('debits within the balance as a debit row; beyond it answers 409 and writes nothing, no ledger row and no audit row', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 100_000 });
    const beyond = await adjust(org.id, { direction: 'debit', amount: 100_001, reason: 'Transfer VCH-ABC123 credited twice' });
    expect(beyond.statusCode).toBe(409);
    expect(beyond.json()).toMatchObject({ status: 'error', code: 'CONFLICT' });
    expect(beyond.json().message).toMatch(/below zero.*Debit at most ₦1,000\.00/);
    expect(await balanceOf(org.id)).toBe(100_000);
    expect(await ledgerOf(org.id)).toHaveLength(1);
    expect(await auditOf(org.id, 'wallet.debited')).toHaveLength(0);

    const res = await adjust(org.id, { direction: 'debit', amount: 100_000, reason: 'Transfer VCH-ABC123 credited twice' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ balance: 0, entry: { kind: 'debit', amount: -100_000, balanceAfter: 0, operator: { id: operator.personId } } });
    expect(await balanceOf(org.id)).toBe(0);
    expect((await ledgerOf(org.id)).at(-1)).toMatchObject({ kind: 'debit', actor_person_id: operator.personId });
    expect(await auditOf(org.id, 'wallet.debited')).toEqual([
      expect.objectContaining({ actor_kind: 'operator', actor_id: operator.personId, before: { balance: 100_000 }, after: expect.objectContaining({ balance: 0, amount: -100_000 }) }),
    ]);
    expect((await adjust(org.id, { direction: 'debit', amount: 1, reason: 'again' })).statusCode).toBe(409);

    // The customer's ledger, its kind filter and CSV know debits.
    const debits = (await get(`/api/orgs/${org.id}/ledger?kind=debit`, owner)).json();
    expect(debits.data).toEqual([expect.objectContaining({ kind: 'debit', amount: -100_000, description: 'Debit by your account manager: Transfer VCH-ABC123 credited twice' })]);
    const csv = await get(`/api/orgs/${org.id}/ledger.csv`, owner);
    expect(csv.body).toMatch(/,debit,Debit by your account manager: Transfer VCH-ABC123 credited twice,-1000\.00,-100000,0\.00,0\r\n$/);
    expect(csv.body).not.toContain(operator.email);
  });

  it('refuses bad adjustments in style A', async () => {
    const org = await ctx.org({ fund: 10_000 });
    const bad = [
      { direction: 'credit', amount: 100 },
      { direction: 'credit', amount: 100, reason: '' },
      { direction: 'credit', amount: 100, reason: '   ' },
      { direction: 'credit', amount: 100, reason: 'x'.repeat(501) },
      { direction: 'credit', amount: 0, reason: 'zero' },
      { direction: 'debit', amount: -5, reason: 'negative' },
      { direction: 'credit', amount: 10.5, reason: 'half a kobo' },
      { direction: 'credit', amount: 10_000_000_001, reason: 'too much' },
      { direction: 'refund', amount: 100, reason: 'not a direction' },
      { amount: 100, reason: 'no direction' },
    ];
    for (const payload of bad) {
      const res = await adjust(org.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
    }
    expect(await balanceOf(org.id)).toBe(10_000);
    expect(await ledgerOf(org.id)).toHaveLength(1);
  });

  it('a confirmed funding names its operator on the ledger row', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 0 });
    const request = await new Funding(ctx.database.db).request(org.id, { amount: 500_000 }, { kind: 'member', personId: owner.personId });
    expect((await portal(ctx.app, operator, { method: 'POST', url: `/api/console/funding-requests/${request.id}/confirm` })).statusCode).toBe(200);
    const rows = await ledgerOf(org.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'credit', actor_person_id: operator.personId, description: `Bank transfer ${request.reference}` });
    expect((await get(`/api/console/organizations/${org.id}/ledger`)).json().data[0].operator).toMatchObject({ email: operator.email });
  });
});

describe('prices in the console', () => {
  it('lists every check with its price and default; a change is audited and the next live lookup is charged it', async () => {
    const list = await get('/api/console/prices');
    expect(list.statusCode).toBe(200);
    const tin = list.json().data.find((p: { type: string }) => p.type === 'tin');
    expect(tin).toEqual({ type: 'tin', label: 'TIN lookup', amount: 5_000, custom: false, defaultPrice: 5_000 });
    expect(list.json().data.map((p: { type: string }) => p.type)).toEqual(expect.arrayContaining(['bvn_basic', 'nin', 'cac', 'address', 'guarantor']));

    const res = await setPrice('tin', { amount: 7_250 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ type: 'tin', label: 'TIN lookup', amount: 7_250, custom: true, defaultPrice: 5_000, before: 5_000 });
    const audit = await ctx.database.db.selectFrom('audit_events').selectAll().where('action', '=', 'price.set').where('target', '=', 'tin').execute();
    expect(audit).toEqual([
      expect.objectContaining({ org_id: null, actor_kind: 'operator', actor_id: operator.personId, before: { amount: 5_000, custom: false }, after: { amount: 7_250 } }),
    ]);
    expect((await get('/api/console/prices')).json().data.find((p: { type: string }) => p.type === 'tin')).toMatchObject({ amount: 7_250, custom: true });

    const org = await ctx.org({ fund: 100_000 });
    const lookup = await ctx.app.inject({ method: 'GET', url: `/v1/verifications/identities/tin/${LIVE_TIN.tin}`, headers: bearer(org.liveSecret) });
    expect(lookup.statusCode).toBe(200);
    expect(await balanceOf(org.id)).toBe(100_000 - 7_250);
    expect((await ledgerOf(org.id)).at(-1)).toMatchObject({ kind: 'charge', amount: -7_250, actor_person_id: null });

    // Back to the default, the change audited with its before.
    expect((await setPrice('tin', { amount: 5_000 })).json()).toMatchObject({ before: 7_250, amount: 5_000 });
  });

  it('refuses an unknown type (404) and a bad amount (400)', async () => {
    expect((await setPrice('bogus', { amount: 100 })).statusCode).toBe(404);
    for (const payload of [{ amount: -1 }, { amount: 1.5 }, { amount: 100_000_001 }, {}, { amount: 'a hundred' }]) {
      const res = await setPrice('nin', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
    }
    expect((await get('/api/console/prices')).json().data.find((p: { type: string }) => p.type === 'nin')).toMatchObject({ custom: false });
    expect((await setPrice('nin', { amount: 0 })).json()).toMatchObject({ amount: 0, custom: true });
  });
});
