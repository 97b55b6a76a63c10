import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUSINESS_BILLABLES } from '../../src/businesses/service.js';
import { SCREENING_BILLABLES } from '../../src/screening/billing.js';
import { importList } from '../../src/screening/lists/import.js';
import { setOrganizationScreening } from '../../src/screening/organization-setting.js';
import { BUSINESS_BODY, client, expectStyleA } from '../agents/fixtures.js';
import { bearer, buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { balanceOf } from '../respondents/fixtures.js';

/**
 * Business verifications of an organization that screens every one (issue 51: "a business
 * verification or CAC lookup can screen the company"): the company is screened in the
 * verification's transaction and the answer carries `screening`; a screening that cannot be made
 * leaves NOT_SCREENED and the verification is still created; other organizations' answers are
 * unchanged.
 */

const BASE = '/v1/verifications/businesses';
const SCREENINGS = '/v1/verifications/screenings';
const BUSINESS_PRICE = BUSINESS_BILLABLES.business.defaultPrice;
const SCREENING_PRICE = SCREENING_BILLABLES.screening.defaultPrice;
const LIST = [
  'id,schema,name,aliases,birthDate,nationality,topics,program,notes',
  'NG-TS-0201,Organization,Obsidian Harbour Freight Limited,Obsidian Harbour,,NG,sanction,Nigeria Sanctions List,',
].join('\n');
const LISTED = { ...BUSINESS_BODY, name: 'OBSIDIAN HARBOUR FREIGHT LTD', type: 'Formal' };

let t: TestContext;
let http: ReturnType<typeof client>;

beforeAll(async () => {
  t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
  http = client(t.app);
  await importList(t.database.db, { source: 'ng-sanctions', format: 'csv', files: { main: Buffer.from(LIST) } });
  await t.app.screeningLists.refresh();
}, 60_000);
afterAll(() => t.close());

async function screeningOrg(fund?: number) {
  const org = await t.org(fund === undefined ? {} : { fund });
  await setOrganizationScreening(t.database.db, org.id, { sessions: false, lookups: false, businesses: true }, { kind: 'cli' });
  return org;
}

const screeningsOf = (orgId: string) => t.database.db.selectFrom('screenings').select(['id', 'mode', 'reference']).where('org_id', '=', orgId).execute();

describe('business verifications of an organization that screens them', () => {
  it('live: a listed company is a screening with a hit to review, made with the verification and charged beside it; the record keeps it', async () => {
    const org = await screeningOrg(BUSINESS_PRICE + SCREENING_PRICE);
    const res = await http.post(BASE, org.liveSecret, { ...LISTED, reference: 'biz-screened-1' });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data.screening).toEqual({ id: expect.any(Number), status: 'PENDING_REVIEW', hits: 1 });
    expect(data.screeningId).toBe(data.screening.id);
    const screening = (await http.get(`${SCREENINGS}/${data.screening.id}`, org.liveSecret)).json().data;
    expect(screening).toMatchObject({ reference: 'biz-screened-1', subject: { type: 'organization', name: 'OBSIDIAN HARBOUR FREIGHT LTD', nationality: 'NG' }, metadata: { businessVerification: 'biz-screened-1' } });
    expect(screening.hits.map((hit: { entityId: string }) => hit.entityId)).toEqual(['NG-TS-0201']);
    expect(await balanceOf(t.database.db, org.id)).toBe(0);
    // A read of the verification names the screening, not its outcome of the day (review may change it).
    const read = (await http.get(`${BASE}/${data.id}`, org.liveSecret)).json().data;
    expect(read.screeningId).toBe(data.screening.id);
    expect(read).not.toHaveProperty('screening');
    expect((await http.get(BASE, org.liveSecret)).json().data[0].screeningId).toBe(data.screening.id);
  });

  it('test mode screens the sandbox list, free: the sandbox company hits, another is clear', async () => {
    const org = await screeningOrg();
    const hit = (await http.post(BASE, org.testSecret, { ...BUSINESS_BODY, name: 'Karfe Petroleum Trading Limited' })).json().data;
    expect(hit.screening).toMatchObject({ status: 'PENDING_REVIEW', hits: 1 });
    const clear = (await http.post(BASE, org.testSecret, BUSINESS_BODY)).json().data;
    expect(clear.screening).toEqual({ id: expect.any(Number), status: 'CLEAR', hits: 0 });
    expect((await screeningsOf(org.id)).map((row) => row.mode)).toEqual(['test', 'test']);
  });

  it('a wallet that pays the verification but not the screening creates it, not screened and says why; one that pays neither is 402 with nothing kept', async () => {
    const org = await screeningOrg(BUSINESS_PRICE);
    const res = await http.post(BASE, org.liveSecret, LISTED);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.screening).toEqual({ id: null, status: 'NOT_SCREENED', hits: 0, message: expect.stringMatching(/cannot pay the screening/) });
    expect(res.json().data).not.toHaveProperty('screeningId');
    expect(await screeningsOf(org.id)).toEqual([]);
    expect(await balanceOf(t.database.db, org.id)).toBe(0);

    const poor = await screeningOrg(SCREENING_PRICE);
    expectStyleA(await http.post(BASE, poor.liveSecret, LISTED), 402, 'PAYMENT_REQUIRED');
    expect(await screeningsOf(poor.id)).toEqual([]);
    expect(await balanceOf(t.database.db, poor.id)).toBe(SCREENING_PRICE);
    expect((await http.get(BASE, poor.liveSecret)).json()._pagination.total).toBe(0);
  });

  it('a reference already used is 409 with no screening stored or charged', async () => {
    const org = await screeningOrg((BUSINESS_PRICE + SCREENING_PRICE) * 2);
    expect((await http.post(BASE, org.liveSecret, { ...LISTED, reference: 'biz-dup' })).statusCode).toBe(200);
    expectStyleA(await http.post(BASE, org.liveSecret, { ...LISTED, reference: 'biz-dup' }), 409, 'CONFLICT');
    expect(await screeningsOf(org.id)).toHaveLength(1);
    expect(await balanceOf(t.database.db, org.id)).toBe(BUSINESS_PRICE + SCREENING_PRICE);
  });

  it('an Idempotency-Key replays the answer with its screening: one verification, one screening, one charge each', async () => {
    const org = await screeningOrg((BUSINESS_PRICE + SCREENING_PRICE) * 2);
    const send = () => t.app.inject({ method: 'POST', url: BASE, headers: { ...bearer(org.liveSecret), 'idempotency-key': 'biz-key-1' }, payload: LISTED });
    const first = await send();
    const again = await send();
    expect(first.statusCode, first.body).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(await screeningsOf(org.id)).toHaveLength(1);
    expect(await balanceOf(t.database.db, org.id)).toBe(BUSINESS_PRICE + SCREENING_PRICE);
  });

  it('an organization that does not screen its business verifications gets the answer it always had', async () => {
    const org = await t.org();
    await setOrganizationScreening(t.database.db, org.id, { sessions: true, lookups: true }, { kind: 'cli' });
    const data = (await http.post(BASE, org.testSecret, { ...BUSINESS_BODY, name: 'Karfe Petroleum Trading Limited' })).json().data;
    expect(Object.keys(data)).not.toContain('screening');
    expect(Object.keys(data)).not.toContain('screeningId');
    expect(await screeningsOf(org.id)).toEqual([]);
  });
});

describe('business verifications before the operator loads a list', () => {
  let bare: TestContext;
  beforeAll(async () => {
    bare = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
  });
  afterAll(() => bare.close());

  it('live: created and charged alone, NOT_SCREENED with the reason', async () => {
    const org = await bare.org({ fund: BUSINESS_PRICE + SCREENING_PRICE });
    await setOrganizationScreening(bare.database.db, org.id, { sessions: false, lookups: false, businesses: true }, { kind: 'cli' });
    const res = await client(bare.app).post(BASE, org.liveSecret, LISTED);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.screening).toEqual({ id: null, status: 'NOT_SCREENED', hits: 0, message: expect.stringMatching(/No watchlist is loaded/) });
    expect(await balanceOf(bare.database.db, org.id)).toBe(SCREENING_PRICE);
  });
});
