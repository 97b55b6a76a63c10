import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENING_BILLABLES } from '../../src/screening/billing.js';
import { importList } from '../../src/screening/lists/import.js';
import { DEFAULT_THRESHOLD } from '../../src/screening/matching/index.js';
import { bearer, buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { balanceOf, client, expectStyleA, TIMESTAMP } from '../respondents/fixtures.js';

const BASE = '/v1/verifications/screenings';
const PRICE = SCREENING_BILLABLES.screening.defaultPrice;
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/screening');
const SOURCE = 'api-watch';

const person = (name: string, extra: Record<string, unknown> = {}) => ({ subject: { type: 'person', name, ...extra } });

describe('screenings API', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    await importList(t.database.db, { source: SOURCE, format: 'csv', files: { main: fs.readFileSync(path.join(FIXTURES, 'api-watchlist.csv')) } });
    await importList(t.database.db, { source: 'api-other', format: 'csv', files: { main: Buffer.from('id,schema,name,aliases,birthDate,nationality,topics,program,notes\nX-1,Person,Somebody Entirely Different,,,,sanction,,\n') } });
    await t.app.screeningLists.refresh();
  });
  afterAll(() => t.close());

  describe('live mode against the loaded lists', () => {
    it('answers 201 with the hit, its entity as listed, the lists screened and PENDING_REVIEW; charges the price once', async () => {
      const org = await t.org({ fund: PRICE * 3 });
      const res = await http.post(BASE, org.liveSecret, { ...person('Garba Danladi Yusufari', { dob: '1966-02-14', nationality: 'ng' }), reference: 'cust-1', metadata: { branch: 'Ikeja' } });
      expect(res.statusCode).toBe(201);
      const { status, data } = res.json();
      expect(status).toBe('success');
      expect(data).toMatchObject({
        id: expect.any(Number),
        reference: 'cust-1',
        subject: { type: 'person', name: 'Garba Danladi Yusufari', dob: '1966-02-14', nationality: 'NG', aliases: [], firstname: '', gender: '' },
        status: { status: 'PENDING_REVIEW', subStatus: 'POSSIBLE_MATCH', state: 'IN_REVIEW' },
        lists: [
          { source: 'api-other', version: 1 },
          { source: SOURCE, version: 1 },
        ],
        threshold: DEFAULT_THRESHOLD,
        monitored: false,
        metadata: { branch: 'Ikeja' },
      });
      expect(data.createdAt).toMatch(TIMESTAMP);
      expect(data.hits).toHaveLength(1);
      const [hit] = data.hits;
      expect(hit).toMatchObject({
        id: expect.any(Number),
        entityId: 'API-P-1',
        source: SOURCE,
        listVersion: 1,
        schema: 'Person',
        name: 'Garba Danladi Yusufari',
        matchedName: 'Garba Danladi Yusufari',
        topics: ['sanction'],
        birthDates: ['1966-02-14'],
        nationalities: ['NG'],
        programs: ['TEST-PROGRAM'],
        foundBy: 'screening',
      });
      expect(hit.score).toBeGreaterThanOrEqual(DEFAULT_THRESHOLD);
      expect(hit.score).toBeLessThanOrEqual(1);
      expect(hit.explanation.length).toBeGreaterThan(0);
      expect(hit.review).toBeUndefined();
      expect(await balanceOf(t.database.db, org.id)).toBe(PRICE * 2);
      expect((await http.get(`${BASE}/${data.id}`, org.liveSecret)).json()).toEqual({ status: 'success', data });
    });

    it('a subject on no list is CLEAR with no hits; an organization matches organizations', async () => {
      const org = await t.org();
      const clear = (await http.post(BASE, org.liveSecret, person('Adaeze Oluwaseun Nwankwo'))).json().data;
      expect(clear.status).toEqual({ status: 'CLEAR', subStatus: 'NO_MATCH', state: 'COMPLETE' });
      expect(clear.hits).toEqual([]);
      const company = (await http.post(BASE, org.liveSecret, { subject: { type: 'organization', name: 'Obsidian Harbour Freight Ltd' } })).json().data;
      expect(company.hits.map((hit: { entityId: string }) => hit.entityId)).toEqual(['API-O-1']);
    });

    it('firstname, middlename and lastname stand for name; aliases are screened too', async () => {
      const org = await t.org();
      const parts = (await http.post(BASE, org.liveSecret, { subject: { type: 'person', firstname: 'Ngozika', middlename: 'Chiamaka', lastname: 'Ebubedike' } })).json().data;
      expect(parts.subject).toMatchObject({ name: 'Ngozika Chiamaka Ebubedike', firstname: 'Ngozika', middlename: 'Chiamaka', lastname: 'Ebubedike' });
      expect(parts.hits.map((hit: { entityId: string; topics: string[] }) => [hit.entityId, hit.topics])).toEqual([['API-P-2', ['pep']]]);
      const alias = (await http.post(BASE, org.liveSecret, person('Adaeze Oluwaseun Nwankwo', { aliases: ['Garba Yusufari'] }))).json().data;
      expect(alias.hits.map((hit: { entityId: string }) => hit.entityId)).toEqual(['API-P-1']);
    });

    it('threshold: a higher one reports fewer hits; lists: only the lists named are screened and shown', async () => {
      const org = await t.org();
      const loose = (await http.post(BASE, org.liveSecret, { ...person('Garba Yusufari Danladi'), threshold: 0.5 })).json().data;
      expect(loose.threshold).toBe(0.5);
      expect(loose.hits.length).toBeGreaterThan(0);
      const strict = (await http.post(BASE, org.liveSecret, { ...person('Garba Yusufari Danladi'), threshold: 1 })).json().data;
      expect(strict.hits.filter((hit: { score: number }) => hit.score < 1)).toEqual([]);
      expect(strict.hits.length).toBeLessThan(loose.hits.length + (strict.hits.length > 0 ? 1 : 0));
      const other = (await http.post(BASE, org.liveSecret, { ...person('Garba Danladi Yusufari'), lists: ['api-other'] })).json().data;
      expect(other.lists).toEqual([{ source: 'api-other', version: 1 }]);
      expect(other.hits).toEqual([]);
      const named = (await http.post(BASE, org.liveSecret, { ...person('Garba Danladi Yusufari'), lists: [SOURCE] })).json().data;
      expect(named.lists).toEqual([{ source: SOURCE, version: 1 }]);
      expect(named.hits.map((hit: { entityId: string }) => hit.entityId)).toEqual(['API-P-1']);
    });

    it('402 when the wallet cannot pay: nothing stored, nothing charged', async () => {
      const org = await t.org({ fund: PRICE - 1 });
      expectStyleA(await http.post(BASE, org.liveSecret, person('Garba Danladi Yusufari')), 402, 'PAYMENT_REQUIRED');
      expect(await balanceOf(t.database.db, org.id)).toBe(PRICE - 1);
      expect((await http.get(BASE, org.liveSecret)).json()._pagination.total).toBe(0);
      const rows = await t.database.db.selectFrom('screenings').select('id').where('org_id', '=', org.id).execute();
      expect(rows).toEqual([]);
    });

    it('an Idempotency-Key replays the first answer: one screening, one charge', async () => {
      const org = await t.org({ fund: PRICE * 5 });
      const send = () =>
        t.app.inject({ method: 'POST', url: BASE, headers: { ...bearer(org.liveSecret), 'idempotency-key': 'scr-key-1' }, payload: person('Garba Danladi Yusufari') });
      const first = await send();
      const second = await send();
      expect(first.statusCode).toBe(201);
      expect(second.statusCode).toBe(201);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.json()).toEqual(first.json());
      expect(await balanceOf(t.database.db, org.id)).toBe(PRICE * 4);
      expect((await http.get(BASE, org.liveSecret)).json()._pagination.total).toBe(1);
    });
  });

  describe('test mode', () => {
    it('screens the sandbox list only: the fixed subjects hit as documented, the clear one never does', async () => {
      const org = await t.org({ fund: 0 });
      const sanctioned = (await http.post(BASE, org.testSecret, person('Musa Adamu Karfe', { dob: '1968-04-12' }))).json().data;
      expect(sanctioned.lists).toEqual([{ source: 'sandbox', version: 1 }]);
      expect(sanctioned.status.status).toBe('PENDING_REVIEW');
      expect(sanctioned.hits[0]).toMatchObject({ entityId: 'SBX-P-001', source: 'sandbox', topics: ['sanction'] });
      const pep = (await http.post(BASE, org.testSecret, person('Folasade Adeyinka-Bright'))).json().data;
      expect(pep.hits[0]).toMatchObject({ entityId: 'SBX-P-002', topics: expect.arrayContaining(['pep']) });
      const company = (await http.post(BASE, org.testSecret, { subject: { type: 'organization', name: 'Karfe Petroleum Trading Limited' } })).json().data;
      expect(company.hits[0]).toMatchObject({ entityId: 'SBX-O-001', schema: 'Organization' });
      const clear = (await http.post(BASE, org.testSecret, person('Sandbox Clear Person'))).json().data;
      expect(clear).toMatchObject({ hits: [], status: { status: 'CLEAR' } });
      expect(await balanceOf(t.database.db, org.id)).toBe(0);
    });

    it("never sees the operator's lists, even when named: a listed person is clear in test mode", async () => {
      const org = await t.org();
      const res = (await http.post(BASE, org.testSecret, { ...person('Garba Danladi Yusufari'), lists: [SOURCE] })).json().data;
      expect(res.lists).toEqual([{ source: 'sandbox', version: 1 }]);
      expect(res.hits).toEqual([]);
    });
  });

  describe('bad input', () => {
    let secret: string;
    beforeAll(async () => {
      secret = (await t.org()).liveSecret;
    });
    const cases: [string, unknown, RegExp][] = [
      ['no subject', {}, /subject/],
      ['subject not an object', { subject: 'Musa' }, /subject/],
      ['unknown type', { subject: { type: 'vessel', name: 'Sea Queen' } }, /subject\.type must be person or organization/],
      ['no name', { subject: { type: 'person' } }, /subject\.name is required/],
      ['blank name', { subject: { type: 'person', name: '   ' } }, /subject\.name is required/],
      ['name without letters', { subject: { type: 'person', name: '1234' } }, /subject\.name must contain letters/],
      ['name too long', { subject: { type: 'person', name: 'A'.repeat(201) } }, /subject\.name must be at most 200/],
      ['name and parts', { subject: { type: 'person', name: 'Musa Karfe', firstname: 'Musa', lastname: 'Karfe' } }, /not both/],
      ['firstname alone', { subject: { type: 'person', firstname: 'Musa' } }, /firstname and subject\.lastname go together/],
      ['organization with parts', { subject: { type: 'organization', firstname: 'A', lastname: 'B' } }, /an organization has a name/],
      ['organization with dob', { subject: { type: 'organization', name: 'Acme Limited', dob: '1990' } }, /subject\.dob is for a person/],
      ['bad dob', { subject: { type: 'person', name: 'Musa Karfe', dob: '12-04-1968' } }, /subject\.dob must be a past date written YYYY-MM-DD/],
      ['impossible dob', { subject: { type: 'person', name: 'Musa Karfe', dob: '1968-02-30' } }, /subject\.dob/],
      ['future dob', { subject: { type: 'person', name: 'Musa Karfe', dob: '2999' } }, /subject\.dob/],
      ['bad gender', { subject: { type: 'person', name: 'Musa Karfe', gender: 'x' } }, /subject\.gender must be male or female/],
      ['bad nationality', { subject: { type: 'person', name: 'Musa Karfe', nationality: 'Nigeria' } }, /subject\.nationality must be an ISO 3166-1 alpha-2/],
      ['unknown nationality code', { subject: { type: 'person', name: 'Musa Karfe', nationality: 'XX' } }, /subject\.nationality/],
      ['aliases not a list', { subject: { type: 'person', name: 'Musa Karfe', aliases: { first: 'Karfe' } } }, /aliases/],
      ['blank alias', { subject: { type: 'person', name: 'Musa Karfe', aliases: [' '] } }, /subject\.aliases\[0\] must not be blank/],
      ['too many aliases', { subject: { type: 'person', name: 'Musa Karfe', aliases: Array.from({ length: 21 }, (_, i) => `Alias ${i}`) } }, /at most 20/],
      ['unknown list', { ...person('Musa Karfe'), lists: ['un', SOURCE] }, /lists: "un" is not a loaded list/],
      ['empty lists', { ...person('Musa Karfe'), lists: [] }, /lists must name at least one list/],
      ['threshold above 1', { ...person('Musa Karfe'), threshold: 1.5 }, /threshold must be a number from 0 to 1/],
      ['threshold below 0', { ...person('Musa Karfe'), threshold: -0.1 }, /threshold must be a number from 0 to 1/],
      ['threshold not a number', { ...person('Musa Karfe'), threshold: 'high' }, /threshold/],
      ['monitor not a boolean', { ...person('Musa Karfe'), monitor: 'sometimes' }, /monitor/],
      ['metadata not strings', { ...person('Musa Karfe'), metadata: { n: 1 } }, /metadata\.n must be a string/],
      ['reference with spaces', { ...person('Musa Karfe'), reference: 'a b' }, /reference must be 1 to 100 printable characters/],
      ['bad consent', { ...person('Musa Karfe'), consent: { reference: 'c1' } }, /consent/],
    ];
    it.each(cases)('%s: 400 in style A naming the field', async (_label, body, message) => {
      const res = await http.post(BASE, secret, body as object);
      expect(expectStyleA(res, 400, 'VALIDATION_ERROR').message).toMatch(message);
    });

    it('a JSON body that is not an object, and no body at all, are 400s too', async () => {
      const array = await t.app.inject({ method: 'POST', url: BASE, headers: { ...bearer(secret), 'content-type': 'application/json' }, payload: '[]' });
      expect(array.statusCode).toBe(400);
      expectStyleA(await http.post(BASE, secret), 400, 'VALIDATION_ERROR');
    });
  });

  describe('consent', () => {
    it('an organization that requires consent gets 400 without it; with it, 201', async () => {
      const org = await t.org();
      await t.database.db.updateTable('organizations').set({ consent_required: true }).where('id', '=', org.id).execute();
      expect(expectStyleA(await http.post(BASE, org.testSecret, person('Sandbox Clear Person')), 400, 'VALIDATION_ERROR').message).toMatch(/consent is required/);
      const consent = { reference: 'form-77', obtainedAt: new Date(Date.now() - 60_000).toISOString(), channel: 'web' };
      expect((await http.post(BASE, org.testSecret, { ...person('Sandbox Clear Person'), consent })).statusCode).toBe(201);
    });
  });

  describe('auth, tenants and modes', () => {
    it('401 without a key or with a bad one, on every route', async () => {
      expectStyleA(await http.post(BASE, undefined, person('Musa Karfe')), 401, 'ACCESS_DENIED');
      expectStyleA(await http.get(BASE, undefined), 401, 'ACCESS_DENIED');
      expectStyleA(await http.get(`${BASE}/1`, 'sk_live_bogus'), 401, 'ACCESS_DENIED');
      expectStyleA(await http.del(`${BASE}/1`, 'sk_test_bogus'), 401, 'ACCESS_DENIED');
    });

    it("another organization's or the other mode's screening is 404; a non-numeric id 400", async () => {
      const org = await t.org();
      const created = (await http.post(BASE, org.testSecret, person('Musa Adamu Karfe'))).json().data;
      expectStyleA(await http.get(`${BASE}/${created.id}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/${created.id}`, (await t.org()).testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.del(`${BASE}/${created.id}`, (await t.org()).testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/abc`, org.testSecret), 400, 'VALIDATION_ERROR');
    });

    it('an id that is not a plain number (NUL, encoded slashes and dots, signs, huge) is 400 or 404 in style A and touches nothing', async () => {
      const org = await t.org();
      const created = (await http.post(BASE, org.testSecret, { ...person('Musa Adamu Karfe'), monitor: true })).json().data;
      const ids = [`${created.id}%00`, '%00', '%2e%2e', `..%2F${created.id}`, `${created.id}%2F..`, `${created.id}%2f`, '-1', '1.5', '0x1', '1e3', '%20' + created.id, '99999999999999999999999'];
      for (const id of ids) {
        for (const answer of [await http.get(`${BASE}/${id}`, org.testSecret), await http.del(`${BASE}/${id}`, org.testSecret)]) {
          expect([400, 404], `${answer.statusCode} for ${id}`).toContain(answer.statusCode);
          expectStyleA(answer, answer.statusCode, answer.statusCode === 400 ? 'VALIDATION_ERROR' : 'NOT_FOUND_ERROR');
        }
      }
      expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data).toMatchObject({ id: created.id, monitored: true });
    });

    it('lists newest first with the family pagination envelope; modes and organizations never mix', async () => {
      const org = await t.org();
      for (let i = 0; i < 3; i++) await http.post(BASE, org.testSecret, { ...person('Sandbox Clear Person'), reference: `s-${i}` });
      await http.post(BASE, org.liveSecret, { ...person('Adaeze Nwankwo'), reference: 'live-only' });
      const page = (await http.get(`${BASE}?limit=2`, org.testSecret)).json();
      expect(page._pagination).toEqual({ limit: 2, offset: 0, total: 3 });
      expect(page.data.map((r: { reference: string }) => r.reference)).toEqual(['s-2', 's-1']);
      expect((await http.get(`${BASE}?limit=2&offset=2`, org.testSecret)).json().data.map((r: { reference: string }) => r.reference)).toEqual(['s-0']);
      expect((await http.get(BASE, org.liveSecret)).json().data.map((r: { reference: string }) => r.reference)).toEqual(['live-only']);
      expectStyleA(await http.get(`${BASE}?limit=500`, org.testSecret), 400, 'VALIDATION_ERROR');
    });
  });

  describe('monitoring flag and DELETE', () => {
    it('DELETE ends monitoring ("ok"; again "ok"); the screening and its hits stay', async () => {
      const org = await t.org();
      const created = (await http.post(BASE, org.liveSecret, { ...person('Garba Danladi Yusufari'), monitor: true })).json().data;
      expect(created).toMatchObject({ monitored: true, monitoringEndedAt: '', monitoringEndReason: '' });
      expect((await http.del(`${BASE}/${created.id}`, org.liveSecret)).json()).toEqual({ status: 'success', data: 'ok' });
      expect((await http.del(`${BASE}/${created.id}`, org.liveSecret)).json()).toEqual({ status: 'success', data: 'ok' });
      const after = (await http.get(`${BASE}/${created.id}`, org.liveSecret)).json().data;
      expect(after).toMatchObject({ monitored: false, monitoringEndReason: 'deleted', hits: created.hits });
      expect(after.monitoringEndedAt).toMatch(TIMESTAMP);
    });

    it('a monitored screening under the reference of a monitored one replaces it (a profile change)', async () => {
      const org = await t.org();
      const old = (await http.post(BASE, org.liveSecret, { ...person('Adaeze Nwankwo', { dob: '1990' }), reference: 'cust-9', monitor: true })).json().data;
      const unmonitored = (await http.post(BASE, org.liveSecret, { ...person('Adaeze Nwankwo'), reference: 'cust-9' })).json().data;
      expect((await http.get(`${BASE}/${old.id}`, org.liveSecret)).json().data.monitored).toBe(true);
      const other = (await t.org()).liveSecret;
      await http.post(BASE, other, { ...person('Adaeze Nwankwo'), reference: 'cust-9', monitor: true });
      const renewed = (await http.post(BASE, org.liveSecret, { ...person('Adaeze Nwankwo-Bello', { dob: '1990-05-01' }), reference: 'cust-9', monitor: true })).json().data;
      expect(renewed.monitored).toBe(true);
      expect((await http.get(`${BASE}/${old.id}`, org.liveSecret)).json().data).toMatchObject({ monitored: false, monitoringEndReason: 'replaced' });
      expect((await http.get(`${BASE}/${unmonitored.id}`, org.liveSecret)).json().data.monitoringEndReason).toBe('');
    });
  });
});

describe('screenings API before the operator loads a list', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
  });
  afterAll(() => t.close());

  it('a live screening is 503 in style A, nothing charged or stored; test mode screens the sandbox list', async () => {
    const org = await t.org({ fund: PRICE });
    const refused = expectStyleA(await http.post(BASE, org.liveSecret, person('Garba Danladi Yusufari')), 503, 'SERVICE_UNAVAILABLE');
    expect(refused.message).toMatch(/vouch lists import/);
    expect(await balanceOf(t.database.db, org.id)).toBe(PRICE);
    expect((await http.get(BASE, org.liveSecret)).json().data).toEqual([]);
    const sandbox = await http.post(BASE, org.testSecret, person('Musa Adamu Karfe'));
    expect(sandbox.statusCode).toBe(201);
    expect(sandbox.json().data.status.status).toBe('PENDING_REVIEW');
  });
});
