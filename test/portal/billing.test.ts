import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { chargeUsage, recordUsage, refund, setPrice } from '../../src/platform/billing.js';
import { ApiError } from '../../src/platform/errors.js';
import { addDays, lagosDate, startOfDay } from '../../src/portal/billing/calendar.js';
import { csvCell, naira } from '../../src/portal/billing/csv.js';
import { ledgerCsv } from '../../src/portal/billing/ledger.js';
import { UsageCounter } from '../../src/portal/billing/usage.js';
import { Funding, MAX_PENDING } from '../../src/portal/billing/service.js';
import { listMail, PeopleMail } from '../../src/portal/mail.js';
import { bearer, buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';

const BANK = { bankName: 'Zenith Bank', accountName: 'Vouch Operations Ltd', accountNumber: '1012345678', note: 'Transfers after 4 pm are credited the next working day.' };
const BANK_VIEW = { ...BANK };

let ctx: TestContext;
/** The same database served by an app whose operator has not configured bank details. */
let unconfigured: FastifyInstance;
let funding: Funding;
beforeAll(async () => {
  ctx = await buildTestContext({ config: { bank: BANK } });
  unconfigured = await buildApp({ config: testConfig({ bank: undefined }), database: ctx.database, logStream: new Writable({ write: (_c, _e, done) => done() }) });
  await unconfigured.ready();
  const quiet = { info: () => undefined, error: () => undefined } as unknown as ConstructorParameters<typeof PeopleMail>[2];
  funding = new Funding(ctx.database.db, { mail: new PeopleMail(ctx.database.db, testConfig(), quiet), publicUrl: 'http://127.0.0.1:8080' });
});
afterAll(async () => {
  await unconfigured?.close();
  await ctx.close();
});

const get = (user: PortalUser | undefined, url: string) => portal(ctx.app, user, { method: 'GET', url });
const announce = (user: PortalUser, orgId: string, payload: object) => portal(ctx.app, user, { method: 'POST', url: `/api/orgs/${orgId}/funding-requests`, payload });
const withdraw = (user: PortalUser, orgId: string, id: string) => portal(ctx.app, user, { method: 'DELETE', url: `/api/orgs/${orgId}/funding-requests/${id}` });
const balanceOf = async (orgId: string) => (await ctx.accounts.get(orgId)).balance;

/** Moves a ledger row or usage event to a given instant (history the tests need). */
async function backdate(table: 'ledger_entries' | 'usage_events', id: number, at: Date): Promise<void> {
  await sql`update ${sql.table(table)} set created_at = ${at} where id = ${id}`.execute(ctx.database.db);
}

describe('every billing route', () => {
  const reads = ['billing', 'ledger', 'ledger.csv', 'prices', 'usage', 'funding-requests'];

  it('needs a session (401), a membership (404 for another organization and for nonsense ids)', async () => {
    const { org } = await portalOrg(ctx.database.db);
    const stranger = await portalOrg(ctx.database.db);
    for (const path of reads) {
      expect((await get(undefined, `/api/orgs/${org.id}/${path}`)).statusCode, path).toBe(401);
      expect((await get(stranger.owner, `/api/orgs/${org.id}/${path}`)).statusCode, path).toBe(404);
      expect((await get(stranger.owner, `/api/orgs/not-a-uuid/${path}`)).statusCode, path).toBe(404);
    }
    expect((await portal(ctx.app, undefined, { method: 'POST', url: `/api/orgs/${org.id}/funding-requests`, payload: { amount: 100_000 } })).statusCode).toBe(401);
    expect((await announce(stranger.owner, org.id, { amount: 100_000 })).statusCode).toBe(404);
  });

  it('lets viewers and developers read everything but not fund or withdraw (403); admins fund', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const made = (await announce(owner, org.id, { amount: 200_000 })).json().request;
    for (const role of ['viewer', 'developer'] as const) {
      const member = await portalUser(ctx.database.db);
      await addMember(ctx.database.db, org.id, member.personId, role);
      for (const path of reads) expect((await get(member, `/api/orgs/${org.id}/${path}`)).statusCode, `${role} ${path}`).toBe(200);
      const refused = await announce(member, org.id, { amount: 100_000 });
      expect(refused.statusCode, role).toBe(403);
      expect(refused.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN', message: expect.stringMatching(/ask an owner or admin/) });
      expect((await withdraw(member, org.id, made.id)).statusCode, role).toBe(403);
    }
    const admin = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, admin.personId, 'admin');
    expect((await announce(admin, org.id, { amount: 100_000 })).statusCode).toBe(201);
  });

  it('refuses a forged cross-site request before anything else', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const res = await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/funding-requests`, payload: { amount: 100_000 }, headers: { origin: 'https://evil.example' } });
    expect(res.statusCode).toBe(403);
    expect((await get(owner, `/api/orgs/${org.id}/funding-requests`)).json().total).toBe(0);
  });
});

describe('the wallet', () => {
  it('shows the balance in kobo, NGN, whether live calls are enabled, pending transfers and the bank details', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 500_000 });
    await ctx.accounts.fund(org.id, 250_000);
    expect((await get(owner, `/api/orgs/${org.id}/billing`)).json()).toEqual({ balance: 750_000, currency: 'NGN', enabled: true, pendingFunding: 0, bank: BANK_VIEW });

    await announce(owner, org.id, { amount: 300_000 });
    const second = (await announce(owner, org.id, { amount: 100_000 })).json().request;
    const third = (await announce(owner, org.id, { amount: 700_000 })).json().request;
    await withdraw(owner, org.id, second.id);
    await funding.confirm(third.id, { kind: 'cli' });
    expect((await get(owner, `/api/orgs/${org.id}/billing`)).json()).toMatchObject({ balance: 1_450_000, pendingFunding: 300_000 });

    const disabled = await portalOrg(ctx.database.db, { enabled: false, fund: 0 });
    expect((await get(disabled.owner, `/api/orgs/${disabled.org.id}/billing`)).json()).toMatchObject({ balance: 0, enabled: false });
  });

  it('says null for the bank when the operator has not configured it, and refuses funding requests then (409)', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    expect((await portal(unconfigured, owner, { method: 'GET', url: `/api/orgs/${org.id}/billing` })).json().bank).toBeNull();
    const res = await portal(unconfigured, owner, { method: 'POST', url: `/api/orgs/${org.id}/funding-requests`, payload: { amount: 100_000 } });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toMatch(/not configured its bank details yet; ask your account manager/);
  });
});

describe('the ledger', () => {
  it('lists fundings, charges and refunds newest first, paged, with a total, filtered by kind', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 500_000 });
    await ctx.accounts.fund(org.id, 250_000);
    await chargeUsage(ctx.database.db, { orgId: org.id, mode: 'live', billable: { type: 'nin', defaultPrice: 5_000 }, subject: '123******01' });
    await refund(ctx.database.db, org.id, 5_000, 'refund of nin 123******01');
    // A test call is never charged: no ledger row.
    await ctx.app.inject({ method: 'GET', url: '/v1/verifications/identities/tin/23456789-0001', headers: bearer(org.testSecret) });

    const all = (await get(owner, `/api/orgs/${org.id}/ledger`)).json();
    expect(all).toMatchObject({ total: 4, limit: 20, offset: 0 });
    expect(all.data.map((e: { kind: string; amount: number; balanceAfter: number }) => [e.kind, e.amount, e.balanceAfter])).toEqual([
      ['refund', 5_000, 750_000],
      ['charge', -5_000, 745_000],
      ['credit', 250_000, 750_000],
      ['credit', 500_000, 500_000],
    ]);
    expect(all.data[0]).toEqual({ id: expect.any(Number), kind: 'refund', amount: 5_000, balanceAfter: 750_000, description: 'refund of nin 123******01', createdAt: expect.stringMatching(/Z$/) });

    const page2 = (await get(owner, `/api/orgs/${org.id}/ledger?limit=3&offset=3`)).json();
    expect(page2).toMatchObject({ total: 4, limit: 3, offset: 3, data: [{ kind: 'credit', amount: 500_000, description: 'initial funding' }] });
    expect((await get(owner, `/api/orgs/${org.id}/ledger?offset=10`)).json()).toMatchObject({ total: 4, data: [] });

    for (const [kind, amounts] of [['credit', [250_000, 500_000]], ['charge', [-5_000]], ['refund', [5_000]]] as const) {
      const res = (await get(owner, `/api/orgs/${org.id}/ledger?kind=${kind}`)).json();
      expect(res.data.map((e: { amount: number }) => e.amount), kind).toEqual(amounts);
      expect(res.total).toBe(amounts.length);
    }
  });

  it('filters by Lagos calendar days, both ends included', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 100_000 });
    const ids: number[] = [];
    for (const amount of [1, 2, 3, 4]) {
      await ctx.accounts.fund(org.id, amount * 100_000);
    }
    const rows = await ctx.database.db.selectFrom('ledger_entries').select('id').where('org_id', '=', org.id).orderBy('id').execute();
    ids.push(...rows.map((r) => Number(r.id)));
    // 2024-03-09 23:30 UTC is 2024-03-10 00:30 in Lagos; 2024-03-10 23:30 UTC is already the 11th there.
    await backdate('ledger_entries', ids[0]!, new Date('2024-03-09T22:59:59Z'));
    await backdate('ledger_entries', ids[1]!, new Date('2024-03-09T23:30:00Z'));
    await backdate('ledger_entries', ids[2]!, new Date('2024-03-10T22:59:59Z'));
    await backdate('ledger_entries', ids[3]!, new Date('2024-03-10T23:30:00Z'));
    const within = (from: string, to: string) => get(owner, `/api/orgs/${org.id}/ledger?from=${from}&to=${to}`).then((r) => r.json().data.map((e: { id: number }) => e.id));
    expect(await within('2024-03-10', '2024-03-10')).toEqual([ids[2], ids[1]]);
    expect(await within('2024-03-09', '2024-03-11')).toEqual([ids[3], ids[2], ids[1], ids[0]]);
    expect((await get(owner, `/api/orgs/${org.id}/ledger?from=2024-03-11`)).json().data.map((e: { id: number }) => e.id)).toEqual([ids[4], ids[3]]);
    expect((await get(owner, `/api/orgs/${org.id}/ledger?to=2024-03-09`)).json().data.map((e: { id: number }) => e.id)).toEqual([ids[0]]);
  });

  it('answers 400 with a message for bad filters and pages', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    for (const query of ['kind=gift', 'limit=0', 'limit=101', 'limit=ten', 'offset=-1', 'from=yesterday', 'from=2025-02-30', 'to=2025-13-01', 'from=2025-03-02&to=2025-03-01']) {
      const res = await get(owner, `/api/orgs/${org.id}/ledger?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ status: 'error', message: expect.any(String) });
    }
    expect((await get(owner, `/api/orgs/${org.id}/ledger?from=2025-03-02&to=2025-03-01`)).json().message).toBe('from (2025-03-02) must not be after to (2025-03-01)');
  });
});

