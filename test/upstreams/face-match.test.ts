import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CreatedOrganization } from '../../src/accounts/service.js';
import { selfieForProvider } from '../../src/identities/biometrics/match-decision.js';
import { setFaceMatchRouting, type RoutingChoice } from '../../src/identities/biometrics/match-routing.js';
import { faceCrop, samplePath, samplePortraitBase64, TEST_IDENTITY_FACES, type SampleFace } from '../../src/identities/biometrics/samples.js';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { loadTestIdentities, type TestIdentities } from '../../src/identities/registry/test-identities.js';
import { addSource, listSources, removeSource, setOrder, UpstreamConfigError } from '../../src/identities/upstreams/store.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { startDojahServer, type DojahServer } from './dojah-server.js';
import { startUpstreamVouch, type UpstreamVouch } from './servers.js';
import { startYouverifyServer, type YouverifyServer } from './youverify-server.js';

/**
 * An organization's face matches routed to an upstream provider's selfie match (issue 50, part 6),
 * through the front door: a front Vouch whose live biometrics go to local fakes of Dojah and
 * Youverify that answer their documented requests with their documented bodies, and to a second
 * Vouch (the `verifyme` kind speaks the spec's biometrics endpoint), all over real sockets.
 */

const KEY = randomBytes(32);
const PATH = '/v1/verifications/identities/biometrics';
const PRICE = IDENTITY_BILLABLES.biometrics.defaultPrice;
/**
 * Long enough that a loaded machine makes the checks of an open circuit before it half-opens: at
 * 2 s a CI-style run with both suites and a container build beside it sent the fallback's match
 * after the cool-down, and the half-open probe reached the provider (8 requests, not 7).
 */
const COOL_DOWN_MS = 6_000;
const YOUVERIFY_TOKEN = 'yv_test_token_0123456789';
/** A face no test identity wears: the impostor (sample4.jpg). */
const OTHER_FACE: SampleFace = { sample: 4, box: { x: 664, y: 53, width: 187, height: 258 } };
/** A NIN the front's registry holds (with a photo of the NIN identity's face) that no provider knows. */
const UNKNOWN_TO_PROVIDERS = '31313131319';
/** A NIN the front's registry holds without a photo, that the providers know. */
const NO_PHOTO_NIN = '31313131318';

let front: TestContext;
let dojah: DojahServer;
let youverify: YouverifyServer;
let upstream: UpstreamVouch;
let identities: TestIdentities;
const selfies: Record<'nin' | 'bvn' | 'other', { bytes: Buffer; sent: string }> = {} as never;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * Config changes reach the running router on its next poll (100 ms here); on a loaded machine a
 * poll came late (a lookup sent 250 ms after adding sources found none: 404 from the embedded
 * registry), so the test catches the router up instead of waiting.
 */
const settle = () => front.app.upstreamRouter!.catchUp();

/** A selfie-like JPEG: the face's head and shoulders cut from its demo photo. */
async function selfie(face: SampleFace): Promise<Buffer> {
  const region = await faceCrop(face, 2.5);
  return sharp(samplePath(face.sample)).extract(region).resize(512, 640, { fit: 'inside' }).jpeg({ quality: 88 }).toBuffer();
}

function match(secret: string, idNumber: string, photo: Buffer, idType = 'nin') {
  return front.app.inject({ method: 'POST', url: PATH, headers: bearer(secret), payload: { idType, idNumber, photo: photo.toString('base64') } });
}

async function route(org: CreatedOrganization, choice: RoutingChoice) {
  await setFaceMatchRouting(front.database.db, org.id, choice, { kind: 'cli' });
}

async function usage(orgId: string) {
  return front.database.db.selectFrom('usage_events').select(['outcome', 'price', 'source']).where('org_id', '=', orgId).orderBy('id').execute();
}

async function balance(orgId: string) {
  return (await front.accounts.get(orgId)).balance;
}

