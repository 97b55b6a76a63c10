import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logAccess } from '../../src/access-log/service.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';
import { EMPLOYMENT_BODY, GUARANTOR_BODY } from '../respondents/fixtures.js';

const ADDRESS_BODY = {
  street: '12 Adeola Odeku Street',
  lga: 'Eti-Osa',
  state: 'Lagos',
  applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', phone: '08031234567' },
};

let t: TestContext;
let operator: PortalUser;

beforeAll(async () => {
  t = await buildTestContext();
  operator = await operatorUser(t.app, t.database.db);
});
afterAll(() => t.close());

const accessRows = (orgId: string) =>
  t.database.db.selectFrom('personal_data_access_records').selectAll().where('org_id', '=', orgId).orderBy('id').orderBy('position').execute();

async function riskLow(orgId: string) {
  await t.database.db.updateTable('organizations').set({ risk_level: 'LOW' }).where('id', '=', orgId).execute();
}

describe('views and exports of personal data are logged', () => {
  it('a GET of a verification and a list by API leave one line each per record in the log, naming the secret; an identity lookup leaves none', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const created = await t.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(org.testSecret), payload: ADDRESS_BODY });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as number;
    expect(await accessRows(org.id)).toEqual([]);
    const got = await t.app.inject({ method: 'GET', url: `/v1/verifications/addresses/${id}`, headers: { ...bearer(org.testSecret), 'x-forwarded-for': '203.0.113.9' } });
    expect(got.statusCode).toBe(200);
    const listed = await t.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(org.testSecret) });
    expect(listed.statusCode).toBe(200);
    const lookup = await t.app.inject({ method: 'POST', url: '/v1/verifications/identities/bvn/22345678901', headers: bearer(org.testSecret), payload: { lastname: 'Okonkwo' } });
    expect(lookup.statusCode).toBe(200);
    const secret = await t.database.db.selectFrom('api_secrets').select('id').where('org_id', '=', org.id).where('mode', '=', 'test').where('revoked_at', 'is', null).executeTakeFirstOrThrow();
    const rows = await accessRows(org.id);
    expect(rows.map((row) => [row.actor_kind, row.actor_id, row.channel, row.action, row.resource, row.resource_id, row.mode])).toEqual([
      ['api', secret.id, 'api', 'view', 'address', String(id), 'test'],
      ['api', secret.id, 'api', 'list', 'address', String(id), 'test'],
    ]);
    expect(rows[0]!.ip).toBeTruthy();
    // No personal data in the log.
    expect(JSON.stringify(rows)).not.toMatch(/Adaeze|Okonkwo|08031234567|Adeola/);
  });

  it('a portal detail view and a ledger CSV export leave a row naming the member', async () => {
    const { org, owner } = await portalOrg(t.database.db);
    await riskLow(org.id);
    const created = await portal(t.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/verifications/address?mode=test`, payload: ADDRESS_BODY });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    const detail = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/verifications/address/${id}?mode=test` });
    expect(detail.statusCode, detail.body).toBe(200);
    const csv = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/ledger.csv` });
    expect(csv.statusCode).toBe(200);
    const rows = await accessRows(org.id);
    expect(rows.map((row) => [row.actor_kind, row.actor_id, row.channel, row.action, row.resource, row.resource_id])).toEqual([
      ['member', owner.personId, 'portal', 'view', 'address', String(id)],
      ['member', owner.personId, 'portal', 'export', 'ledger', null],
    ]);
  });

  it('API lists answered at once are each logged by the time they are answered, with their own secret and organization (rows written together)', async () => {
    const orgs = [await t.org({ riskLevel: 'LOW' }), await t.org({ riskLevel: 'LOW' })];
    const idsOf = new Map<string, number[]>();
    for (const org of orgs) {
      const ids: number[] = [];
      for (const street of ['3 Bishop Aboyade Cole Street', '4 Bishop Aboyade Cole Street']) {
        const created = await t.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(org.testSecret), payload: { ...ADDRESS_BODY, street } });
        expect(created.statusCode, created.body).toBe(201);
        ids.push(created.json().data.id as number);
      }
      idsOf.set(org.id, ids);
    }
    // Six lists at once, alternating organizations: each checks the log as soon as it is answered.
    const seen = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const org = orgs[i % 2]!;
        const listed = await t.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(org.testSecret) });
        expect(listed.statusCode).toBe(200);
        return (await accessRows(org.id)).length;
      }),
    );
    // Each answer found at least its own two rows already written.
    for (const count of seen) expect(count).toBeGreaterThanOrEqual(2);
    for (const org of orgs) {
      const secret = await t.database.db.selectFrom('api_secrets').select('id').where('org_id', '=', org.id).where('mode', '=', 'test').where('revoked_at', 'is', null).executeTakeFirstOrThrow();
      const rows = await accessRows(org.id);
      const newestFirst = [...idsOf.get(org.id)!].reverse().map(String);
      expect(rows.map((row) => [row.actor_kind, row.actor_id, row.action, row.resource, row.resource_id, row.mode])).toEqual(
        [...newestFirst, ...newestFirst, ...newestFirst].map((id) => ['api', secret.id, 'list', 'address', id, 'test']),
      );
    }
  });

  it('the guarantor and employment lists by API leave one line per record shown, in page order, naming the secret; an empty page none', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const secret = await t.database.db.selectFrom('api_secrets').select('id').where('org_id', '=', org.id).where('mode', '=', 'test').where('revoked_at', 'is', null).executeTakeFirstOrThrow();
    for (const [resource, path, body] of [
      ['guarantor', '/v1/verifications/guarantors', GUARANTOR_BODY],
      ['employment', '/v1/verifications/employments', EMPLOYMENT_BODY],
    ] as const) {
      const ids: number[] = [];
      for (let i = 0; i < 2; i++) {
        const created = await t.app.inject({ method: 'POST', url: path, headers: bearer(org.testSecret), payload: body });
        expect(created.statusCode, created.body).toBe(201);
        ids.push(created.json().data.id as number);
      }
      const listed = await t.app.inject({ method: 'GET', url: path, headers: { ...bearer(org.testSecret), 'x-forwarded-for': '203.0.113.9' } });
      expect(listed.statusCode, listed.body).toBe(200);
      const newestFirst = [...ids].reverse().map(String);
      expect(listed.json().data.map((row: { id: number }) => String(row.id))).toEqual(newestFirst);
      const empty = await t.app.inject({ method: 'GET', url: `${path}?offset=10`, headers: bearer(org.testSecret) });
      expect(empty.json().data).toEqual([]);
      const rows = (await accessRows(org.id)).filter((row) => row.resource === resource);
      expect(rows.map((row) => [row.actor_kind, row.actor_id, row.channel, row.action, row.resource_id, row.mode])).toEqual(
        newestFirst.map((id) => ['api', secret.id, 'api', 'list', id, 'test']),
      );
    }
  });

  it('portal lists, unfiltered and filtered, leave one line per record shown, in page order, in the statement that reads the page; an empty page none', async () => {
    const { org, owner } = await portalOrg(t.database.db);
    await riskLow(org.id);
    const ids: number[] = [];
    for (const street of ['1 Akin Adesola Street', '2 Akin Adesola Street']) {
      const created = await portal(t.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/verifications/address?mode=test`, payload: { ...ADDRESS_BODY, street } });
      expect(created.statusCode, created.body).toBe(201);
      ids.push(created.json().id as number);
    }
    const newestFirst = [...ids].reverse().map(String);
    const listed = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/verifications?mode=test&kind=address` });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().data.map((row: { id: number }) => String(row.id))).toEqual(newestFirst);
    const filtered = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/verifications?mode=test&kind=address&status=in_progress` });
    expect(filtered.statusCode, filtered.body).toBe(200);
    expect(filtered.json().total).toBe(2);
    const empty = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/verifications?mode=test&kind=address&status=cancelled` });
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toMatchObject({ data: [], total: 0 });
    // Another mode's list shows none of them and logs nothing.
    const live = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/verifications?mode=live&kind=address` });
    expect(live.json().data).toEqual([]);
    const rows = await accessRows(org.id);
    expect(rows.map((row) => [row.actor_kind, row.actor_id, row.channel, row.action, row.resource, row.resource_id, row.mode, row.org_id])).toEqual(
      [...newestFirst, ...newestFirst].map((id) => ['member', owner.personId, 'portal', 'list', 'address', id, 'test', org.id]),
    );
    expect(rows.every((row) => row.ip)).toBe(true);
  });

  it('a detail that is not found leaves no row', async () => {
    const { org, owner } = await portalOrg(t.database.db);
    const res = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/verifications/address/999999?mode=test` });
    expect(res.statusCode).toBe(404);
    expect(await accessRows(org.id)).toEqual([]);
  });
});

describe('one row per access (0040)', () => {
  const consoleQuery = async (qs: string) => {
    const res = await portal(t.app, operator, { method: 'GET', url: `/api/console/personal-data-access?${qs}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: { id: number; position: number; action: string; resource: string; resourceId: string | null }[]; total: number };
  };
  const tableRows = (orgId: string) =>
    t.database.db.selectFrom('personal_data_access').select(['action', 'resource_ids']).where('org_id', '=', orgId).orderBy('id').execute();

  it('a list page is one row naming its records in page order; the console finds each record, one line each', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await t.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(org.testSecret), payload: ADDRESS_BODY });
      expect(created.statusCode, created.body).toBe(201);
      ids.push(created.json().data.id as number);
    }
    const listed = await t.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(org.testSecret) });
    expect(listed.statusCode).toBe(200);
    const shown = [...ids].reverse().map(String);
    expect(await tableRows(org.id)).toEqual([{ action: 'list', resource_ids: shown }]);

    const all = await consoleQuery(`orgId=${org.id}`);
    expect(all.total).toBe(3);
    expect(all.data.map((line) => [line.resourceId, line.position])).toEqual([[shown[0], 1], [shown[1], 2], [shown[2], 3]]);
    expect(new Set(all.data.map((line) => line.id)).size).toBe(1);
    // The middle record of the page, through the index on the ids: its line only.
    const middle = await consoleQuery(`resource=address&resourceId=${shown[1]}`);
    expect(middle.total).toBe(1);
    expect(middle.data).toEqual([expect.objectContaining({ action: 'list', resource: 'address', resourceId: shown[1], position: 2 })]);
    // An id that is only a prefix or a part of another is not a match.
    expect((await consoleQuery(`resourceId=${shown[1]!.slice(0, -1)}9999`)).total).toBe(0);
  });

  it('logAccess writes entries that differ only in the record as one row, in order; an export of many is a row of its own', async () => {
    const org = await t.org();
    const who = { orgId: org.id, mode: 'test' as const, actorKind: 'cli' as const, actorId: null, channel: 'cli' as const, resource: 'address', ip: null };
    await logAccess(t.database.db, [
      { ...who, action: 'list', resourceId: 7 },
      { ...who, action: 'list', resourceId: 5 },
      { ...who, action: 'export', resourceId: null },
      { ...who, action: 'list', resourceId: 6 },
      { ...who, action: 'view', resourceId: 5 },
    ]);
    expect(await tableRows(org.id)).toEqual([
      { action: 'list', resource_ids: ['7', '5', '6'] },
      { action: 'export', resource_ids: null },
      { action: 'view', resource_ids: ['5'] },
    ]);
    const lines = await consoleQuery(`orgId=${org.id}`);
    expect(lines.total).toBe(5);
    expect((await consoleQuery(`orgId=${org.id}&resourceId=5`)).data.map((line) => [line.action, line.position])).toEqual(expect.arrayContaining([['list', 2], ['view', 1]]));
  });

  it("a row written the previous release's way (resource_id, during a rolling upgrade) is kept as one record and found like the others", async () => {
    const org = await t.org();
    await sql`insert into personal_data_access (org_id, mode, actor_kind, actor_id, channel, action, resource, resource_id, ip)
      values (${org.id}, 'test', 'api', 'secret-1', 'api', 'view', 'address', '424242', '203.0.113.5')`.execute(t.database.db);
    expect(await tableRows(org.id)).toEqual([{ action: 'view', resource_ids: ['424242'] }]);
    const { rows } = await sql<{ resource_id: string | null }>`select resource_id from personal_data_access where org_id = ${org.id}`.execute(t.database.db);
    expect(rows).toEqual([{ resource_id: null }]);
    expect((await consoleQuery('resource=address&resourceId=424242')).data).toEqual([expect.objectContaining({ action: 'view', resourceId: '424242', position: 1 })]);
  });
});