describe('the CSV export', () => {
  it('downloads the ledger oldest first with naira and kobo, RFC 4180 quoting and formula cells defused', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 123_456 });
    await chargeUsage(ctx.database.db, { orgId: org.id, mode: 'live', billable: { type: 'nin', defaultPrice: 5_050 }, subject: '123******01' });
    await ctx.accounts.fund(org.id, 100);
    const [first, second, third] = await ctx.database.db.selectFrom('ledger_entries').select('id').where('org_id', '=', org.id).orderBy('id').execute();
    await ctx.database.db.updateTable('ledger_entries').set({ description: '=HYPERLINK("http://x"), "quoted"' }).where('id', '=', first!.id).execute();
    await ctx.database.db.updateTable('ledger_entries').set({ description: '@SUM(A1)\nsecond line' }).where('id', '=', third!.id).execute();

    const res = await get(owner, `/api/orgs/${org.id}/ledger.csv`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="vouch-ledger-start-to-\d{4}-\d\d-\d\d\.csv"$/);
    expect(res.body.endsWith('\r\n')).toBe(true);
    const records = res.body.split('\r\n');
    expect(records[0]).toBe('id,created_at,date,kind,description,amount_naira,amount_kobo,balance_after_naira,balance_after_kobo');
    const at = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z,\d{4}-\d\d-\d\d`;
    expect(records[1]).toMatch(new RegExp(`^${first!.id},${at},credit,"'=HYPERLINK\\(""http://x""\\), ""quoted""",1234\\.56,123456,1234\\.56,123456$`));
    // A charge is a negative number, not a formula: no apostrophe.
    expect(records[2]).toMatch(new RegExp(`^${second!.id},${at},charge,nin 123\\*{6}01,-50\\.50,-5050,1184\\.06,118406$`));
    // A line break inside a cell stays inside its quotes.
    expect(records[3]).toMatch(new RegExp(`^${third!.id},${at},credit,"'@SUM\\(A1\\)\nsecond line",1\\.00,100,1185\\.06,118506$`));
    expect(records.slice(4)).toEqual(['']);
  });

  it('exports one kind and a range of days, with the range in the file name; refuses a bad range', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 100_000 });
    await chargeUsage(ctx.database.db, { orgId: org.id, mode: 'live', billable: { type: 'tin', defaultPrice: 5_000 }, subject: '234******01' });
    const today = lagosDate(new Date());
    const charges = await get(owner, `/api/orgs/${org.id}/ledger.csv?kind=charge&from=${today}&to=${today}`);
    expect(charges.headers['content-disposition']).toBe(`attachment; filename="vouch-ledger-${today}-to-${today}.csv"`);
    expect(charges.body.trim().split('\r\n').map((line) => line.split(',')[3])).toEqual(['kind', 'charge']);
    expect((await get(owner, `/api/orgs/${org.id}/ledger.csv?from=2001-01-01&to=2001-01-31`)).body.trim().split('\r\n')).toHaveLength(1);
    for (const query of ['from=yesterday', 'to=2024-02-30', 'from=2024-02-02&to=2024-02-01', 'kind=gift']) {
      expect((await get(owner, `/api/orgs/${org.id}/ledger.csv?${query}`)).statusCode, query).toBe(400);
    }
  });

  it('reads a long ledger in batches by id and writes every row once, in order', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 0 });
    await sql`
      insert into ledger_entries (org_id, kind, amount, balance_after, description)
      select ${org.id}::uuid, 'credit', 100, g * 100, 'row ' || g from generate_series(1, 2500) g`.execute(ctx.database.db);
    const res = await get(owner, `/api/orgs/${org.id}/ledger.csv`);
    const lines = res.body.trim().split('\r\n').slice(1);
    expect(lines).toHaveLength(2500);
    expect(lines.map((line) => line.split(',')[4])).toEqual(Array.from({ length: 2500 }, (_, i) => `row ${i + 1}`));
    const ids = lines.map((line) => Number(line.split(',')[0]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    // The generator itself, with batches smaller than the ledger: no row lost or repeated at the seams.
    const chunks: string[] = [];
    for await (const line of ledgerCsv(ctx.database.db, { orgId: org.id }, 7)) chunks.push(line);
    expect(chunks.slice(1).join('')).toBe(`${lines.join('\r\n')}\r\n`);
  });

  it('writes cells as RFC 4180 and spreadsheets want them', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('+234 803')).toBe("'+234 803");
    expect(csvCell('@cmd')).toBe("'@cmd");
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('\t=1')).toBe("'\t=1");
    expect(csvCell('-50.00')).toBe('-50.00');
    expect(csvCell(-5)).toBe('-5');
    expect(naira(0)).toBe('0.00');
    expect(naira(5)).toBe('0.05');
    expect(naira(-123_456)).toBe('-1234.56');
    expect(naira(10_000_000_000)).toBe('100000000.00');
  });
});

describe('prices', () => {
  it('lists every check with its label and the price in force: the default, or the operator\'s override', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const before = (await get(owner, `/api/orgs/${org.id}/prices`)).json().data;
    expect(before).toContainEqual({ type: 'bvn_basic', label: 'BVN lookup (basic)', amount: 2_500, custom: false });
    expect(before.map((p: { type: string }) => p.type)).toEqual([
      'bvn_basic', 'bvn_premium', 'bvn_match', 'nin', 'nin_phone', 'vnin', 'drivers_license', 'vin', 'cac', 'tin', 'biometrics',
      'address', 'address_marketplace', 'business', 'guarantor', 'employment', 'session', 'screening', 'screening_monitoring',
    ]);
    await setPrice(ctx.database.db, 'cac', 12_345);
    try {
      const after = (await get(owner, `/api/orgs/${org.id}/prices`)).json().data;
      expect(after).toContainEqual({ type: 'cac', label: 'CAC business registry lookup', amount: 12_345, custom: true });
      expect(after.find((p: { type: string }) => p.type === 'tin')).toMatchObject({ amount: 5_000, custom: false });
    } finally {
      await ctx.database.db.deleteFrom('prices').where('type', '=', 'cac').execute();
    }
  });
});

describe('usage', () => {
  const today = () => lagosDate(new Date());

  it('counts checks and kobo per day and type for the last 30 days, with zeros for quiet days', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 10_000_000 });
    const nin = { type: 'nin', defaultPrice: 5_000 };
    await chargeUsage(ctx.database.db, { orgId: org.id, mode: 'live', billable: nin, subject: '123******01' });
    await chargeUsage(ctx.database.db, { orgId: org.id, mode: 'live', billable: nin, subject: '123******02' });
    await recordUsage(ctx.database.db, { orgId: org.id, mode: 'live', billable: nin, subject: '123******03' }, 'not_found');
    await chargeUsage(ctx.database.db, { orgId: org.id, mode: 'live', billable: { type: 'address', defaultPrice: 150_000 }, subject: 'reference a1' });
    // Refused for want of funds: not usage.
    await recordUsage(ctx.database.db, { orgId: org.id, mode: 'live', billable: nin, subject: '123******04' }, 'insufficient_funds');
    // Test calls and another organization's calls are elsewhere.
    await chargeUsage(ctx.database.db, { orgId: org.id, mode: 'test', billable: nin, subject: '123******05' });
    const other = await portalOrg(ctx.database.db, { fund: 1_000_000 });
    await chargeUsage(ctx.database.db, { orgId: other.org.id, mode: 'live', billable: nin, subject: '123******06' });

    const usage = (await get(owner, `/api/orgs/${org.id}/usage?mode=live`)).json();
    expect(usage).toMatchObject({ mode: 'live', to: today(), from: addDays(today(), -29), total: { count: 4, amount: 160_000 } });
    expect(usage.days).toHaveLength(30);
    expect(usage.days.map((d: { date: string }) => d.date)).toEqual(Array.from({ length: 30 }, (_, i) => addDays(today(), i - 29)));
    expect(usage.days.at(-1)).toEqual({ date: today(), count: 4, amount: 160_000, byType: { nin: { count: 3, amount: 10_000 }, address: { count: 1, amount: 150_000 } } });
    for (const day of usage.days.slice(0, -1)) expect(day).toEqual({ date: day.date, count: 0, amount: 0, byType: {} });
    expect(usage.types).toEqual([
      { type: 'nin', label: 'NIN lookup', count: 3, amount: 10_000 },
      { type: 'address', label: 'Address verification', count: 1, amount: 150_000 },
    ]);

    const test = (await get(owner, `/api/orgs/${org.id}/usage`)).json();
    expect(test).toMatchObject({ mode: 'test', total: { count: 1, amount: 0 }, types: [{ type: 'nin', count: 1, amount: 0 }] });
  });

  it('puts each check on its Lagos calendar day and keeps the window to the days asked', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const midnight = startOfDay(today());
    const at = async (when: Date) => {
      const id = await recordUsage(ctx.database.db, { orgId: org.id, mode: 'test', billable: { type: 'tin', defaultPrice: 5_000 }, subject: 'x' }, 'success');
      await backdate('usage_events', id, when);
    };
    await at(midnight); // the first instant of today
    await at(new Date(midnight.getTime() - 1)); // the last of yesterday
    await at(new Date(startOfDay(addDays(today(), -6)).getTime())); // first instant of the 7th day back
    await at(new Date(startOfDay(addDays(today(), -6)).getTime() - 1)); // just outside 7 days
    await at(new Date(startOfDay(addDays(today(), -90)).getTime())); // outside even 90 days

    const week = (await get(owner, `/api/orgs/${org.id}/usage?days=7`)).json();
    expect(week.days).toHaveLength(7);
    expect(week.days.map((d: { count: number }) => d.count)).toEqual([1, 0, 0, 0, 0, 1, 1]);
    expect(week.total.count).toBe(3);
    expect((await get(owner, `/api/orgs/${org.id}/usage?days=1`)).json().days).toEqual([{ date: today(), count: 1, amount: 0, byType: { tin: { count: 1, amount: 0 } } }]);
    const ninety = (await get(owner, `/api/orgs/${org.id}/usage?days=90`)).json();
    expect(ninety.days).toHaveLength(90);
    expect(ninety.total.count).toBe(4);
  });

  it('counts a past day once per process and today on every request; a day just ended is still counted fresh', async () => {
    const { org } = await portalOrg(ctx.database.db);
    const scope = { orgId: org.id, mode: 'test' as const };
    const add = async (when: Date) => {
      const id = await recordUsage(ctx.database.db, { orgId: org.id, mode: 'test', billable: { type: 'nin', defaultPrice: 5_000 }, subject: 'x' }, 'success');
      await backdate('usage_events', id, when);
    };
    const counter = new UsageCounter(ctx.database.db);
    const today = lagosDate(new Date());
    const noon = new Date(startOfDay(today).getTime() + 12 * 3_600_000);
    await add(new Date(startOfDay(addDays(today, -3)).getTime() + 60_000));
    await add(noon);
    const first = await counter.report(scope, 7, noon);
    expect(first.days.map((d) => d.count)).toEqual([0, 0, 0, 1, 0, 0, 1]);

    // Today is counted on every request.
    await add(new Date(noon.getTime() - 1_000));
    expect((await counter.report(scope, 7, noon)).days.map((d) => d.count)).toEqual([0, 0, 0, 1, 0, 0, 2]);
    // A past day is not counted again (usage rows are only appended; this one is planted).
    await add(new Date(startOfDay(addDays(today, -3)).getTime() + 120_000));
    expect((await counter.report(scope, 7, noon)).days.map((d) => d.count)).toEqual([0, 0, 0, 1, 0, 0, 2]);
    // A wider window counts the older days it has not seen, and sees the planted row too.
    expect((await counter.report(scope, 30, noon)).days.slice(-7).map((d) => d.count)).toEqual([0, 0, 0, 2, 0, 0, 2]);

    // Five minutes after midnight, yesterday is over but not settled: a late row still counts.
    const justAfter = new Date(startOfDay(today).getTime() + 5 * 60_000);
    const early = new UsageCounter(ctx.database.db);
    const before = (await early.report(scope, 2, justAfter)).days[0]!.count;
    await add(new Date(startOfDay(today).getTime() - 1));
    expect((await early.report(scope, 2, justAfter)).days[0]!.count).toBe(before + 1);
  });

  it('answers 400 for days outside 1..90 and an unknown mode', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    for (const query of ['days=0', 'days=91', 'days=7.5', 'days=week', 'mode=prod']) {
      expect((await get(owner, `/api/orgs/${org.id}/usage?${query}`)).statusCode, query).toBe(400);
    }
  });
});

describe('funding requests', () => {
  it('announces a transfer with a generated reference and answers the bank instructions', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 0 });
    const made = await announce(owner, org.id, { amount: 5_000_000 });
    expect(made.statusCode).toBe(201);
    const { request, instructions } = made.json();
    expect(request).toEqual({
      id: expect.any(String),
      amount: 5_000_000,
      reference: expect.stringMatching(/^VCH-[A-HJ-NP-Z2-9]{6}$/),
      status: 'pending',
      reason: null,
      requestedBy: 'Test Person',
      createdAt: expect.any(String),
      decidedAt: null,
    });
    expect(instructions).toEqual({ amount: 5_000_000, reference: request.reference, bank: BANK_VIEW });
    const audit = await ctx.database.db.selectFrom('audit_events').select(['action', 'actor_kind', 'actor_id', 'target']).where('org_id', '=', org.id).execute();
    expect(audit).toEqual([{ action: 'funding.requested', actor_kind: 'member', actor_id: owner.personId, target: request.reference }]);
  });

  it('takes the customer\'s own reference, normalised, once while it stands', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 0 });
    const mine = await announce(owner, org.id, { amount: 150_000, reference: '  inv 2024/07-a ' });
    expect(mine.statusCode).toBe(201);
    expect(mine.json().request.reference).toBe('INV 2024/07-A');
    const again = await announce(owner, org.id, { amount: 150_000, reference: 'INV 2024/07-A' });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toMatch(/already announced/);
    // Another organization may use the same words.
    const other = await portalOrg(ctx.database.db);
    expect((await announce(other.owner, other.org.id, { amount: 150_000, reference: 'INV 2024/07-A' })).statusCode).toBe(201);
    // Once the first is rejected, the reference is free again.
    await funding.reject(mine.json().request.id, 'Nothing arrived', { kind: 'cli' });
    expect((await announce(owner, org.id, { amount: 150_000, reference: 'inv 2024/07-a' })).statusCode).toBe(201);
  });

  it('answers 400 for amounts and references it cannot take', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    for (const payload of [{ amount: 99_999 }, { amount: 0 }, { amount: -5 }, { amount: 1.5 }, { amount: '1000' }, { amount: 10_000_000_001 }, {}, { amount: null }]) {
      const res = await announce(owner, org.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message, JSON.stringify(payload)).toMatch(/amount/);
    }
    for (const reference of ['AB', '=HYPERLINK(1)', 'x'.repeat(31), '', 'naïve']) {
      expect((await announce(owner, org.id, { amount: 100_000, reference })).statusCode, reference).toBe(400);
    }
    const notJson = await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/funding-requests`, payload: 'amount=100000', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(notJson.statusCode).toBe(415);
    expect((await get(owner, `/api/orgs/${org.id}/funding-requests`)).json().total).toBe(0);
  });

  it(`keeps at most ${MAX_PENDING} pending at once`, async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    for (let i = 0; i < MAX_PENDING; i++) await funding.request(org.id, { amount: 100_000 }, { kind: 'member', personId: owner.personId });
    const res = await announce(owner, org.id, { amount: 100_000 });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toMatch(/withdraw the ones you will not send/);
  });

  it('lists them newest first, by status, paged', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const ids: string[] = [];
    for (const amount of [100_000, 200_000, 300_000]) ids.push((await announce(owner, org.id, { amount })).json().request.id);
    await funding.confirm(ids[0]!, { kind: 'cli' });
    await withdraw(owner, org.id, ids[1]!);
    const all = (await get(owner, `/api/orgs/${org.id}/funding-requests`)).json();
    expect(all).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(all.data.map((r: { amount: number; status: string }) => [r.amount, r.status])).toEqual([
      [300_000, 'pending'],
      [200_000, 'withdrawn'],
      [100_000, 'confirmed'],
    ]);
    expect(all.data[2].decidedAt).toEqual(expect.any(String));
    expect((await get(owner, `/api/orgs/${org.id}/funding-requests?status=pending`)).json()).toMatchObject({ total: 1, data: [{ id: ids[2] }] });
    expect((await get(owner, `/api/orgs/${org.id}/funding-requests?limit=1&offset=1`)).json()).toMatchObject({ total: 3, data: [{ id: ids[1] }] });
    expect((await get(owner, `/api/orgs/${org.id}/funding-requests?status=lost`)).statusCode).toBe(400);
    expect((await get(owner, `/api/orgs/${org.id}/funding-requests?limit=500`)).statusCode).toBe(400);
    // Another organization's requests are not among them.
    const other = await portalOrg(ctx.database.db);
    expect((await get(other.owner, `/api/orgs/${other.org.id}/funding-requests`)).json().total).toBe(0);
  });

  it('withdraws a pending request once; not a decided one, not another organization\'s', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 0 });
    const { id } = (await announce(owner, org.id, { amount: 400_000 })).json().request;
    const other = await portalOrg(ctx.database.db);
    expect((await withdraw(other.owner, other.org.id, id)).statusCode).toBe(404);
    expect((await withdraw(other.owner, org.id, id)).statusCode).toBe(404);
    expect((await withdraw(owner, org.id, 'not-an-id')).statusCode).toBe(404);
    expect((await withdraw(owner, org.id, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);

    const done = await withdraw(owner, org.id, id);
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({ id, status: 'withdrawn', decidedAt: expect.any(String) });
    const twice = await withdraw(owner, org.id, id);
    expect(twice.statusCode).toBe(409);
    expect(twice.json().message).toMatch(/already withdrawn/);
    await expect(funding.confirm(id, { kind: 'cli' })).rejects.toThrow(/already withdrawn/);
    expect(await balanceOf(org.id)).toBe(0);
    expect((await get(owner, `/api/orgs/${org.id}/billing`)).json().pendingFunding).toBe(0);

    const confirmed = (await announce(owner, org.id, { amount: 100_000 })).json().request;
    await funding.confirm(confirmed.id, { kind: 'cli' });
    expect((await withdraw(owner, org.id, confirmed.id)).statusCode).toBe(409);
    const actions = await ctx.database.db.selectFrom('audit_events').select('action').where('org_id', '=', org.id).orderBy('id').execute();
    expect(actions.map((a) => a.action)).toEqual(['funding.requested', 'funding.withdrawn', 'funding.requested', 'funding.confirmed']);
  });
});