async function addSources(timeouts: { dojah?: number; yv?: number } = {}) {
  const db = front.database.db;
  await addSource(db, KEY, { name: 'dojah', kind: 'dojah', url: dojah.url, secret: `${dojah.appId}:${dojah.secretKey}`, timeoutMs: timeouts.dojah ?? 10_000 });
  await addSource(db, KEY, { name: 'yv', kind: 'youverify', url: youverify.url, secret: YOUVERIFY_TOKEN, timeoutMs: timeouts.yv ?? 10_000 });
  await addSource(db, KEY, { name: 'vm', kind: 'verifyme', url: upstream.url, secret: upstream.liveSecret, timeoutMs: 20_000 });
  await lookupsStayLocal();
}

/** Lookups read the front's own registry: only face matches go to the providers. (Removing a source drops these orders.) */
async function lookupsStayLocal() {
  for (const type of ['nin', 'bvn'] as const) await setOrder(front.database.db, type, ['embedded']);
  await settle();
}

beforeAll(async () => {
  [upstream, dojah, youverify, identities] = await Promise.all([startUpstreamVouch(), startDojahServer(), startYouverifyServer(YOUVERIFY_TOKEN), loadTestIdentities()]);
  front = await buildTestContext({
    config: { encryptionKey: KEY },
    upstreams: { breaker: { failureThreshold: 2, coolDownMs: COOL_DOWN_MS }, reloadIntervalMs: 100, healthWriteIntervalMs: 0, retryAfterSeconds: 7 },
  });
  const ninFace = await samplePortraitBase64(TEST_IDENTITY_FACES.nin);
  const lines = [
    ...Object.entries(identities).map(([type, record]) => ({ type, record })),
    { type: 'nin', record: { ...identities.nin, nin: UNKNOWN_TO_PROVIDERS, photo: ninFace } },
    { type: 'nin', record: { ...identities.nin, nin: NO_PHOTO_NIN, photo: undefined } },
  ];
  await importRegistry(front.database.db, Readable.from([lines.map((line) => JSON.stringify(line)).join('\n')]));
  for (const [name, face] of [['nin', TEST_IDENTITY_FACES.nin], ['bvn', TEST_IDENTITY_FACES.bvn], ['other', OTHER_FACE]] as const) {
    const bytes = await selfie(face);
    selfies[name] = { bytes, sent: await selfieForProvider(bytes) };
  }
  // The providers know the NIN and BVN test identities (and NO_PHOTO_NIN), each with its holder's selfie.
  for (const server of [dojah, youverify]) {
    server.faces.set(identities.nin.nin, new Set([selfies.nin.sent]));
    server.faces.set(NO_PHOTO_NIN, new Set([selfies.nin.sent]));
  }
  dojah.faces.set(identities.bvn.bvn, new Set([selfies.bvn.sent]));
  await addSources();
}, 120_000);

afterAll(async () => {
  await front?.close();
  await Promise.all([dojah?.close(), youverify?.close(), upstream?.context.close()]);
});

beforeEach(() => {
  dojah.override = undefined;
  youverify.mode = 'documented';
});

/** What each provider's verdict on the genuine selfie looks like in the record. */
const PROVIDERS = [
  { source: 'dojah', genuine: { match: true, matchScore: 99.90354919433594, matchingThreshold: 90, maxScore: 100 } },
  { source: 'yv', genuine: { match: true, matchScore: 96.73, matchingThreshold: 80, maxScore: 100 } },
  // A second Vouch decides with its own model at its default threshold.
  { source: 'vm', genuine: { match: true, matchScore: expect.any(Number), matchingThreshold: 43, maxScore: 100 } },
] as const;

