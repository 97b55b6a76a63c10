import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditCsv } from '../../src/console/audit-log.js';
import { lagosDate } from '../../src/portal/billing/calendar.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, operatorUser, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';

let ctx: TestContext;
let operator: PortalUser;

beforeAll(async () => {
  ctx = await buildTestContext({ config: { bank: { bankName: 'Zenith Bank', accountName: 'Vouch Operations Ltd', accountNumber: '1012345678', note: undefined } } });
  operator = await operatorUser(ctx.app, ctx.database.db);
});
afterAll(() => ctx.close());

const get = (url: string, user: PortalUser | undefined = operator) => portal(ctx.app, user, { method: 'GET', url });
const post = (url: string, payload: object, user: PortalUser = operator) => portal(ctx.app, user, { method: 'POST', url, payload });

interface Event {
  id: number;
  action: string;
  orgId: string | null;
  orgName: string | null;
  actor: { kind: string; personId: string | null; name: string | null; email: string | null };
  target: string | null;
  targetPerson: { name: string; email: string } | null;
  before: unknown;
  after: unknown;
}

async function events(query: string): Promise<{ data: Event[]; total: number; totalCapped: boolean }> {
  const res = await get(`/api/console/audit${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** RFC 4180 records (quoted cells may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(cell), (cell = '');
    else if (c === '\r' && text[i + 1] === '\n') row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    else cell += c;
  }
  return rows;
}

describe('who may read the audit log', () => {
  it('answers 401 without a session and 403 to customers, owners included', async () => {
    const { owner } = await portalOrg(ctx.database.db);
    for (const url of ['/api/console/audit', '/api/console/audit/actions', '/api/console/audit.csv']) {
      expect((await portal(ctx.app, undefined, { method: 'GET', url })).statusCode, url).toBe(401);
      const customer = await get(url, owner);
      expect(customer.statusCode, url).toBe(403);
      expect(customer.body).not.toContain('member.');
    }
  });

  it('refuses bad filters with 400', async () => {
    for (const query of ['orgId=nope', 'actorKind=robot', 'action=DROP%20TABLE', 'from=2025-02-30', 'from=2025-03-02&to=2025-03-01', 'limit=0', 'limit=201', 'offset=10001', 'from=yesterday']) {
      const res = await get(`/api/console/audit?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
    }
    expect((await get('/api/console/audit.csv?orgId=nope')).statusCode).toBe(400);
  });
});

