import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedOrganization } from '../../src/accounts/service.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { ADDRESS_BODY, client, expectStyleA } from '../agents/fixtures.js';
import { sansRequestId } from '../helpers/app.js';

/**
 * The address-by-identity lookup shares verified addresses between organizations in live mode
 * (the marketplace). In test mode it must not: anyone can open an account and get a test secret,
 * and sandbox addresses are whatever another customer typed while integrating, real people's
 * addresses included. A test secret finds only its own organization's test addresses.
 */

const BASE = '/v1/verifications/addresses';
const MARKET = `${BASE}/marketplace`;
const IDENTITY = { ...ADDRESS_BODY.applicant, idNumber: '81818181818' };
const QUERY = { maxAddressAge: '6M', firstname: IDENTITY.firstname, lastname: IDENTITY.lastname, idType: 'NIN', idNumber: IDENTITY.idNumber };

describe('address by identity in test mode: each organization sees its own sandbox only', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let a: CreatedOrganization;
  let b: CreatedOrganization;
  let verifiedId: string;

  beforeAll(async () => {
    t = await buildTestContext();
    http = client(t.app);
    a = await t.org({ riskLevel: 'LOW' });
    b = await t.org();
    const created = await http.post(BASE, a.testSecret, { ...ADDRESS_BODY, street: '7 Private Close', reference: 'a-private-ref', applicant: IDENTITY });
    expect(created.statusCode, created.body).toBe(201);
    verifiedId = created.json().data.id;
    const done = await http.post(`/v1/test-helpers/addresses/${verifiedId}/complete`, a.testSecret, { outcome: 'verified' });
    expect(done.statusCode, done.body).toBe(200);
  });
  afterAll(() => t.close());

  it("finds the organization's own verified test address", async () => {
    const own = await http.post(MARKET, a.testSecret, QUERY);
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json().data).toMatchObject({ id: verifiedId, street: '7 Private Close' });
  });

  it("answers another organization's test secret 404, with nothing of the first organization's", async () => {
    const other = await http.post(MARKET, b.testSecret, QUERY);
    const error = expectStyleA(other, 404, 'NOT_FOUND_ERROR');
    expect(error.message).toMatch(/^Address not found/);
    // The body but its own request id (random hex, which may hold the id's digits).
    const shown = JSON.stringify(sansRequestId(other.json()));
    expect(shown).not.toContain('Private Close');
    expect(shown).not.toContain(String(verifiedId));
  });

  it("does not find it through the other organization's live secret either", async () => {
    expectStyleA(await http.post(MARKET, b.liveSecret, QUERY), 404, 'NOT_FOUND_ERROR');
  });
});