describe.each(PROVIDERS)('routed to $source', ({ source, genuine }) => {
  it('decides a match and a non-match on its own scale; the record names it; each is charged once', async () => {
    const org = await front.org({ fund: 10 * PRICE });
    await route(org, { engine: 'upstream', source });

    const same = await match(org.liveSecret, identities.nin.nin, selfies.nin.bytes);
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json().data).toMatchObject({ firstname: identities.nin.firstname, photoMatching: genuine, faceMatchEngine: source });

    const other = await match(org.liveSecret, identities.nin.nin, selfies.other.bytes);
    expect(other.statusCode, other.body).toBe(200);
    expect(other.json().data.photoMatching.match).toBe(false);
    expect(other.json().data.faceMatchEngine).toBe(source);

    expect(await usage(org.id)).toEqual([
      { outcome: 'success', price: PRICE, source: 'embedded' },
      { outcome: 'success', price: PRICE, source: 'embedded' },
    ]);
    expect(await balance(org.id)).toBe(8 * PRICE);
  }, 60_000);

  it('answers an identity it does not know as not found, uncharged', async () => {
    const org = await front.org({ fund: 10 * PRICE });
    await route(org, { engine: 'upstream', source });
    const res = await match(org.liveSecret, UNKNOWN_TO_PROVIDERS, selfies.nin.bytes);
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toEqual({ code: 'NOT_FOUND_ERROR', message: expect.stringMatching(/NIN not found/) , requestId: expect.stringMatching(/^req_/) });
    expect(await usage(org.id)).toEqual([{ outcome: 'not_found', price: 0, source: 'embedded' }]);
    expect(await balance(org.id)).toBe(10 * PRICE);
  }, 60_000);
});

describe('the requests the providers receive', () => {
  it('are the documented ones: the selfie as bare base64 JPEG without its metadata, never a data: URL', async () => {
    const org = await front.org({ fund: 10 * PRICE });
    await route(org, { engine: 'upstream', source: 'dojah' });
    // A PNG with EXIF data: the provider gets a re-encoded JPEG.
    const png = await sharp(selfies.nin.bytes).withMetadata({ exif: { IFD0: { Copyright: 'vouch-test-camera' } } }).png().toBuffer();
    const res = await match(org.liveSecret, identities.nin.nin, png);
    expect(res.statusCode, res.body).toBe(200);
    const sent = dojah.requests.at(-1)!;
    expect(sent).toMatchObject({ path: '/api/v1/kyc/nin/verify', appId: dojah.appId, authorization: dojah.secretKey, contentType: 'application/json' });
    expect(Object.keys(sent.body!).sort()).toEqual(['nin', 'selfie_image']);
    const jpeg = Buffer.from(sent.body!.selfie_image as string, 'base64');
    expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expect((await sharp(jpeg).metadata()).exif).toBeUndefined();

    const bvnRes = await match(org.liveSecret, identities.bvn.bvn, selfies.bvn.bytes, 'bvn');
    expect(bvnRes.json().data).toMatchObject({ photoMatching: { match: true, matchScore: 99.99620056152344 }, faceMatchEngine: 'dojah' });
    expect(dojah.requests.at(-1)).toMatchObject({ path: '/api/v1/kyc/bvn/verify', body: { bvn: identities.bvn.bvn, selfie_image: selfies.bvn.sent } });

    await route(org, { engine: 'upstream', source: 'yv' });
    await match(org.liveSecret, identities.nin.nin, selfies.nin.bytes);
    const yv = youverify.requests.at(-1)!;
    expect(yv.path).toBe('/v2/api/identity/ng/nin');
    expect(yv.headers.token).toBe(YOUVERIFY_TOKEN);
    expect(yv.body).toEqual({ id: identities.nin.nin, isSubjectConsent: true, validations: { selfie: { image: selfies.nin.sent } } });
  }, 60_000);
});

