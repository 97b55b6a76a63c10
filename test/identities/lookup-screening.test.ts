import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { loadTestIdentities, type TestIdentities } from '../../src/identities/registry/test-identities.js';
import { SCREENING_BILLABLES } from '../../src/screening/billing.js';
import { importList } from '../../src/screening/lists/import.js';
import { setOrganizationScreening } from '../../src/screening/organization-setting.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

/**
 * Identity lookups of an organization that screens every lookup (issue 51, part 3): the person or
 * company found is screened, and the answer carries `data.screening`; other organizations' answers
 * are unchanged.
 */

const LISTED_NIN = '51515151511';
const LISTED_RC = '7654321';
const LIST = [
  'id,schema,name,aliases,birthDate,nationality,topics,program,notes',
  'NG-TS-0101,Person,Garba Sule Danfulani,,1966-09-14,NG,sanction,Nigeria Sanctions List,',
  'NG-TS-0102,Organization,Danfulani Agro Commodities Limited,Danfulani Agro,,NG,sanction,Nigeria Sanctions List,',
].join('\n');
const NIN_PRICE = IDENTITY_BILLABLES.nin.defaultPrice;
const SCREENING_PRICE = SCREENING_BILLABLES.screening.defaultPrice;

let t: TestContext;
let identities: TestIdentities;

beforeAll(async () => {
  t = await buildTestContext();
  identities = await loadTestIdentities();
  const records = [
    { type: 'nin', record: { ...identities.nin, nin: LISTED_NIN, firstname: 'Garba', middlename: 'Sule', lastname: 'Danfulani', birthdate: '14-09-1966', gender: 'Male', phone: '08035550101' } },
    { type: 'cac', record: { ...identities.cac, rcNumber: LISTED_RC, companyName: 'DANFULANI AGRO COMMODITIES LTD' } },
  ];
  await importRegistry(t.database.db, Readable.from([records.map((line) => JSON.stringify(line)).join('\n')]));
  await importList(t.database.db, { source: 'ng-sanctions', format: 'csv', files: { main: Buffer.from(LIST) } });
  await t.app.screeningLists.refresh();
}, 60_000);

afterAll(async () => {
  await t?.close();
});

const lookup = (secret: string, nin: string) => t.app.inject({ method: 'POST', url: `/v1/verifications/identities/nin/${nin}`, headers: bearer(secret), payload: {} });

async function screeningOrg(fund?: number) {
  const org = await t.org(fund === undefined ? {} : { fund });
  await setOrganizationScreening(t.database.db, org.id, { sessions: false, lookups: true }, { kind: 'cli' });
  return org;
}

describe('lookups of an organization that screens them', () => {
  it('live: the listed person found is a screening with a hit to review; the lookup and the screening are each charged', async () => {
    const org = await screeningOrg(NIN_PRICE + SCREENING_PRICE);
    const res = await lookup(org.liveSecret, LISTED_NIN);
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({ nin: LISTED_NIN, firstname: 'Garba', screening: { id: expect.any(Number), status: 'PENDING_REVIEW', hits: 1 } });
    const screening = (await t.app.inject({ method: 'GET', url: `/v1/verifications/screenings/${data.screening.id}`, headers: bearer(org.liveSecret) })).json().data;
    expect(screening.subject).toMatchObject({ type: 'person', firstname: 'Garba', middlename: 'Sule', lastname: 'Danfulani', dob: '1966-09-14', gender: 'male' });
    expect(screening.hits.map((hit: { entityId: string }) => hit.entityId)).toEqual(['NG-TS-0101']);
    const usage = await t.database.db.selectFrom('usage_events').select(['type', 'price']).where('org_id', '=', org.id).orderBy('id').execute();
    expect(usage.map((row) => [row.type, Number(row.price)])).toEqual([
      ['nin', NIN_PRICE],
      ['screening', SCREENING_PRICE],
    ]);
  });

  it('live: a company lookup screens the company, its legal form written another way', async () => {
    const org = await screeningOrg();
    const res = await t.app.inject({ method: 'POST', url: '/v1/verifications/identities/cac', headers: bearer(org.liveSecret), payload: { type: 'limited_company', rcNumber: LISTED_RC } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.screening).toMatchObject({ status: 'PENDING_REVIEW', hits: 1 });
  });

  it('test mode: the sandbox list, free; a test identity is clear', async () => {
    const org = await screeningOrg();
    const res = await lookup(org.testSecret, identities.nin.nin);
    expect(res.json().data.screening).toEqual({ id: expect.any(Number), status: 'CLEAR', hits: 0 });
  });

  it('a wallet that pays the lookup but not the screening keeps the answer, and says it was not screened', async () => {
    const org = await screeningOrg(NIN_PRICE);
    const res = await lookup(org.liveSecret, LISTED_NIN);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ nin: LISTED_NIN, screening: { id: null, status: 'NOT_SCREENED', hits: 0, message: expect.stringMatching(/cannot pay the screening/) } });
    expect(await t.database.db.selectFrom('screenings').select('id').where('org_id', '=', org.id).execute()).toEqual([]);
  });

  it('an organization that does not screen its lookups gets the answer it always had', async () => {
    const org = await t.org();
    const res = await lookup(org.liveSecret, LISTED_NIN);
    expect(res.statusCode).toBe(201);
    expect(Object.keys(res.json().data)).not.toContain('screening');
    expect(await t.database.db.selectFrom('screenings').select('id').where('org_id', '=', org.id).execute()).toEqual([]);
  });
});