describe('the audit log', () => {
  it("names the operator of a console action, and the owner of a portal action, with before → after", async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const colleague = await portalUser(ctx.database.db, { name: 'Kemi Colleague' });
    await addMember(ctx.database.db, org.id, colleague.personId, 'developer');
    expect((await portal(ctx.app, owner, { method: 'PATCH', url: `/api/orgs/${org.id}/members/${colleague.personId}`, payload: { role: 'admin' } })).statusCode).toBe(200);
    expect((await post(`/api/console/organizations/${org.id}/disable`, { reason: 'Chargeback under review' })).statusCode).toBe(200);

    const { data } = await events(`?orgId=${org.id}`);
    expect(data.map((e) => e.action)).toEqual(['access.disabled', 'member.role_changed']);
    const [disabled, roleChanged] = data;
    expect(disabled).toMatchObject({
      orgId: org.id,
      orgName: org.name,
      actor: { kind: 'operator', personId: operator.personId, name: 'Ada Ops', email: operator.email },
      before: { enabled: true },
      after: { enabled: false, reason: 'Chargeback under review' },
    });
    expect(roleChanged).toMatchObject({
      actor: { kind: 'member', personId: owner.personId, email: owner.email },
      target: colleague.personId,
      targetPerson: { name: 'Kemi Colleague', email: colleague.email },
      before: { role: 'developer' },
      after: { role: 'admin' },
    });
  });

  it('filters by organization, actor, action (or a family), days and text, newest first and paged', async () => {
    const first = await portalOrg(ctx.database.db);
    const second = await portalOrg(ctx.database.db);
    const funding = await portal(ctx.app, first.owner, { method: 'POST', url: `/api/orgs/${first.org.id}/funding-requests`, payload: { amount: 500_000, reference: 'AUDIT-FIND-ME' } });
    expect(funding.statusCode, funding.body).toBe(201);
    for (const { org } of [first, second]) {
      expect((await post(`/api/console/organizations/${org.id}/disable`, { reason: `Paused ${org.name}` })).statusCode).toBe(200);
    }

    const mine = await events(`?orgId=${first.org.id}`);
    expect(mine.data.map((e) => e.action)).toEqual(['access.disabled', 'funding.requested']);
    expect(mine.total).toBe(2);
    expect(mine.data[0]!.id).toBeGreaterThan(mine.data[1]!.id);

    const byOperator = await events(`?actorKind=operator&actor=${encodeURIComponent(operator.email.slice(0, 12).toUpperCase())}`);
    expect(byOperator.data.every((e) => e.actor.personId === operator.personId)).toBe(true);
    expect(byOperator.data.map((e) => e.orgId)).toEqual(expect.arrayContaining([first.org.id, second.org.id]));
    expect((await events(`?actor=${encodeURIComponent(first.owner.email)}`)).data.map((e) => e.action)).toEqual(['funding.requested']);

    expect((await events(`?action=funding.requested&orgId=${first.org.id}`)).data).toHaveLength(1);
    expect((await events(`?action=funding.&orgId=${first.org.id}`)).data.map((e) => e.action)).toEqual(['funding.requested']);
    expect((await events(`?action=access.disabled&orgId=${first.org.id}`)).data).toHaveLength(1);
    expect((await events(`?action=access&orgId=${first.org.id}`)).data).toHaveLength(0);

    const found = await events('?q=find-me');
    expect(found.data.map((e) => [e.action, e.target])).toEqual([['funding.requested', 'AUDIT-FIND-ME']]);
    expect((await events('?q=100%25')).data).toEqual([]);

    const today = lagosDate(new Date());
    expect((await events(`?orgId=${first.org.id}&from=${today}&to=${today}`)).total).toBe(2);
    expect((await events(`?orgId=${first.org.id}&to=2020-01-01`)).total).toBe(0);

    const pageOne = await events(`?actorKind=operator&limit=1`);
    const pageTwo = await events(`?actorKind=operator&limit=1&offset=1`);
    expect(pageOne.total).toBeGreaterThanOrEqual(2);
    expect(pageOne.data[0]!.id).toBeGreaterThan(pageTwo.data[0]!.id);

    const actions = (await get('/api/console/audit/actions')).json().data as string[];
    expect(actions).toEqual(expect.arrayContaining(['access.disabled', 'funding.requested', 'operator.created']));
    expect([...actions].sort()).toEqual(actions);
    expect(new Set(actions).size).toBe(actions.length);
  });

  it('exports the filtered log as CSV, quoted, with formula-like text neutralised', async () => {
    const org = await ctx.org({ name: '=HYPERLINK("http://evil.example","Click")' });
    const reason = 'Fraud, "confirmed"\nby phone';
    expect((await post(`/api/console/organizations/${org.id}/disable`, { reason })).statusCode).toBe(200);

    const res = await get(`/api/console/audit.csv?orgId=${org.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="vouch-audit-start-to-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(res.headers['cache-control']).toBe('no-store');
    const rows = parseCsv(res.body);
    expect(rows[0]).toEqual(['id', 'created_at', 'organization_id', 'organization', 'actor_kind', 'actor_name', 'actor_email', 'action', 'target', 'target_person', 'before', 'after']);
    expect(rows).toHaveLength(2);
    const row = rows[1]!;
    expect(row[3]).toBe(`'=HYPERLINK("http://evil.example","Click")`);
    expect(row.slice(4, 8)).toEqual(['operator', 'Ada Ops', operator.email, 'access.disabled']);
    expect(JSON.parse(row[10]!)).toEqual({ enabled: true });
    expect(JSON.parse(row[11]!)).toEqual({ enabled: false, reason });
    expect(res.body).toContain('"\'=HYPERLINK(""http://evil.example"",""Click"")"');

    // Another organization's rows stay out of the filtered export; the whole log holds both.
    const other = await ctx.org();
    await post(`/api/console/organizations/${other.id}/disable`, { reason: 'x' });
    expect(parseCsv((await get(`/api/console/audit.csv?orgId=${org.id}`)).body)).toHaveLength(2);
    const everything = parseCsv((await get('/api/console/audit.csv?action=access.disabled')).body);
    expect(everything.map((r) => r[2])).toEqual(expect.arrayContaining([org.id, other.id]));
  });

  it('reads the export in batches, newest first, without repeating or losing a row', async () => {
    const org = await ctx.org();
    for (let i = 0; i < 7; i++) await post(`/api/console/organizations/${org.id}/disable`, { reason: `r${i}` }).then(() => ctx.database.db.updateTable('organizations').set({ enabled: true }).where('id', '=', org.id).execute());
    const lines: string[] = [];
    for await (const line of auditCsv(ctx.database.db, { orgId: org.id }, 3)) lines.push(line);
    const rows = lines.slice(1).map((line) => parseCsv(line)[0]!);
    expect(rows.map((r) => JSON.parse(r[11]!).reason)).toEqual(['r6', 'r5', 'r4', 'r3', 'r2', 'r1', 'r0']);
  });
});