describe('when the provider cannot answer', () => {
  it('upstream alone: 503 with Retry-After, nothing recorded or charged; the circuit opens and the provider is left alone', async () => {
    const org = await front.org({ fund: 10 * PRICE });
    await route(org, { engine: 'upstream', source: 'dojah' });
    dojah.override = () => ({ status: 500, body: '{"error":"provider-body-SENTINEL"}' });
    for (let i = 0; i < 2; i++) {
      const res = await match(org.liveSecret, identities.nin.nin, selfies.nin.bytes);
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', message: expect.stringMatching(/face-match provider is unavailable/) , requestId: expect.stringMatching(/^req_/) });
      expect(res.headers['retry-after']).toBe(i === 0 ? '7' : String(COOL_DOWN_MS / 1000));
    }
    // Open: the next match is refused without a request to the provider.
    const before = dojah.requests.length;
    const refused = await match(org.liveSecret, identities.nin.nin, selfies.nin.bytes);
    expect(refused.statusCode).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(dojah.requests.length).toBe(before);
    expect(await usage(org.id)).toEqual([]);
    expect(await balance(org.id)).toBe(10 * PRICE);

    // With the local engine behind it, the same open circuit costs nothing: the local model decides.
    await route(org, { engine: 'upstream-then-local', source: 'dojah' });
    const fallback = await match(org.liveSecret, identities.nin.nin, selfies.nin.bytes);
    expect(fallback.statusCode, fallback.body).toBe(200);
    expect(fallback.json().data).toMatchObject({ photoMatching: { match: true, matchingThreshold: 43, maxScore: 100 }, faceMatchEngine: 'local' });
    expect(dojah.requests.length).toBe(before);
    expect(await usage(org.id)).toEqual([{ outcome: 'success', price: PRICE, source: 'embedded' }]);

    // The circuit half-opens after its cool-down: a healthy answer closes it.
    dojah.override = undefined;
    await sleep(COOL_DOWN_MS + 100);
    const back = await match(org.liveSecret, identities.nin.nin, selfies.nin.bytes);
    expect(back.json().data.faceMatchEngine).toBe('dojah');
  }, 60_000);

  it('upstream-then-local: a provider past its time limit leaves the decision to the local model', async () => {
    const db = front.database.db;
    await removeSourceRouted('yv');
    await addSource(db, KEY, { name: 'yv', kind: 'youverify', url: youverify.url, secret: YOUVERIFY_TOKEN, timeoutMs: 500 });
    await lookupsStayLocal();
    const org = await front.org({ fund: 10 * PRICE });
    await route(org, { engine: 'upstream-then-local', source: 'yv' });
    youverify.mode = 'hang';
    const genuine = await match(org.liveSecret, identities.nin.nin, selfies.nin.bytes);
    expect(genuine.statusCode, genuine.body).toBe(200);
    expect(genuine.json().data).toMatchObject({ photoMatching: { match: true, matchingThreshold: 43 }, faceMatchEngine: 'local' });
    const impostor = await match(org.liveSecret, identities.nin.nin, selfies.other.bytes);
    expect(impostor.json().data).toMatchObject({ photoMatching: { match: false }, faceMatchEngine: 'local' });
    // A provider that does not know the identity leaves it to the local model too.
    youverify.mode = 'documented';
    const unknown = await match(org.liveSecret, UNKNOWN_TO_PROVIDERS, selfies.nin.bytes);
    expect(unknown.json().data).toMatchObject({ photoMatching: { match: true }, faceMatchEngine: 'local' });
    expect((await usage(org.id)).map((row) => row.price)).toEqual([PRICE, PRICE, PRICE]);
    await removeSourceRouted('yv');
    await addSource(db, KEY, { name: 'yv', kind: 'youverify', url: youverify.url, secret: YOUVERIFY_TOKEN, timeoutMs: 10_000 });
    await lookupsStayLocal();
    // The two timeouts opened yv's circuit, and a source re-added under its name keeps its breaker:
    // let it half-open before other tests route to it.
    await sleep(COOL_DOWN_MS + 100);
  }, 60_000);
});

describe('local-then-upstream', () => {
  it('the local model decides when it can; the provider when the record has no photo; the provider failing then is a 503', async () => {
    const org = await front.org({ fund: 10 * PRICE });
    await route(org, { engine: 'local-then-upstream', source: 'dojah' });
    const before = dojah.requests.length;
    const local = await match(org.liveSecret, identities.nin.nin, selfies.nin.bytes);
    expect(local.json().data).toMatchObject({ photoMatching: { match: true, matchingThreshold: 43 }, faceMatchEngine: 'local' });
    expect(dojah.requests.length).toBe(before);

    const noPhoto = await match(org.liveSecret, NO_PHOTO_NIN, selfies.nin.bytes);
    expect(noPhoto.statusCode, noPhoto.body).toBe(200);
    expect(noPhoto.json().data).toMatchObject({ photo: '', photoMatching: { match: true, matchingThreshold: 90 }, faceMatchEngine: 'dojah' });

    dojah.override = () => ({ status: 502, body: '<html>bad gateway</html>' });
    const down = await match(org.liveSecret, NO_PHOTO_NIN, selfies.nin.bytes);
    expect(down.statusCode, down.body).toBe(503);
    expect((await usage(org.id)).map((row) => [row.outcome, row.price])).toEqual([
      ['success', PRICE],
      ['success', PRICE],
    ]);
    dojah.override = undefined;
    // Let the circuit this opened (one failure of two) not carry into other tests.
    await match(org.liveSecret, NO_PHOTO_NIN, selfies.nin.bytes);
  }, 60_000);
});