describe('the operator decides', () => {
  it('confirming credits the wallet exactly once, with its ledger row, audit row and a mail, even when confirmed twice at once', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 0 });
    const { request } = (await announce(owner, org.id, { amount: 5_000_000 })).json();
    const results = await Promise.allSettled([funding.confirm(request.id, { kind: 'cli' }), funding.confirm(request.id, { kind: 'cli' }), funding.confirm(request.id, { kind: 'cli' })]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected', 'rejected']);
    for (const failed of results.filter((r) => r.status === 'rejected')) {
      expect(failed.reason).toBeInstanceOf(ApiError);
      expect((failed.reason as ApiError).statusCode).toBe(409);
    }
    const confirmed = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<Awaited<ReturnType<Funding['confirm']>>>).value;
    expect(confirmed).toMatchObject({ id: request.id, status: 'confirmed', orgId: org.id, orgName: org.name, ledgerEntryId: expect.any(Number) });

    expect(await balanceOf(org.id)).toBe(5_000_000);
    const ledger = await ctx.database.db.selectFrom('ledger_entries').selectAll().where('org_id', '=', org.id).execute();
    expect(ledger).toHaveLength(1);
    expect(Number(ledger[0]!.id)).toBe(confirmed.ledgerEntryId);
    expect(ledger[0]).toMatchObject({ kind: 'credit', description: `Bank transfer ${request.reference}` });
    const row = await ctx.database.db.selectFrom('funding_requests').selectAll().where('id', '=', request.id).executeTakeFirstOrThrow();
    expect(Number(row.ledger_entry_id)).toBe(confirmed.ledgerEntryId);
    expect(row.decided_by).toBeNull();

    const page = (await get(owner, `/api/orgs/${org.id}/ledger`)).json();
    expect(page.data).toEqual([expect.objectContaining({ kind: 'credit', amount: 5_000_000, balanceAfter: 5_000_000 })]);
    const audit = await ctx.database.db.selectFrom('audit_events').select(['action', 'actor_kind', 'after']).where('org_id', '=', org.id).orderBy('id').execute();
    expect(audit.map((a) => [a.action, a.actor_kind])).toEqual([['funding.requested', 'member'], ['funding.confirmed', 'cli']]);
    expect(audit[1]!.after).toEqual({ status: 'confirmed', amount: 5_000_000, ledgerEntryId: confirmed.ledgerEntryId });

    await funding.flush();
    const [mail] = await listMail(ctx.database.db, { to: owner.email });
    expect(mail).toMatchObject({ kind: 'funding_confirmed', subject: `₦50,000.00 was added to ${org.name}'s Vouch wallet` });
    expect(mail!.text).toContain(request.reference);
    expect(mail!.text).toContain('The balance is now ₦50,000.00.');
    expect(mail!.text).toContain('http://127.0.0.1:8080/billing');
  });

  it('a confirmation racing a withdrawal: exactly one wins, and the wallet agrees with it', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 0 });
    const { request } = (await announce(owner, org.id, { amount: 250_000 })).json();
    const [confirmed, withdrawn] = await Promise.allSettled([funding.confirm(request.id, { kind: 'cli' }), funding.withdraw(org.id, request.id, { kind: 'member', personId: owner.personId })]);
    expect([confirmed.status, withdrawn.status].sort()).toEqual(['fulfilled', 'rejected']);
    expect(await balanceOf(org.id)).toBe(confirmed.status === 'fulfilled' ? 250_000 : 0);
  });

  it('rejecting credits nothing, keeps the reason for the customer, and mails them', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 0 });
    const { id, reference } = (await announce(owner, org.id, { amount: 100_000 })).json().request;
    await expect(funding.reject(id, '   ', { kind: 'cli' })).rejects.toThrow(/reason must say why/);
    await expect(funding.reject(id, 'x'.repeat(501), { kind: 'cli' })).rejects.toThrow(/at most 500/);
    const rejected = await funding.reject(id, ' No transfer with this reference arrived ', { kind: 'cli' });
    expect(rejected).toMatchObject({ status: 'rejected', reason: 'No transfer with this reference arrived', ledgerEntryId: null });
    expect(await balanceOf(org.id)).toBe(0);
    const [row] = (await get(owner, `/api/orgs/${org.id}/funding-requests`)).json().data;
    expect(row).toMatchObject({ status: 'rejected', reason: 'No transfer with this reference arrived' });
    await expect(funding.confirm(id, { kind: 'cli' })).rejects.toThrow(/already rejected/);
    await expect(funding.reject(id, 'again', { kind: 'cli' })).rejects.toThrow(/already rejected/);
    await funding.flush();
    const [mail] = await listMail(ctx.database.db, { to: owner.email });
    expect(mail).toMatchObject({ kind: 'funding_rejected', subject: `Your Vouch funding request ${reference} was not confirmed` });
    expect(mail!.text).toContain('Reason: No transfer with this reference arrived');
  });

  it('mails the owners when the member who asked has left; answers 404 for an unknown request', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { fund: 0 });
    const admin = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, admin.personId, 'admin');
    const { id } = (await announce(admin, org.id, { amount: 100_000 })).json().request;
    await ctx.database.db.deleteFrom('memberships').where('org_id', '=', org.id).where('person_id', '=', admin.personId).execute();
    await funding.confirm(id, { kind: 'operator', personId: owner.personId });
    await funding.flush();
    expect(await listMail(ctx.database.db, { to: admin.email })).toEqual([]);
    expect((await listMail(ctx.database.db, { to: owner.email }))[0]).toMatchObject({ kind: 'funding_confirmed' });
    const row = await ctx.database.db.selectFrom('funding_requests').select('decided_by').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.decided_by).toBe(owner.personId);

    await expect(funding.confirm('00000000-0000-4000-8000-000000000000', { kind: 'cli' })).rejects.toThrow(/No funding request/);
    await expect(funding.confirm('VCH-ABCDEF', { kind: 'cli' })).rejects.toThrow(/No funding request/);
  });
});

