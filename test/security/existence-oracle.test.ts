import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedOrganization } from '../../src/accounts/service.js';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { addSource } from '../../src/identities/upstreams/store.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { TEST_ENCRYPTION_KEY } from '../helpers/database.js';
import { ADDRESS_BODY } from '../agents/fixtures.js';
import { startFlaky, startUpstreamVouch, type TestServer, type UpstreamVouch } from '../upstreams/servers.js';
import { sansRequestId } from '../helpers/app.js';

/**
 * Finding 7: an enabled account with an empty wallet learned for free whether a number exists in
 * the live registry (402 for a known number, 404 for an unknown one) and cost the operator an
 * upstream call each time. An account that cannot pay must get one answer whatever the number,
 * before anything is looked up. The live registry here is an upstream (a second Vouch behind a
 * forwarding server that counts what reaches it).
 */

const ID = '/v1/verifications/identities';
const MARKET = '/v1/verifications/addresses/marketplace';

interface Probe {
  name: string;
  method: 'GET' | 'POST';
  known: { url: string; payload?: object };
  unknown: { url: string; payload?: object };
  /** The lookup reaches the upstream registry (everything but the address marketplace). */
  upstream: boolean;
}

let upstream: UpstreamVouch;
let proxy: TestServer & { broken: boolean };
let t: TestContext;
let funded: CreatedOrganization;
let broke: CreatedOrganization;
let probes: Probe[];

const send = (secret: string, method: 'GET' | 'POST', request: { url: string; payload?: object }) =>
  t.app.inject({ method, url: request.url, headers: bearer(secret), ...(method === 'POST' ? { payload: request.payload ?? {} } : {}) });

beforeAll(async () => {
  upstream = await startUpstreamVouch();
  proxy = await startFlaky(upstream.url);
  proxy.broken = false;
  t = await buildTestContext({ upstreams: { reloadIntervalMs: 100, healthWriteIntervalMs: 0 } });
  await addSource(t.database.db, TEST_ENCRYPTION_KEY, { name: 'primary', kind: 'verifyme', url: proxy.url, secret: upstream.liveSecret, timeoutMs: 5_000 });
  await new Promise((resolve) => setTimeout(resolve, 300));
  funded = await t.org({ fund: 10_000_000 });
  broke = await t.org({ fund: 0 });

  // A live verified address for the marketplace (live verifications complete through an agent; set directly here).
  const owner = await t.org({ fund: 10_000_000, riskLevel: 'LOW' });
  const created = await t.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(owner.liveSecret), payload: ADDRESS_BODY });
  expect(created.statusCode, created.body).toBe(201);
  await t.database.db.updateTable('address_verifications').set({ status: 'verified', completed_at: new Date() }).where('id', '=', created.json().data.id).execute();

  const ids = upstream.identities;
  const photo = (await sharp({ create: { width: 96, height: 96, channels: 3, background: '#8a6f5a' } }).jpeg().toBuffer()).toString('base64');
  const market = { maxAddressAge: '6M', firstname: ADDRESS_BODY.applicant.firstname, lastname: ADDRESS_BODY.applicant.lastname, idType: 'NIN' };
  probes = [
    { name: 'bvn', method: 'POST', known: { url: `${ID}/bvn/${ids.bvn.bvn}` }, unknown: { url: `${ID}/bvn/22000000009` }, upstream: true },
    { name: 'bvn premium', method: 'POST', known: { url: `${ID}/bvn/${ids.bvn.bvn}?type=premium` }, unknown: { url: `${ID}/bvn/22000000009?type=premium` }, upstream: true },
    { name: 'bvn match', method: 'POST', known: { url: `${ID}/bvn/${ids.bvn.bvn}/match` }, unknown: { url: `${ID}/bvn/22000000009/match` }, upstream: true },
    { name: 'nin', method: 'POST', known: { url: `${ID}/nin/${ids.nin.nin}` }, unknown: { url: `${ID}/nin/70000000009` }, upstream: true },
    { name: 'nin by phone', method: 'POST', known: { url: `${ID}/nin_phone/${ids.nin.phone}` }, unknown: { url: `${ID}/nin_phone/08099999999` }, upstream: true },
    { name: 'virtual nin', method: 'POST', known: { url: `${ID}/virtual-nin/${ids.vnin.vNin}` }, unknown: { url: `${ID}/virtual-nin/TV000000000000ZZ` }, upstream: true },
    { name: 'drivers license', method: 'POST', known: { url: `${ID}/drivers_license/${ids.drivers_license.licenseNo}` }, unknown: { url: `${ID}/drivers_license/ZZZ00000ZZ00` }, upstream: true },
    { name: 'voters card', method: 'POST', known: { url: `${ID}/vin/${ids.vin.vin}` }, unknown: { url: `${ID}/vin/90F5B0000C000000000` }, upstream: true },
    {
      name: 'cac',
      method: 'POST',
      known: { url: `${ID}/cac`, payload: { type: ids.cac.type, rcNumber: ids.cac.rcNumber } },
      unknown: { url: `${ID}/cac`, payload: { type: ids.cac.type, rcNumber: '9999999' } },
      upstream: true,
    },
    { name: 'tin', method: 'GET', known: { url: `${ID}/tin/${ids.tin.tin}` }, unknown: { url: `${ID}/tin/99999999-0009` }, upstream: true },
    {
      name: 'biometrics',
      method: 'POST',
      known: { url: `${ID}/biometrics`, payload: { idType: 'nin', idNumber: ids.nin.nin, photo } },
      unknown: { url: `${ID}/biometrics`, payload: { idType: 'nin', idNumber: '70000000009', photo } },
      upstream: true,
    },
    {
      name: 'address by identity',
      method: 'POST',
      known: { url: MARKET, payload: { ...market, idNumber: ADDRESS_BODY.applicant.idNumber } },
      unknown: { url: MARKET, payload: { ...market, idNumber: '12300000009' } },
      upstream: false,
    },
  ];
}, 60_000);

afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await upstream?.context.close();
});

describe('finding 7: no existence oracle for an account that cannot pay', () => {
  it('the numbers used are known and unknown to a funded account, and its lookups go to the upstream', async () => {
    for (const probe of probes.filter((p) => p.name !== 'biometrics')) {
      const before = proxy.requests();
      const known = await send(funded.liveSecret, probe.method, probe.known);
      expect(known.statusCode, `${probe.name}: ${known.body}`).toBeLessThan(300);
      expect((await send(funded.liveSecret, probe.method, probe.unknown)).statusCode, probe.name).toBe(404);
      if (probe.upstream) expect(proxy.requests(), probe.name).toBeGreaterThan(before);
    }
  });

  it('answers 402 alike for a known and an unknown number, for every priced lookup, without asking the upstream', async () => {
    for (const probe of probes) {
      const before = proxy.requests();
      const known = await send(broke.liveSecret, probe.method, probe.known);
      const unknown = await send(broke.liveSecret, probe.method, probe.unknown);
      expect(known.statusCode, `${probe.name} known: ${known.body}`).toBe(402);
      expect(unknown.statusCode, `${probe.name} unknown: ${unknown.body}`).toBe(402);
      expect(sansRequestId(known.json()), probe.name).toEqual(sansRequestId(unknown.json()));
      expect(known.body.length, probe.name).toBe(unknown.body.length);
      expect(proxy.requests(), `${probe.name}: requests that reached the upstream`).toBe(before);
    }
  });

  it('records both refusals the same way: the usage list the account reads tells them apart no more than the answer', async () => {
    const rows = await t.database.db.selectFrom('usage_events').select(['type', 'outcome', 'price']).where('org_id', '=', broke.id).execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row, row.type).toMatchObject({ outcome: 'insufficient_funds', price: 0 });
    expect(await t.database.db.selectFrom('ledger_entries').select('id').where('org_id', '=', broke.id).execute()).toEqual([]);
  });

  it('a wallet that holds one price pays for one of two concurrent lookups; the other is refused 402, uncharged', async () => {
    const price = IDENTITY_BILLABLES.bvn_basic.defaultPrice;
    const exact = await t.org({ fund: price });
    const known = probes[0]!.known;
    const answers = await Promise.all([send(exact.liveSecret, 'POST', known), send(exact.liveSecret, 'POST', known)]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 402]);
    expect((await t.accounts.get(exact.id)).balance).toBe(0);
  });
});