describe('the operator queries the log', () => {
  it('filters by organization, resource, actor and dates, pages, and names people', async () => {
    const a = await portalOrg(t.database.db);
    const b = await portalOrg(t.database.db);
    for (const { org, owner } of [a, b]) {
      await riskLow(org.id);
      const created = await portal(t.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/verifications/address?mode=test`, payload: ADDRESS_BODY });
      const id = created.json().id as number;
      await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/verifications/address/${id}?mode=test` });
      await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/ledger.csv` });
    }
    const query = async (qs: string) => {
      const res = await portal(t.app, operator, { method: 'GET', url: `/api/console/personal-data-access?${qs}` });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { data: { orgId: string; resource: string; actor: { id: string; name: string | null; kind: string } }[]; total: number; limit: number; offset: number };
    };
    const ofA = await query(`orgId=${a.org.id}`);
    expect(ofA.total).toBe(2);
    expect(ofA.data.every((row) => row.orgId === a.org.id)).toBe(true);
    expect(ofA.data[0]!.resource).toBe('ledger'); // newest first
    expect(ofA.data[0]!.actor).toMatchObject({ kind: 'member', id: a.owner.personId });
    expect(ofA.data[0]!.actor.name).toBeTruthy();
    expect((await query(`orgId=${a.org.id}&resource=address`)).total).toBe(1);
    expect((await query(`actorId=${b.owner.personId}`)).total).toBe(2);
    expect((await query(`actorId=${b.owner.personId}&limit=1&offset=1`)).data).toHaveLength(1);
    expect((await query(`orgId=${a.org.id}&from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).total).toBe(0);
    expect((await query(`orgId=${a.org.id}&to=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)).total).toBe(0);
    expect((await query(`orgId=${a.org.id}&from=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)).total).toBe(2);
    const bad = await portal(t.app, operator, { method: 'GET', url: '/api/console/personal-data-access?orgId=nope' });
    expect(bad.statusCode).toBe(400);
  });

  it('is for operators: 401 without a session, 403 for customers', async () => {
    const { owner } = await portalOrg(t.database.db);
    expect((await portal(t.app, undefined, { method: 'GET', url: '/api/console/personal-data-access' })).statusCode).toBe(401);
    const forbidden = await portal(t.app, owner, { method: 'GET', url: '/api/console/personal-data-access' });
    expect(forbidden.statusCode).toBe(403);
  });
});
