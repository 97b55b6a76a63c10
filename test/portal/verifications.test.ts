import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { reencodePhoto } from '../../src/files/photos.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { COUNT_CAP } from '../../src/portal/verifications/counting.js';
import { KIND_TABLES } from '../../src/portal/verifications/kinds.js';
import { LOOKUP_TYPES } from '../../src/portal/verifications/lookups.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';
import { ADDRESS_BODY, BUSINESS_BODY, multipartBody } from '../agents/fixtures.js';
import { EMPLOYMENT_BODY, GUARANTOR_BODY } from '../respondents/fixtures.js';

let ctx: TestContext;
let dataDir: string;
let agentCredential: string;
let photo: Buffer;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-portal-verifications-'));
  ctx = await buildTestContext({ config: { dataDir } });
  // Live address verifications in Lagos go to this agent.
  ({ credential: agentCredential } = await createAgent(ctx.database.db, { name: 'Explorer Agent', email: `agent-${Date.now()}@agents.example`, phone: '08031230000', states: ['Lagos'] }));
  photo = await sharp({ create: { width: 24, height: 16, channels: 3, background: '#4a6' } }).jpeg().toBuffer();
});
afterAll(async () => {
  await ctx?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

const TEST_BVN = '22345678901';
const LIVE_BVN = '22200000077';

/** An organization at risk level LOW (funded ₦1,000 unless told) with a signed-in owner. */
async function lowRiskOrg(fund?: number) {
  const made = await portalOrg(ctx.database.db, fund === undefined ? {} : { fund });
  await ctx.accounts.enable(made.org.id, 'LOW', 'FULL');
  return made;
}

const get = (user: PortalUser | undefined, url: string) => portal(ctx.app, user, { method: 'GET', url });
const post = (user: PortalUser | undefined, url: string, payload?: object) => portal(ctx.app, user, { method: 'POST', url, ...(payload ? { payload } : {}) });
const v1 = (secret: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  ctx.app.inject({ method, url, headers: bearer(secret), ...(payload ? { payload } : {}) });

describe('identity lookups', () => {
  it('lists the mode’s lookups newest first, masked, with outcome, price and time', async () => {
    const { org, owner } = await lowRiskOrg();
    expect((await v1(org.testSecret, 'POST', `/v1/verifications/identities/bvn/${TEST_BVN}`, { lastname: 'Okonkwo' })).statusCode).toBe(200);
    expect((await v1(org.testSecret, 'POST', '/v1/verifications/identities/bvn/22000000000', { lastname: 'Okonkwo' })).statusCode).toBe(404);
    expect((await v1(org.testSecret, 'GET', '/v1/verifications/identities/tin/23456789-0001')).statusCode).toBe(200);
    const res = await get(owner, `/api/orgs/${org.id}/lookups?mode=test`);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(TEST_BVN);
    const body = res.json();
    expect(body).toMatchObject({ total: 3, totalCapped: false, limit: 20, offset: 0 });
    expect(body.data.map((r: { type: string; outcome: string }) => `${r.type}:${r.outcome}`)).toEqual(['tin:success', 'bvn_basic:not_found', 'bvn_basic:success']);
    expect(body.data[2]).toEqual({ id: expect.any(Number), type: 'bvn_basic', subject: '223******01', outcome: 'success', price: 0, createdAt: expect.stringMatching(/Z$/) });
    // The address verifications an organization creates are not lookups.
    expect((await post(owner, `/api/orgs/${org.id}/verifications/address?mode=test`, ADDRESS_BODY)).statusCode).toBe(201);
    expect((await get(owner, `/api/orgs/${org.id}/lookups?mode=test`)).json().total).toBe(3);
  });

  it('filters by type, outcome, dates and search, and pages with the total', async () => {
    const { org, owner } = await lowRiskOrg();
    for (const number of [TEST_BVN, '22000000000', '99900000011']) {
      await v1(org.testSecret, 'POST', `/v1/verifications/identities/bvn/${number}`, { lastname: 'Okonkwo' });
    }
    await v1(org.testSecret, 'GET', '/v1/verifications/identities/tin/23456789-0001');
    const list = async (query: string) => {
      const res = await get(owner, `/api/orgs/${org.id}/lookups?mode=test&${query}`);
      expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
      expect(res.body).not.toContain(TEST_BVN);
      return res.json() as { total: number; data: { type: string; subject: string; outcome: string }[] };
    };
    expect((await list('type=bvn_basic')).total).toBe(3);
    expect((await list('type=bvn_basic&outcome=success')).total).toBe(1);
    expect((await list('outcome=not_found')).data.map((r) => r.subject)).toEqual(['999******11', '220******00']);
    // Search: the start of the masked number, the masked number as shown, the whole number, or a type.
    expect((await list('q=220')).data.map((r) => r.subject)).toEqual(['220******00']);
    expect((await list('q=22')).data.map((r) => r.subject)).toEqual(['220******00', '223******01']);
    expect((await list(`q=${encodeURIComponent('223******01')}`)).data.map((r) => r.subject)).toEqual(['223******01']);
    expect((await list(`q=${TEST_BVN}`)).data.map((r) => r.subject)).toEqual(['223******01']);
    expect((await list('q=23456789-0001')).data.map((r) => r.type)).toEqual(['tin']);
    expect((await list('q=TIN')).data.map((r) => r.type)).toEqual(['tin']);
    expect((await list('q=%25')).total).toBe(0);
    expect((await list('q=_')).total).toBe(0);
    // Dates: from inclusive, to exclusive; a bare date is midnight UTC.
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    expect((await list(`from=${hourAgo}&to=${inAnHour}`)).total).toBe(4);
    expect((await list(`to=${hourAgo}`)).total).toBe(0);
    expect((await list(`from=${inAnHour}`)).total).toBe(0);
    expect((await list('from=2020-01-01&to=2020-01-02')).total).toBe(0);
    // Pages keep the total.
    const second = await list('limit=2&offset=2');
    expect(second).toMatchObject({ total: 4, limit: 2, offset: 2 });
    expect(second.data.map((r) => r.subject)).toEqual(['220******00', '223******01']);
    expect((await list('limit=2&offset=4')).data).toEqual([]);
  });

  it('shows live lookups with their price in live mode only', async () => {
    const { org, owner } = await lowRiskOrg(100_000);
    const record = { bvn: LIVE_BVN, firstname: 'Emeka', lastname: 'Obi', gender: 'Male', phone: '08091112222', birthdate: '01-01-1980', email: 'emeka@example.com' };
    expect((await importRegistry(ctx.database.db, Readable.from([JSON.stringify({ type: 'bvn', record })]))).imported).toBe(1);
    expect((await v1(org.liveSecret, 'POST', `/v1/verifications/identities/bvn/${LIVE_BVN}`, { lastname: 'Obi' })).statusCode).toBe(200);
    await v1(org.testSecret, 'POST', `/v1/verifications/identities/bvn/${TEST_BVN}`, { lastname: 'Okonkwo' });
    const live = await get(owner, `/api/orgs/${org.id}/lookups?mode=live`);
    expect(live.body).not.toContain(LIVE_BVN);
    expect(live.json()).toMatchObject({ total: 1, data: [{ type: 'bvn_basic', subject: '222******77', outcome: 'success', price: 2_500 }] });
    expect((await get(owner, `/api/orgs/${org.id}/lookups?mode=test`)).json().data.map((r: { subject: string }) => r.subject)).toEqual(['223******01']);
    expect((await get(owner, `/api/orgs/${org.id}/lookups`)).json().total).toBe(1);
  });

  it('counts up to the cap, says there are more, and pages no deeper than the cap', async () => {
    const { org, owner } = await lowRiskOrg();
    await sql`
      insert into usage_events (org_id, mode, type, subject, outcome, price)
      select ${org.id}, 'test', 'nin', '70' || (g % 10) || '******61', 'success', 0 from generate_series(1, ${COUNT_CAP + 5}::int) g`.execute(ctx.database.db);
    expect((await get(owner, `/api/orgs/${org.id}/lookups?mode=test`)).json()).toMatchObject({ total: COUNT_CAP, totalCapped: true });
    expect((await get(owner, `/api/orgs/${org.id}/lookups?mode=test&q=703`)).json()).toMatchObject({ total: 1001, totalCapped: false });
    expect((await get(owner, `/api/orgs/${org.id}/lookups?mode=test&offset=${COUNT_CAP}`)).statusCode).toBe(200);
    expect((await get(owner, `/api/orgs/${org.id}/lookups?mode=test&offset=${COUNT_CAP + 1}`)).statusCode).toBe(400);
  });

  it('refuses bad filters with 400 and style A, never 500', async () => {
    const { org, owner } = await lowRiskOrg();
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'offset=-1', 'type=passport', 'outcome=maybe', 'mode=prod', 'from=yesterday', 'to=2026-13-45', 'from=2026-02-02&to=2026-02-01', `q=${'9'.repeat(41)}`]) {
      const res = await get(owner, `/api/orgs/${org.id}/lookups?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.any(String) });
    }
  });

  it('answers 401 without a session and 404 to another organization’s member; viewers read', async () => {
    const { org } = await lowRiskOrg();
    expect((await get(undefined, `/api/orgs/${org.id}/lookups`)).statusCode).toBe(401);
    const other = await portalOrg(ctx.database.db);
    const res = await get(other.owner, `/api/orgs/${org.id}/lookups`);
    expect(res.statusCode).toBe(404);
    expect((await get(other.owner, `/api/orgs/${org.id}/lookups?limit=0`)).statusCode).toBe(404);
    const viewer = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, viewer.personId, 'viewer');
    expect((await get(viewer, `/api/orgs/${org.id}/lookups?mode=live`)).statusCode).toBe(200);
  });

  it('uses indexes that name the same lookup types as the code', async () => {
    const { rows } = await sql<{ indexname: string; indexdef: string }>`
      select indexname, indexdef from pg_indexes where tablename = 'usage_events' and indexname like 'usage_events_lookups%'`.execute(ctx.database.db);
    expect(rows.map((row) => row.indexname).sort()).toEqual(['usage_events_lookups', 'usage_events_lookups_outcome', 'usage_events_lookups_subject', 'usage_events_lookups_type']);
    for (const row of rows) {
      const named = [...row.indexdef.matchAll(/'([a-z_]+)'::text/g)].map((match) => match[1]).sort();
      expect(named, row.indexname).toEqual([...LOOKUP_TYPES].sort());
    }
  });
});

describe('address verifications', () => {
  it('creates from the form in test mode, lists, shows the detail, completes through the test helper, filters', async () => {
    const { org, owner } = await lowRiskOrg();
    const created = await post(owner, `/api/orgs/${org.id}/verifications/address?mode=test`, { ...ADDRESS_BODY, reference: 'form-1', landmark: 'Beside the bank' });
    expect(created.statusCode, created.body).toBe(201);
    const { id, reference, record } = created.json();
    expect(reference).toBe('form-1');
    expect(record).toMatchObject({ id, reference: 'form-1', status: { status: 'In Progress' }, applicant: { idNumber: '123******01' } });
    expect(created.body).not.toContain(ADDRESS_BODY.applicant.idNumber);

    const list = (await get(owner, `/api/orgs/${org.id}/verifications?mode=test&kind=address`)).json();
    expect(list).toEqual({
      data: [{ kind: 'address', id, reference: 'form-1', status: 'in_progress', subject: 'Adaeze Okonkwo', createdAt: expect.stringMatching(/Z$/), completedAt: null }],
      total: 1,
      totalCapped: false,
      limit: 20,
      offset: 0,
    });

    const open = (await get(owner, `/api/orgs/${org.id}/verifications/address/${id}?mode=test`)).json();
    expect(open).toMatchObject({ kind: 'address', id, status: 'in_progress', statusText: 'In Progress', subStatus: '', cancellable: true, findings: [], photos: [], gps: null, deliveries: [] });
    expect(open.facts).toEqual([
      { label: 'Applicant', value: 'Adaeze Okonkwo' },
      { label: 'ID', value: 'NIN 123******01' },
      { label: 'Address', value: '12 Admiralty Way, Eti-Osa, Lagos' },
      { label: 'Landmark', value: 'Beside the bank' },
    ]);
    expect(open.timeline.map((t: { event: string }) => t.event)).toEqual(['created']);

    expect((await v1(org.testSecret, 'POST', `/v1/test-helpers/addresses/${id}/complete`, { outcome: 'verified' })).statusCode).toBe(200);
    const detail = await get(owner, `/api/orgs/${org.id}/verifications/address/${id}?mode=test`);
    expect(detail.body).not.toContain(ADDRESS_BODY.applicant.idNumber);
    const done = detail.json();
    expect(done).toMatchObject({ status: 'verified', statusText: 'Verified', cancellable: false, completedAt: expect.stringMatching(/Z$/) });
    // The record is the API's, identity number masked.
    const api = (await v1(org.testSecret, 'GET', `/v1/verifications/addresses/${id}`)).json().data;
    expect(done.record).toEqual({ ...api, applicant: { ...api.applicant, idNumber: '123******01' } });
    expect(done.timeline.map((t: { event: string; detail?: string }) => [t.event, t.detail ?? ''])).toEqual([
      ['created', ''],
      ['visited', 'The agent started the visit'],
      ['completed', 'Verified'],
    ]);
    expect(done.findings).toEqual([
      { label: 'Neighbour', value: 'Test Neighbour' },
      { label: 'Neighbour said', value: 'Completed with the test helper' },
    ]);
    expect(done.gps).toEqual({ latitude: expect.any(Number), longitude: expect.any(Number) });
    // The organization has no webhook endpoint: the event is recorded without its body, failed, never sent.
    expect(done.deliveries).toEqual([{ id: expect.any(Number), type: 'address.completed', status: 'failed', attempts: 0, lastStatusCode: null, createdAt: expect.any(String), deliveredAt: null }]);

    const count = async (query: string) => (await get(owner, `/api/orgs/${org.id}/verifications?mode=test&kind=address&${query}`)).json().total;
    const second = (await post(owner, `/api/orgs/${org.id}/verifications/address?mode=test`, ADDRESS_BODY)).json();
    expect(second.reference).toMatch(/^adr_/);
    expect(await count('status=verified')).toBe(1);
    expect(await count('status=in_progress')).toBe(2 - 1);
    expect(await count('status=cancelled')).toBe(0);
    expect(await count('q=form')).toBe(1);
    expect(await count('q=FORM')).toBe(0);
    expect(await count(`q=${second.id}`)).toBe(1);
    expect(await count('q=adr_')).toBe(1);
    expect(await count('q=%25')).toBe(0);
    const paged = (await get(owner, `/api/orgs/${org.id}/verifications?mode=test&kind=address&limit=1&offset=1`)).json();
    expect(paged).toMatchObject({ total: 2, totalCapped: false, data: [{ id }] });
  });

  it('cancels from the portal once, with its webhook; a second cancel is 409', async () => {
    const { org, owner } = await lowRiskOrg();
    const { id } = (await post(owner, `/api/orgs/${org.id}/verifications/address?mode=test`, ADDRESS_BODY)).json();
    const cancelled = await post(owner, `/api/orgs/${org.id}/verifications/address/${id}/cancel?mode=test`);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json()).toEqual({ ok: true });
    const again = await post(owner, `/api/orgs/${org.id}/verifications/address/${id}/cancel?mode=test`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ status: 'error', code: 'CONFLICT', message: expect.stringMatching(/cancelled/) });
    const detail = (await get(owner, `/api/orgs/${org.id}/verifications/address/${id}?mode=test`)).json();
    expect(detail).toMatchObject({ status: 'cancelled', statusText: 'Cancelled', cancellable: false });
    expect(detail.timeline.map((t: { event: string }) => t.event)).toEqual(['created', 'cancelled']);
    expect(detail.deliveries.map((d: { type: string }) => d.type)).toEqual(['address.cancelled']);
    expect((await get(owner, `/api/orgs/${org.id}/verifications?mode=test&kind=address&status=cancelled`)).json().data).toEqual([
      expect.objectContaining({ id, status: 'cancelled', completedAt: expect.any(String) }),
    ]);
    // One audit row, written with the cancellation (the refused second cancel left none).
    const audit = await ctx.database.db.selectFrom('audit_events').select(['action', 'actor_kind', 'actor_id', 'target', 'after']).where('org_id', '=', org.id).where('action', '=', 'verification.cancelled').execute();
    expect(audit).toEqual([{ action: 'verification.cancelled', actor_kind: 'member', actor_id: owner.personId, target: `address ${id}`, after: { mode: 'test', status: 'cancelled' } }]);
  });

  it('in live mode charges like the API, assigns an agent, and shows the visit: photos (signed), GPS, findings', async () => {
    const { org, owner } = await lowRiskOrg(10_000_000);
    const before = (await ctx.accounts.get(org.id)).balance;
    const created = await post(owner, `/api/orgs/${org.id}/verifications/address?mode=live`, { ...ADDRESS_BODY, reference: 'live-1' });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json();
    expect((await ctx.accounts.get(org.id)).balance).toBe(before - 150_000);
    const usage = await ctx.database.db.selectFrom('usage_events').select(['type', 'outcome', 'price']).where('org_id', '=', org.id).execute();
    expect(usage).toEqual([{ type: 'address', outcome: 'success', price: 150_000 }]);

    const assigned = (await get(owner, `/api/orgs/${org.id}/verifications/address/${id}?mode=live`)).json();
    expect(assigned.timeline.map((t: { event: string }) => t.event)).toEqual(['created', 'assigned']);

    const agent = { authorization: `Bearer ${agentCredential}` };
    expect((await ctx.app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${id}/start`, headers: agent })).statusCode).toBe(200);
    const form = multipartBody({ outcome: 'verified', latitude: 6.4474, longitude: 3.4723, neighborName: 'Iya Basira', neighborComment: 'Knows the applicant' }, [
      { filename: 'front.jpg', type: 'image/jpeg', bytes: photo },
      { filename: 'street.jpg', type: 'image/jpeg', bytes: photo },
    ]);
    const report = await ctx.app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${id}/report`, headers: { ...agent, ...form.headers }, payload: form.payload });
    expect(report.statusCode, report.body).toBe(200);

    const detail = (await get(owner, `/api/orgs/${org.id}/verifications/address/${id}?mode=live`)).json();
    expect(detail).toMatchObject({ status: 'verified', gps: { latitude: 6.4474, longitude: 3.4723 }, flaggedForReview: null });
    expect(detail.timeline.map((t: { event: string }) => t.event)).toEqual(['created', 'assigned', 'visited', 'completed']);
    expect(detail.findings).toEqual([
      { label: 'Neighbour', value: 'Iya Basira' },
      { label: 'Neighbour said', value: 'Knows the applicant' },
    ]);
    expect(detail.photos).toHaveLength(2);
    const photoUrl = new URL(detail.photos[0]);
    expect(photoUrl.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
    const download = await ctx.app.inject({ method: 'GET', url: `${photoUrl.pathname}${photoUrl.search}` });
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals((await reencodePhoto(photo)).bytes)).toBe(true);
    expect(detail.deliveries.map((d: { type: string }) => d.type)).toEqual(['address.completed']);
  });

  it('answers 402 in live mode when the wallet is short, creating and charging nothing', async () => {
    const { org, owner } = await lowRiskOrg(1_000);
    const res = await post(owner, `/api/orgs/${org.id}/verifications/address?mode=live`, ADDRESS_BODY);
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({ status: 'error', code: 'PAYMENT_REQUIRED', message: expect.stringMatching(/funded/) });
    expect((await ctx.accounts.get(org.id)).balance).toBe(1_000);
    expect((await get(owner, `/api/orgs/${org.id}/verifications?mode=live&kind=address`)).json().total).toBe(0);
    const usage = await ctx.database.db.selectFrom('usage_events').select(['type', 'outcome']).where('org_id', '=', org.id).execute();
    expect(usage).toEqual([{ type: 'address', outcome: 'insufficient_funds' }]);
  });

  it('keeps the API’s rules and messages: risk level, required fields, bad types, duplicate references, live access', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const url = `/api/orgs/${org.id}/verifications/address?mode=test`;
    const none = await post(owner, url, ADDRESS_BODY);
    expect(none.statusCode).toBe(403);
    expect(none.json().message).toMatch(/risk level of LOW/);
    await ctx.accounts.enable(org.id, 'LOW', 'FULL');
    const blank = await post(owner, url, { ...ADDRESS_BODY, street: ' ', lga: 'Atlantis' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().message).toMatch(/street is required/);
    expect(blank.json().message).toMatch(/lga/);
    const missing = await post(owner, url, { street: '1 Road', lga: 'Ikeja', state: 'Lagos' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/applicant is required/) });
    for (const wrong of [{ ...ADDRESS_BODY, applicant: 'Adaeze' }, { ...ADDRESS_BODY, street: { line: 1 } }, []]) {
      const res = await post(owner, url, wrong);
      expect(res.statusCode, JSON.stringify(wrong)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    expect((await post(owner, url, { ...ADDRESS_BODY, reference: 'dup' })).statusCode).toBe(201);
    const dup = await post(owner, url, { ...ADDRESS_BODY, reference: 'dup' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().message).toMatch(/"dup" already exists/);
    const notJson = await portal(ctx.app, owner, { method: 'POST', url, payload: 'street=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(notJson.statusCode).toBe(415);
    const off = await portalOrg(ctx.database.db, { enabled: false });
    await ctx.database.db.updateTable('organizations').set({ risk_level: 'LOW' }).where('id', '=', off.org.id).execute();
    const live = await post(off.owner, `/api/orgs/${off.org.id}/verifications/address?mode=live`, ADDRESS_BODY);
    expect(live.statusCode).toBe(403);
    expect(live.json().message).toMatch(/API access/);
    expect((await post(off.owner, `/api/orgs/${off.org.id}/verifications/address?mode=test`, ADDRESS_BODY)).statusCode).toBe(201);
  });
});

describe('guarantor, business and employment verifications', () => {
  it('creates a guarantor verification from the form, lists it, completes and shows the answer', async () => {
    const { org, owner } = await lowRiskOrg();
    const created = await post(owner, `/api/orgs/${org.id}/verifications/guarantor?mode=test`, { ...GUARANTOR_BODY, reference: 'g-1' });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json();
    expect(created.body).not.toContain(GUARANTOR_BODY.applicant.idNumber);
    const list = (await get(owner, `/api/orgs/${org.id}/verifications?mode=test&kind=guarantor`)).json();
    expect(list.data).toEqual([expect.objectContaining({ id, reference: 'g-1', subject: 'Babatunde Adeyemi for Adaeze Okonkwo', status: 'in_progress' })]);
    const open = (await get(owner, `/api/orgs/${org.id}/verifications/guarantor/${id}?mode=test`)).json();
    expect(open.timeline.map((t: { event: string }) => t.event)).toEqual(['created', 'sent']);
    expect(open.facts).toEqual(expect.arrayContaining([{ label: 'Guarantor', value: 'Babatunde Adeyemi' }, { label: 'Applicant’s ID', value: 'BVN 223******01' }]));
    expect(open.findings).toEqual([]);

    expect((await v1(org.testSecret, 'POST', `/v1/test-helpers/guarantors/${id}/complete`, { outcome: 'verified' })).statusCode).toBe(200);
    const detail = await get(owner, `/api/orgs/${org.id}/verifications/guarantor/${id}?mode=test`);
    expect(detail.body).not.toContain(GUARANTOR_BODY.applicant.idNumber);
    const done = detail.json();
    expect(done).toMatchObject({ status: 'verified', statusText: 'VERIFIED', cancellable: false });
    expect(done.timeline.map((t: { event: string }) => t.event)).toEqual(['created', 'sent', 'answered', 'completed']);
    expect(done.findings).toEqual(expect.arrayContaining([{ label: 'Answer', value: 'Accepted' }, { label: 'Answered through', value: 'The test helper' }]));
    expect(done.deliveries.map((d: { type: string }) => d.type)).toEqual(['guarantor.completed']);

    const second = (await post(owner, `/api/orgs/${org.id}/verifications/guarantor?mode=test`, GUARANTOR_BODY)).json();
    expect((await post(owner, `/api/orgs/${org.id}/verifications/guarantor/${second.id}/cancel?mode=test`)).statusCode).toBe(200);
    expect((await get(owner, `/api/orgs/${org.id}/verifications/guarantor/${second.id}?mode=test`)).json()).toMatchObject({ status: 'cancelled' });
    const audit = await ctx.database.db.selectFrom('audit_events').select(['target']).where('org_id', '=', org.id).where('action', '=', 'verification.cancelled').execute();
    expect(audit).toEqual([{ target: `guarantor ${second.id}` }]);
  });

  it('links a guarantor with verifyAddress to the visit of its address, both ways', async () => {
    const { org, owner } = await lowRiskOrg();
    const { id } = (await post(owner, `/api/orgs/${org.id}/verifications/guarantor?mode=test`, { ...GUARANTOR_BODY, verifyAddress: true })).json();
    const guarantor = (await get(owner, `/api/orgs/${org.id}/verifications/guarantor/${id}?mode=test`)).json();
    expect(guarantor.related).toEqual([{ kind: 'address', id: expect.any(Number), label: expect.any(String) }]);
    const address = (await get(owner, `/api/orgs/${org.id}/verifications/address/${guarantor.related[0].id}?mode=test`)).json();
    expect(address.related).toEqual([{ kind: 'guarantor', id, label: expect.any(String) }]);
  });

  it('keeps the guarantor API’s rules: risk level first, then the body', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const url = `/api/orgs/${org.id}/verifications/guarantor?mode=test`;
    const none = await post(owner, url, { firstname: 1 });
    expect(none.statusCode).toBe(403);
    expect(none.json().message).toMatch(/risk level/);
    await ctx.accounts.enable(org.id, 'LOW', 'FULL');
    const bad = await post(owner, url, { ...GUARANTOR_BODY, email: 'not-an-email' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/email/);
    expect((await post(owner, url, { lastname: 'x' })).statusCode).toBe(400);
  });

  it('charges a live guarantor like the API and answers 402 when the wallet is short', async () => {
    const rich = await lowRiskOrg(10_000_000);
    const before = (await ctx.accounts.get(rich.org.id)).balance;
    expect((await post(rich.owner, `/api/orgs/${rich.org.id}/verifications/guarantor?mode=live`, GUARANTOR_BODY)).statusCode).toBe(201);
    expect((await ctx.accounts.get(rich.org.id)).balance).toBeLessThan(before);
    const poor = await lowRiskOrg(100);
    const res = await post(poor.owner, `/api/orgs/${poor.org.id}/verifications/guarantor?mode=live`, GUARANTOR_BODY);
    expect(res.statusCode).toBe(402);
    expect((await get(poor.owner, `/api/orgs/${poor.org.id}/verifications?mode=live&kind=guarantor`)).json().total).toBe(0);
  });

  it('lists and details business and employment verifications made through the API, and cancels them', async () => {
    const { org, owner } = await lowRiskOrg();
    const business = (await v1(org.testSecret, 'POST', '/v1/verifications/businesses', { ...BUSINESS_BODY, reference: 'biz-1' })).json().data;
    const employment = (await v1(org.testSecret, 'POST', '/v1/verifications/employments', { ...EMPLOYMENT_BODY, reference: 'emp-1' })).json().data;
    expect((await get(owner, `/api/orgs/${org.id}/verifications?mode=test&kind=business`)).json().data).toEqual([
      expect.objectContaining({ kind: 'business', id: business.id, reference: 'biz-1', subject: 'Mama Put Ventures', status: 'in_progress' }),
    ]);
    expect((await get(owner, `/api/orgs/${org.id}/verifications?mode=test&kind=employment`)).json().data).toEqual([
      expect.objectContaining({ kind: 'employment', id: employment.id, reference: 'emp-1', subject: 'Chidi Okafor at Kolanut Technologies' }),
    ]);
    expect((await v1(org.testSecret, 'POST', `/v1/test-helpers/businesses/${business.id}/complete`, { outcome: 'verified' })).statusCode).toBe(200);
    const biz = (await get(owner, `/api/orgs/${org.id}/verifications/business/${business.id}?mode=test`)).json();
    expect(biz).toMatchObject({ status: 'verified', subject: 'Mama Put Ventures' });
    expect(biz.facts).toEqual(expect.arrayContaining([{ label: 'Business', value: 'Mama Put Ventures' }]));
    expect(biz.timeline.map((t: { event: string }) => t.event)).toEqual(['created', 'visited', 'completed']);
    expect((await post(owner, `/api/orgs/${org.id}/verifications/business/${business.id}/cancel?mode=test`)).statusCode).toBe(409);

    expect((await v1(org.testSecret, 'POST', `/v1/test-helpers/employments/${employment.id}/complete`, { outcome: 'verified' })).statusCode).toBe(200);
    const emp = (await get(owner, `/api/orgs/${org.id}/verifications/employment/${employment.id}?mode=test`)).json();
    expect(emp).toMatchObject({ status: 'verified', subject: 'Chidi Okafor at Kolanut Technologies' });
    expect(emp.timeline.map((t: { event: string }) => t.event)).toEqual(['created', 'sent', 'answered', 'completed']);
    expect(emp.findings.length).toBeGreaterThan(0);

    const another = (await v1(org.testSecret, 'POST', '/v1/verifications/employments', EMPLOYMENT_BODY)).json().data;
    expect((await post(owner, `/api/orgs/${org.id}/verifications/employment/${another.id}/cancel?mode=test`)).statusCode).toBe(200);
    const otherBiz = (await v1(org.testSecret, 'POST', '/v1/verifications/businesses', BUSINESS_BODY)).json().data;
    expect((await post(owner, `/api/orgs/${org.id}/verifications/business/${otherBiz.id}/cancel?mode=test`)).statusCode).toBe(200);
    expect((await v1(org.testSecret, 'GET', `/v1/verifications/businesses/${otherBiz.id}`)).json().data.status.status).toBe('Cancelled');
    const audit = await ctx.database.db.selectFrom('audit_events').select(['target', 'actor_id']).where('org_id', '=', org.id).where('action', '=', 'verification.cancelled').orderBy('id').execute();
    expect(audit).toEqual([
      { target: `employment ${another.id}`, actor_id: owner.personId },
      { target: `business ${otherBiz.id}`, actor_id: owner.personId },
    ]);
  });
});

describe('isolation, roles and bad input', () => {
  it('keeps test and live apart and answers 404 for another organization’s ids', async () => {
    const { org, owner } = await lowRiskOrg(10_000_000);
    const live = (await post(owner, `/api/orgs/${org.id}/verifications/address?mode=live`, ADDRESS_BODY)).json();
    const test = (await post(owner, `/api/orgs/${org.id}/verifications/address?mode=test`, ADDRESS_BODY)).json();
    expect((await get(owner, `/api/orgs/${org.id}/verifications/address/${live.id}?mode=test`)).statusCode).toBe(404);
    expect((await get(owner, `/api/orgs/${org.id}/verifications/address/${live.id}`)).statusCode).toBe(404);
    expect((await get(owner, `/api/orgs/${org.id}/verifications/address/${test.id}?mode=live`)).statusCode).toBe(404);
    expect((await post(owner, `/api/orgs/${org.id}/verifications/address/${live.id}/cancel?mode=test`)).statusCode).toBe(404);
    expect((await get(owner, `/api/orgs/${org.id}/verifications?mode=live&kind=address`)).json().data.map((r: { id: number }) => r.id)).toEqual([live.id]);
    expect((await get(owner, `/api/orgs/${org.id}/verifications?mode=test&kind=address`)).json().data.map((r: { id: number }) => r.id)).toEqual([test.id]);
    expect((await get(owner, `/api/orgs/${org.id}/verifications/guarantor/${test.id}?mode=test`)).statusCode).toBe(404);

    const other = await lowRiskOrg();
    // A member of another organization: 404 on this one's paths, and this one's ids are not found under theirs.
    expect((await get(other.owner, `/api/orgs/${org.id}/verifications/address/${test.id}?mode=test`)).statusCode).toBe(404);
    expect((await get(other.owner, `/api/orgs/${org.id}/verifications?kind=address`)).statusCode).toBe(404);
    expect((await post(other.owner, `/api/orgs/${org.id}/verifications/address/${test.id}/cancel?mode=test`)).statusCode).toBe(404);
    expect((await post(other.owner, `/api/orgs/${org.id}/verifications/address?mode=test`, ADDRESS_BODY)).statusCode).toBe(404);
    expect((await get(other.owner, `/api/orgs/${other.org.id}/verifications/address/${test.id}?mode=test`)).statusCode).toBe(404);
    expect((await post(other.owner, `/api/orgs/${other.org.id}/verifications/address/${test.id}/cancel?mode=test`)).statusCode).toBe(404);
    expect((await get(owner, `/api/orgs/${org.id}/verifications/address/${test.id}?mode=test`)).json().status).toBe('in_progress');
  });

  it('lets a viewer read but not create or cancel; a developer may', async () => {
    const { org, owner } = await lowRiskOrg();
    const { id } = (await post(owner, `/api/orgs/${org.id}/verifications/address?mode=test`, ADDRESS_BODY)).json();
    const viewer = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, viewer.personId, 'viewer');
    expect((await get(viewer, `/api/orgs/${org.id}/verifications?kind=address`)).statusCode).toBe(200);
    expect((await get(viewer, `/api/orgs/${org.id}/verifications/address/${id}`)).statusCode).toBe(200);
    for (const [url, body] of [
      [`/api/orgs/${org.id}/verifications/address/${id}/cancel?mode=test`, undefined],
      [`/api/orgs/${org.id}/verifications/address?mode=test`, ADDRESS_BODY],
      [`/api/orgs/${org.id}/verifications/guarantor?mode=test`, GUARANTOR_BODY],
      [`/api/orgs/${org.id}/verifications/address?mode=test`, { nonsense: true }],
    ] as const) {
      const res = await post(viewer, url, body);
      expect(res.statusCode, url).toBe(403);
      expect(res.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN', message: expect.stringMatching(/viewer/) });
    }
    const developer = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, developer.personId, 'developer');
    expect((await post(developer, `/api/orgs/${org.id}/verifications/address/${id}/cancel?mode=test`)).statusCode).toBe(200);
  });

  it('answers 401 without a session on every route', async () => {
    const { org } = await lowRiskOrg();
    for (const [method, url] of [
      ['GET', `/api/orgs/${org.id}/verifications?kind=address`],
      ['GET', `/api/orgs/${org.id}/verifications/address/1`],
      ['POST', `/api/orgs/${org.id}/verifications/address/1/cancel`],
      ['POST', `/api/orgs/${org.id}/verifications/address`],
      ['POST', `/api/orgs/${org.id}/verifications/guarantor`],
      ['GET', '/api/locations'],
    ] as const) {
      const res = await portal(ctx.app, undefined, { method, url, ...(method === 'POST' ? { payload: {} } : {}) });
      expect(res.statusCode, url).toBe(401);
    }
  });

  it('answers 400 for a bad kind, id, status, limit or offset, and 404 for an id no row has', async () => {
    const { org, owner } = await lowRiskOrg();
    for (const url of [
      `/api/orgs/${org.id}/verifications/address/abc`,
      `/api/orgs/${org.id}/verifications/address/1.5`,
      `/api/orgs/${org.id}/verifications/address/-1`,
      `/api/orgs/${org.id}/verifications/address/${'9'.repeat(16)}`,
      `/api/orgs/${org.id}/verifications/parcel/1`,
      `/api/orgs/${org.id}/verifications?kind=parcel`,
      `/api/orgs/${org.id}/verifications`,
      `/api/orgs/${org.id}/verifications?kind=address&status=done`,
      `/api/orgs/${org.id}/verifications?kind=address&limit=0`,
      `/api/orgs/${org.id}/verifications?kind=address&limit=1000`,
      `/api/orgs/${org.id}/verifications?kind=address&offset=-5`,
      `/api/orgs/${org.id}/verifications?kind=address&status=verified&offset=10001`,
    ]) {
      const res = await get(owner, url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().status, url).toBe('error');
    }
    expect((await post(owner, `/api/orgs/${org.id}/verifications/parcel/1/cancel`)).statusCode).toBe(400);
    expect((await get(owner, `/api/orgs/${org.id}/verifications/address/0`)).statusCode).toBe(404);
    expect((await get(owner, `/api/orgs/${org.id}/verifications/address/999999999`)).statusCode).toBe(404);
    expect((await get(owner, `/api/orgs/${org.id}/verifications/employment/999999999`)).statusCode).toBe(404);
    expect((await get(owner, `/api/orgs/${org.id}/verifications?kind=address&offset=50000`)).json()).toMatchObject({ total: 0, data: [] });
  });

  it('counts filtered lists up to the cap; the unfiltered total stays exact', async () => {
    const { org, owner } = await lowRiskOrg();
    const rows = COUNT_CAP + 3;
    await sql`
      insert into address_verifications (org_id, mode, seq, reference, applicant, street, lga, state)
      select ${org.id}, 'test', g, 'bulk-' || g, jsonb_build_object('firstname', 'Bulk', 'lastname', 'Row ' || g), '1 Road', 'Ikeja', 'Lagos'
      from generate_series(1, ${rows}::int) g`.execute(ctx.database.db);
    await ctx.database.db.insertInto('sequences').values({ org_id: org.id, mode: 'test', kind: 'address', value: rows }).execute();
    const list = async (query: string) => (await get(owner, `/api/orgs/${org.id}/verifications?mode=test&kind=address&${query}`)).json();
    expect(await list('')).toMatchObject({ total: rows, totalCapped: false, data: expect.arrayContaining([expect.objectContaining({ reference: `bulk-${rows}` })]) });
    expect(await list('offset=10002&limit=5')).toMatchObject({ total: rows, data: [{ reference: 'bulk-1' }] });
    expect(await list('status=in_progress')).toMatchObject({ total: COUNT_CAP, totalCapped: true });
    expect(await list('q=bulk-1000')).toMatchObject({ total: 5, totalCapped: false });
  });

  it('carries the state in the status filters’ indexes, so a filtered count reads no table rows', async () => {
    // An index-only scan needs every column the filter reads in the index: the indexed expression
    // is computed from the state column, which 0039 includes (docs/benchmarks.md, ninth session).
    // Employment verifications filter on their plain state column, already a key of their index.
    for (const kind of ['address', 'business', 'guarantor'] as const) {
      const spec = KIND_TABLES[kind];
      const { rows } = await sql<{ indexdef: string }>`
        select indexdef from pg_indexes where tablename = ${spec.table} and indexname = ${`${spec.table}_explorer_status`}`.execute(ctx.database.db);
      expect(rows, kind).toHaveLength(1);
      expect(rows[0]!.indexdef, kind).toContain(`INCLUDE (${spec.stateColumn})`);
    }
  });

  it('serves the states and LGAs the forms offer, as the server accepts them', async () => {
    const { owner } = await lowRiskOrg();
    const res = await get(owner, '/api/locations');
    expect(res.statusCode).toBe(200);
    const { states } = res.json() as { states: { name: string; lgas: string[] }[] };
    expect(states).toHaveLength(37);
    expect(states.reduce((sum, state) => sum + state.lgas.length, 0)).toBe(774);
    expect(states.find((state) => state.name === 'Lagos')?.lgas).toContain('Eti-Osa');
  });
});
