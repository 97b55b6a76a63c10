import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRegistry } from '../../src/identities/registry/import.js';
import { loadTestIdentities } from '../../src/identities/registry/test-identities.js';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { BUSINESS_BODY, client, deliveriesOf, expectStyleA, IN_PROGRESS } from '../agents/fixtures.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';

/**
 * Issue 19, item 4: a business verification with only an rcNumber and the applicant, as real
 * clients send it. The company is found in the corporate registry (the sandbox in test mode, the
 * embedded registry in live mode here; upstreams: test/upstreams/outage.test.ts) and its
 * registered head office is visited; the record says where the address came from.
 */

const BASE = '/v1/verifications/businesses';
const { street: _street, lga: _lga, state: _state, name: _name, ...ONLY_RC } = BUSINESS_BODY;
const BUSINESS_PRICE = 250_000;

const company = (rcNumber: string, type: string, fields: object) => ({
  type,
  rcNumber,
  companyName: `Company ${rcNumber}`,
  status: 'ACTIVE',
  ...fields,
});

describe('business verification by rcNumber alone', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    t = await buildTestContext();
    http = client(t.app);
    const records = [
      // No lga or state fields: both are read from the address text.
      company('4410021', 'limited_company', { headOfficeAddress: '15 Ahmadu Bello Way, Kaduna North, Kaduna State', city: 'Kaduna' }),
      // A business name (BN), its LGA in the record spelled loosely.
      company('2210034', 'business', { headOfficeAddress: '7 Allen Avenue, Ikeja', lga: 'ikeja lga', state: 'lagos state' }),
      // An address that names no state: it cannot be visited without one.
      company('3310045', 'limited_company', { headOfficeAddress: '9 Market Road', city: 'Somewhere' }),
      // A street named after an LGA is not that LGA.
      company('5510056', 'limited_company', { headOfficeAddress: '3 Ikorodu Road, Lagos' }),
      // No head-office address at all.
      company('6610067', 'incorprated_trustee', {}),
    ];
    await importRegistry(t.database.db, (async function* () {
      yield `${records.map((record) => JSON.stringify({ type: 'cac', record })).join('\n')}\n`;
    })());
  });
  afterAll(() => t.close());

  it('test mode: visits the sandbox company\'s head office, named from the registry, and says so', async () => {
    const org = await t.org();
    const cac = (await loadTestIdentities()).cac;
    for (const rcNumber of [String(cac.rcNumber), `RC ${cac.rcNumber}`]) {
      const res = await http.post(BASE, org.testSecret, { ...ONLY_RC, rcNumber });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        business: { name: cac.companyName, rcNumber: rcNumber.replace(/\s/g, '') },
        street: cac.headOfficeAddress,
        city: cac.city,
        lga: 'Eti-Osa',
        state: 'Lagos',
        country: 'Nigeria',
        landmark: '',
        addressSource: 'corporate_registry',
        status: IN_PROGRESS,
        applicant: { firstname: 'Chidi', lastname: 'Eze' },
      });
    }
    // A name sent is kept: the agent checks it against the sign on site.
    const named = await http.post(BASE, org.testSecret, { ...ONLY_RC, rcNumber: cac.rcNumber, businessName: 'Kolanut Tech' });
    expect(named.json().data).toMatchObject({ business: { name: 'Kolanut Tech' }, addressSource: 'corporate_registry', lga: 'Eti-Osa' });
  });

  it('records a request\'s own address as `applicant`, rcNumber or not; the fetched record and the webhook say the same', async () => {
    const org = await t.org();
    // Events of a scope without an endpoint are recorded without their bodies.
    await setWebhookEndpoint(t.database.db, { orgId: org.id, mode: 'test' }, { url: 'http://127.0.0.1:9/hooks' }, { allowPrivateUrls: true });
    const cac = (await loadTestIdentities()).cac;
    const created = (await http.post(BASE, org.testSecret, { ...BUSINESS_BODY, rcNumber: cac.rcNumber })).json().data;
    expect(created).toMatchObject({ street: '4 Broad Street', lga: 'Lagos Island', addressSource: 'applicant', business: { name: 'Mama Put Ventures' } });
    const fromRegistry = (await http.post(BASE, org.testSecret, { ...ONLY_RC, rcNumber: cac.rcNumber })).json().data;
    expect((await http.get(`${BASE}/${fromRegistry.id}`, org.testSecret)).json().data.addressSource).toBe('corporate_registry');
    await http.post(`/v1/test-helpers/businesses/${fromRegistry.id}/complete`, org.testSecret, { outcome: 'verified' });
    const [delivery] = await deliveriesOf(t.database.db, org.id);
    expect(delivery!.payload.data).toMatchObject({ id: fromRegistry.id, addressSource: 'corporate_registry', street: cac.headOfficeAddress });
  });

  it('answers 400 naming the missing address fields when the company is not found, and creates nothing', async () => {
    const org = await t.org();
    const error = expectStyleA(await http.post(BASE, org.testSecret, { ...ONLY_RC, rcNumber: 'RC999999' }), 400, 'VALIDATION_ERROR');
    expect(error.message).toBe(
      'name (or businessName) is required; street is required; lga is required; state is required; the corporate registry has no head-office address we can visit for rcNumber RC999999, so the address must be sent',
    );
    expect((await http.get(BASE, org.testSecret)).json()._pagination.total).toBe(0);
  });

  it('uses the registry only when no part of the place is sent, and only with a valid rcNumber', async () => {
    const org = await t.org();
    const cac = (await loadTestIdentities()).cac;
    const partial = expectStyleA(await http.post(BASE, org.testSecret, { ...ONLY_RC, rcNumber: cac.rcNumber, street: '1 Marina' }), 400, 'VALIDATION_ERROR');
    expect(partial.message).toBe('state is required; lga is required; name (or businessName) is required');
    const noRc = expectStyleA(await http.post(BASE, org.testSecret, ONLY_RC), 400, 'VALIDATION_ERROR');
    expect(noRc.message).toBe('street is required; state is required; lga is required; name (or businessName) is required');
    const badRc = expectStyleA(await http.post(BASE, org.testSecret, { ...ONLY_RC, rcNumber: 'not a number' }), 400, 'VALIDATION_ERROR');
    expect(badRc.message).toMatch(/^rcNumber must be a registration number/);
    expect(badRc.message).toMatch(/street is required/);
    // Other problems are named before any lookup, together.
    const bad = expectStyleA(await http.post(BASE, org.testSecret, { ...ONLY_RC, rcNumber: cac.rcNumber, applicant: { email: 'x@' } }), 400, 'VALIDATION_ERROR');
    expect(bad.message).toBe('applicant.email must be an email address');
  });

  describe('live mode: the embedded corporate registry', () => {
    it('reads the state and LGA from the address text, charges the business price once and no CAC lookup', async () => {
      const org = await t.org({ fund: 1_000_000 });
      const res = await http.post(BASE, org.liveSecret, { ...ONLY_RC, rcNumber: '4410021' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        business: { name: 'Company 4410021', rcNumber: '4410021' },
        street: '15 Ahmadu Bello Way, Kaduna North, Kaduna State',
        city: 'Kaduna',
        lga: 'Kaduna North',
        state: 'Kaduna',
        addressSource: 'corporate_registry',
      });
      expect((await t.accounts.get(org.id)).balance).toBe(1_000_000 - BUSINESS_PRICE);
      const usage = await t.database.db.selectFrom('usage_events').select(['type', 'outcome', 'price']).where('org_id', '=', org.id).execute();
      expect(usage).toEqual([{ type: 'business', outcome: 'success', price: BUSINESS_PRICE }]);
      // The live field task is opened in the registry's state and LGA.
      const task = await t.database.db.selectFrom('field_tasks').select(['state', 'lga']).where('org_id', '=', org.id).executeTakeFirstOrThrow();
      expect(task).toEqual({ state: 'Kaduna', lga: 'Kaduna North' });
    });

    it('finds a business name by its BN prefix, and an unprefixed number under any registry type', async () => {
      const org = await t.org({ fund: 1_000_000 });
      for (const rcNumber of ['BN2210034', '2210034', '6610067', 'IT6610067']) {
        const res = await http.post(BASE, org.liveSecret, { ...ONLY_RC, rcNumber });
        if (rcNumber.endsWith('6610067')) {
          // Found, but without a head-office address: answered as an unknown company is.
          expect(expectStyleA(res, 400, 'VALIDATION_ERROR').message).toBe(`name (or businessName) is required; street is required; lga is required; state is required; the corporate registry has no head-office address we can visit for rcNumber ${rcNumber}, so the address must be sent`);
          continue;
        }
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data).toMatchObject({ lga: 'Ikeja', state: 'Lagos', addressSource: 'corporate_registry' });
      }
      // The registry type follows the prefix: RC is a limited company, and 2210034 is a business name.
      const wrongType = expectStyleA(await http.post(BASE, org.liveSecret, { ...ONLY_RC, rcNumber: 'RC2210034' }), 400, 'VALIDATION_ERROR');
      expect(wrongType.message).toMatch(/the corporate registry has no head-office address we can visit for rcNumber RC2210034/);
    });

    it('answers an address without a known state or LGA as an unknown company, naming the same fields; nothing charged', async () => {
      const org = await t.org({ fund: 1_000_000 });
      // 3310045: no state we know; 5510056: no LGA; 6610067: no address; RC999999: no company. The
      // 400 is free, so none of them may tell which companies exist.
      const answers = [];
      for (const rcNumber of ['3310045', '5510056', '6610067', '7710999']) {
        const error = expectStyleA(await http.post(BASE, org.liveSecret, { ...ONLY_RC, rcNumber, name: 'Acme' }), 400, 'VALIDATION_ERROR');
        answers.push(error.message.replace(rcNumber, 'N'));
      }
      expect(new Set(answers)).toEqual(new Set(['street is required; lga is required; state is required; the corporate registry has no head-office address we can visit for rcNumber N, so the address must be sent']));
      expect((await t.accounts.get(org.id)).balance).toBe(1_000_000);
    });

    it('keeps the CAC lookup price when a business found in the registry is cancelled before its visit', async () => {
      const org = await t.org({ fund: 1_000_000 });
      const found = (await http.post(BASE, org.liveSecret, { ...ONLY_RC, rcNumber: '4410021' })).json().data;
      expect((await http.del(`${BASE}/${found.id}`, org.liveSecret)).statusCode).toBe(200);
      expect((await t.accounts.get(org.id)).balance).toBe(1_000_000 - IDENTITY_BILLABLES.cac.defaultPrice);
      // A business at an address the customer sent is refunded whole.
      const sent = (await http.post(BASE, org.liveSecret, { ...ONLY_RC, rcNumber: '4410021', street: '1 Marina', lga: 'Lagos Island', state: 'Lagos', name: 'Acme' })).json().data;
      expect(sent.addressSource).toBe('applicant');
      expect((await http.del(`${BASE}/${sent.id}`, org.liveSecret)).statusCode).toBe(200);
      expect((await t.accounts.get(org.id)).balance).toBe(1_000_000 - IDENTITY_BILLABLES.cac.defaultPrice);
      const refunds = await t.database.db.selectFrom('ledger_entries').select(['kind', 'amount', 'description']).where('org_id', '=', org.id).where('kind', '=', 'refund').orderBy('id').execute();
      expect(refunds.map((row) => [Number(row.amount), row.description])).toEqual([
        [BUSINESS_PRICE - IDENTITY_BILLABLES.cac.defaultPrice, expect.stringMatching(/cancelled before a visit \(its corporate registry lookup kept\)$/)],
        [BUSINESS_PRICE, expect.stringMatching(/cancelled before a visit$/)],
      ]);
    });

    it('answers 402 before the registry is asked when the wallet cannot pay', async () => {
      const org = await t.org({ fund: 0 });
      expectStyleA(await http.post(BASE, org.liveSecret, { ...ONLY_RC, rcNumber: '4410021' }), 402, 'PAYMENT_REQUIRED');
      expectStyleA(await http.post(BASE, org.liveSecret, { ...ONLY_RC, rcNumber: 'RC999999' }), 402, 'PAYMENT_REQUIRED');
      expect((await http.get(BASE, org.liveSecret)).json()._pagination.total).toBe(0);
    });
  });

  it('documents addressSource and the optional place in the OpenAPI document', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const create = spec.paths['/v1/verifications/businesses'].post;
    const body = create.requestBody.content['application/json'].schema;
    expect(body.required ?? []).not.toContain('street');
    expect(Object.keys(create.responses)).toContain('503');
    const record = create.responses['200'].content['application/json'].schema.properties.data;
    const options = record.properties.addressSource.anyOf as { const?: string; enum?: string[] }[];
    expect(options.map((option) => option.const ?? option.enum?.[0])).toEqual(['applicant', 'corporate_registry']);
    expect(record.required).toContain('addressSource');
  });
});
