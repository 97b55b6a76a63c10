import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfieForProvider } from '../../src/identities/biometrics/match-decision.js';
import { setFaceMatchRouting } from '../../src/identities/biometrics/match-routing.js';
import { faceCrop, samplePath, samplePortraitBase64, TEST_IDENTITY_FACES } from '../../src/identities/biometrics/samples.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { addSource, setOrder } from '../../src/identities/upstreams/store.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { startDojahServer, type DojahServer } from '../upstreams/dojah-server.js';
import { httpClient, passingLivenessEngine, tokenOf, type HttpClient } from './fixtures.js';

/**
 * A session's face match follows the organization's face-match routing (issue 50, part 6), as the
 * biometrics endpoint does: routed to a provider, the engine's frontal frame goes to it and
 * `checks.faceMatch` names it; a provider that cannot answer leaves the attempt undecided (503,
 * the frames may be sent again) or, with the local engine behind it, the local model decides. The
 * liveness engine is a stand-in that passes every attempt; the provider is a local fake of Dojah
 * answering its documented request and body over a real socket; lookups read the front's registry.
 */

const BASE = '/v1/verifications/sessions';
const api = (token: string, step = '') => `/verify/api/${token}${step}`;
const FACE = TEST_IDENTITY_FACES.bvn;
const PERSON = { nin: '30571948262', firstname: 'Adaeze', lastname: 'Okafor', gender: 'Female', birthdate: '01-01-1990', phone: '08011112224' };
const KEY = randomBytes(32);

let t: TestContext;
let http: HttpClient;
let dojah: DojahServer;
let captures = 0;

const passing = passingLivenessEngine();

beforeAll(async () => {
  dojah = await startDojahServer();
  t = await buildTestContext({
    config: { encryptionKey: KEY },
    webhookUrl: NOWHERE_WEBHOOK_URL,
    livenessEngine: async () => passing,
    upstreams: { breaker: { failureThreshold: 5, coolDownMs: 30_000 }, reloadIntervalMs: 100, healthWriteIntervalMs: 0, retryAfterSeconds: 7 },
  });
  const line = JSON.stringify({ type: 'nin', record: { ...PERSON, photo: await samplePortraitBase64(FACE) } });
  await importRegistry(t.database.db, Readable.from([line]));
  await addSource(t.database.db, KEY, { name: 'dojah', kind: 'dojah', url: dojah.url, secret: `${dojah.appId}:${dojah.secretKey}` });
  await setOrder(t.database.db, 'nin', ['embedded']);
  dojah.faces.set(PERSON.nin, new Set());
  http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  await new Promise((resolve) => setTimeout(resolve, 250));
}, 120_000);

afterAll(async () => {
  await t?.close();
  await dojah?.close();
});

/**
 * A capture of the person's face: 5 frames, each a little different, and different from every
 * other capture's (a frame sent in another attempt is refused as a replay). Dojah knows the
 * frontal frame (frame 0) as Vouch sends it to be theirs.
 */
async function capture(): Promise<Buffer[]> {
  const region = await faceCrop(FACE, 2.2);
  const offset = 20 * captures++;
  const frames = await Promise.all([0, 1, 2, 3, 4].map((i) => sharp(samplePath(FACE.sample)).extract(region).resize(480 - 4 * i - offset).jpeg({ quality: 85 }).toBuffer()));
  dojah.faces.get(PERSON.nin)!.add(await selfieForProvider(frames[0]!));
  return frames;
}

async function send(token: string, attemptId: string, frames: Buffer[]) {
  const form = new FormData();
  form.append('timestamps', JSON.stringify(frames.map((_, i) => i * 200)));
  for (const frame of frames) form.append('frame', new Blob([new Uint8Array(frame)], { type: 'image/jpeg' }), 'frame.jpg');
  return http.call('POST', api(token, `/liveness/attempts/${attemptId}/frames`), { form });
}

/** A live session of a new organization, routed as given, at its liveness step. */
async function atLiveness(engine: 'upstream' | 'upstream-then-local') {
  const org = await t.org({ fund: 100_000 });
  await setFaceMatchRouting(t.database.db, org.id, { engine, source: 'dojah' }, { kind: 'cli' });
  const created = (await http.post(BASE, org.liveSecret, { idTypes: ['NIN'] })).json().data;
  const token = tokenOf(created.url);
  await http.post(api(token, '/consent'), undefined, { accepted: true });
  expect((await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: PERSON.nin })).json().step).toBe('liveness');
  const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
  return { org, id: created.id as string, token, attemptId: attempt.attemptId as string };
}

describe("a session's face match routed to a provider", () => {
  it('is decided by the provider on the frontal frame, and the check names it', { timeout: 120_000 }, async () => {
    const { org, id, token, attemptId } = await atLiveness('upstream');
    const frames = await capture();
    expect((await send(token, attemptId, frames)).json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    const record = (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data;
    expect(record.checks.faceMatch).toEqual({ passed: true, matchScore: 99.90354919433594, matchingThreshold: 90, maxScore: 100, reasons: [], simulated: false, engine: 'dojah' });
    expect(dojah.requests.at(-1)).toMatchObject({ path: '/api/v1/kyc/nin/verify', body: { nin: PERSON.nin, selfie_image: await selfieForProvider(frames[0]!) } });
  });

  it('a provider that cannot answer leaves the attempt undecided (503, sent again once it is back); with the local engine behind it, the local model decides', { timeout: 120_000 }, async () => {
    const { org, id, token, attemptId } = await atLiveness('upstream');
    const frames = await capture();
    dojah.override = () => ({ status: 500, body: '{"error":"down"}' });
    const refused = await send(token, attemptId, frames);
    expect(refused.status, refused.text).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('7');
    expect((await http.get(`${BASE}/${id}`, org.liveSecret)).json().data).toMatchObject({ status: { status: 'IN_PROGRESS' }, checks: { faceMatch: null } });
    dojah.override = undefined;
    expect((await send(token, attemptId, frames)).json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });

    const fallback = await atLiveness('upstream-then-local');
    dojah.override = () => ({ status: 500, body: '{"error":"down"}' });
    const decided = await send(fallback.token, fallback.attemptId, await capture());
    expect(decided.json(), decided.text).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    dojah.override = undefined;
    const record = (await http.get(`${BASE}/${fallback.id}`, fallback.org.liveSecret)).json().data;
    expect(record.checks.faceMatch).toMatchObject({ passed: true, matchingThreshold: 43, maxScore: 100, engine: 'local' });
  });
});