describe('what stays local', () => {
  it("another organization's matches, test mode's, and identity types the source cannot compare", async () => {
    const routed = await front.org({ fund: 10 * PRICE });
    const other = await front.org({ fund: 10 * PRICE });
    await route(routed, { engine: 'upstream', source: 'yv' });
    const before = youverify.requests.length;

    const b = await match(other.liveSecret, identities.nin.nin, selfies.nin.bytes);
    expect(b.json().data).toMatchObject({ photoMatching: { match: true }, faceMatchEngine: 'local' });
    const test = await match(routed.testSecret, identities.nin.nin, selfies.nin.bytes);
    expect(test.statusCode, test.body).toBe(200);
    expect(test.json().data.faceMatchEngine).toBe('local');
    // Youverify documents a selfie match for NINs only: a BVN match stays with the local model.
    const bvn = await match(routed.liveSecret, identities.bvn.bvn, selfies.bvn.bytes, 'bvn');
    expect(bvn.json().data).toMatchObject({ photoMatching: { match: true, matchingThreshold: 43 }, faceMatchEngine: 'local' });
    expect(youverify.requests.length).toBe(before);

    const a = await match(routed.liveSecret, identities.nin.nin, selfies.nin.bytes);
    expect(a.statusCode, a.body).toBe(200);
    expect(a.json().data.faceMatchEngine).toBe('yv');
    expect(youverify.requests.length).toBe(before + 1);
  }, 60_000);
});

describe('the routing', () => {
  it('refuses a source without a face match, an unknown one, and removing a source organizations are routed to', async () => {
    const db = front.database.db;
    const org = await front.org();
    await addSource(db, KEY, { name: 'yv-tin', kind: 'youverify', url: youverify.url, secret: YOUVERIFY_TOKEN, types: ['tin'] });
    await expect(route(org, { engine: 'upstream', source: 'yv-tin' })).rejects.toThrow(/offers no face match for the types it serves \(tin\)/);
    await expect(route(org, { engine: 'upstream', source: 'nope' })).rejects.toThrow(/no upstream named "nope"/);
    await removeSource(db, 'yv-tin');
    await lookupsStayLocal();

    await route(org, { engine: 'upstream-then-local', source: 'dojah' });
    await expect(removeSource(db, 'dojah')).rejects.toThrow(UpstreamConfigError);
    await expect(removeSource(db, 'dojah')).rejects.toThrow(/decides the face matches of \d+ organization/);
    expect((await listSources(db)).map((source) => source.name)).toContain('dojah');
    const audited = await db.selectFrom('audit_events').select(['action', 'before', 'after']).where('org_id', '=', org.id).execute();
    expect(audited).toEqual([{ action: 'organization.face_match_engine_changed', before: { engine: 'local', source: null }, after: { engine: 'upstream-then-local', source: 'dojah' } }]);
  });

  it('logs no ID number, no selfie and no provider body', () => {
    const logs = front.logs.join('\n');
    expect(logs).toContain('upstream face match failed');
    for (const secret of [identities.nin.nin, identities.bvn.bvn, NO_PHOTO_NIN, UNKNOWN_TO_PROVIDERS, selfies.nin.sent.slice(1000, 1064), 'provider-body-SENTINEL', 'bad gateway']) {
      expect(logs).not.toContain(secret);
    }
  });
});

/** Puts every organization routed to the source back on the local engine, then removes it. */
async function removeSourceRouted(name: string) {
  const db = front.database.db;
  const routed = await db.selectFrom('face_match_routing').select('org_id').where('source', '=', name).execute();
  for (const row of routed) await setFaceMatchRouting(db, row.org_id, { engine: 'local' }, { kind: 'cli' });
  await removeSource(db, name);
}