describe('bank details in the configuration', () => {
  const base = { VOUCH_BANK_NAME: 'Zenith Bank', VOUCH_BANK_ACCOUNT_NAME: 'Vouch Operations Ltd', VOUCH_BANK_ACCOUNT_NUMBER: '1012345678' };

  it('reads all three, with an optional note; none at all means not configured', () => {
    expect(loadConfig({}).bank).toBeUndefined();
    expect(loadConfig(base).bank).toEqual({ bankName: 'Zenith Bank', accountName: 'Vouch Operations Ltd', accountNumber: '1012345678', note: undefined });
    expect(loadConfig({ ...base, VOUCH_FUNDING_NOTE: ' Use the reference. ' }).bank?.note).toBe('Use the reference.');
  });

  it('names the variable that is wrong', () => {
    expect(() => loadConfig({ ...base, VOUCH_BANK_NAME: '' })).toThrow(/^VOUCH_BANK_NAME: is required when any of/);
    expect(() => loadConfig({ VOUCH_BANK_ACCOUNT_NAME: 'Vouch' })).toThrow(/^VOUCH_BANK_NAME: is required/);
    expect(() => loadConfig({ ...base, VOUCH_BANK_ACCOUNT_NUMBER: '012345678' })).toThrow(/^VOUCH_BANK_ACCOUNT_NUMBER: must be a 10-digit account number \(NUBAN\)/);
    expect(() => loadConfig({ ...base, VOUCH_BANK_ACCOUNT_NUMBER: '01234567890' })).toThrow(/NUBAN/);
    expect(() => loadConfig({ VOUCH_FUNDING_NOTE: 'hello' })).toThrow(/^VOUCH_FUNDING_NOTE: needs the bank details/);
    expect(() => loadConfig({ ...base, VOUCH_FUNDING_NOTE: 'x'.repeat(501) })).toThrow(/^VOUCH_FUNDING_NOTE: must be at most 500 characters/);
  });
});
