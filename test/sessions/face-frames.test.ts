import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaceEngine } from '../../src/identities/biometrics/face-engine.js';
import { FaceMatcher } from '../../src/identities/biometrics/matcher.js';
import { faceCrop, samplePath, samplePortraitBase64, TEST_IDENTITY_FACES } from '../../src/identities/biometrics/samples.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { HeldRegistry, httpClient, passingLivenessEngine, tokenOf, type HttpClient } from './fixtures.js';

/**
 * A session's face match sees several frames (issue 50, part 4): the engine's frontal frame and
 * the capture's "look straight" lead-in, each through the quality gate, the good ones fused and
 * compared once with the registry photo. Frames too poor to compare do not fail the session as a
 * mismatch: the attempt fails POOR_QUALITY, the person's page says what was wrong, and the next
 * attempt is compared. The liveness engine is a stand-in that passes every attempt (the real one
 * is test/sessions/liveness.test.ts's); the face model is the real one, on face-api's demo photos.
 */

const BASE = '/v1/verifications/sessions';
const api = (token: string, step = '') => `/verify/api/${token}${step}`;
const FACE = TEST_IDENTITY_FACES.bvn;
const PERSON = { nin: '30571948261', firstname: 'Adaeze', lastname: 'Okafor', gender: 'Female', birthdate: '01-01-1990', phone: '08011112223' };

let t: TestContext;
let http: HttpClient;
const engine = new FaceEngine();
const registry = new HeldRegistry();

const passing = passingLivenessEngine();

beforeAll(async () => {
  registry.add('nin', PERSON.nin, { ...PERSON, photo: await samplePortraitBase64(FACE) });
  t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, liveRegistry: registry, livenessEngine: async () => passing, faceMatcher: new FaceMatcher(engine) });
  http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
}, 120_000);
afterAll(async () => {
  await t.close();
  await engine.close();
});

/** A capture of the registry person's face: 5 frames of a 480 px selfie, each a little different. */
async function capture(make: (image: Sharp) => Sharp): Promise<Buffer[]> {
  const region = await faceCrop(FACE, 2.2);
  return Promise.all([0, 1, 2, 3, 4].map((i) => make(sharp(samplePath(FACE.sample)).extract(region).resize(480 - 4 * i)).jpeg({ quality: 85 }).toBuffer()));
}

async function send(token: string, attemptId: string, frames: Buffer[]) {
  const form = new FormData();
  form.append('timestamps', JSON.stringify(frames.map((_, i) => i * 200)));
  for (const frame of frames) form.append('frame', new Blob([new Uint8Array(frame)], { type: 'image/jpeg' }), 'frame.jpg');
  return http.call('POST', api(token, `/liveness/attempts/${attemptId}/frames`), { form });
}

describe("a session's face match: several frames, and a retake for frames too poor to compare", () => {
  it('dark frames are not a mismatch: the attempt fails POOR_QUALITY saying too_dark, the session stays open, and good frames then verify', { timeout: 180_000 }, async () => {
    const org = await t.org({ fund: 100_000 });
    const created = (await http.post(BASE, org.liveSecret, { idTypes: ['NIN'] })).json().data;
    const token = tokenOf(created.url);
    expect((await http.post(api(token, '/consent'), undefined, { accepted: true })).status).toBe(200);
    expect((await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: PERSON.nin })).json().step).toBe('liveness');

    const first = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    const dark = (await send(token, first.attemptId, await capture((image) => image.linear(0.16, 0)))).json();
    expect(dark).toMatchObject({ step: 'liveness', result: null, attemptsLeft: { liveness: 2 }, lastAttempt: { passed: false, reasons: ['POOR_QUALITY'], quality: ['too_dark'] } });
    const open = (await http.get(`${BASE}/${created.id}`, org.liveSecret)).json().data;
    expect(open).toMatchObject({ status: { status: 'IN_PROGRESS' }, checks: { liveness: { passed: false, reasons: ['POOR_QUALITY'] }, faceMatch: null } });

    const second = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    const good = (await send(token, second.attemptId, await capture((image) => image))).json();
    expect(good).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    const record = (await http.get(`${BASE}/${created.id}`, org.liveSecret)).json().data;
    expect(record).toMatchObject({ status: { status: 'VERIFIED' }, checks: { faceMatch: { passed: true, matchingThreshold: 43, reasons: [] } } });
    expect(record.checks.faceMatch.matchScore).toBeGreaterThanOrEqual(43);
  });

  it('another person\'s clear frames are compared, and fail the session FACE_MISMATCH', { timeout: 180_000 }, async () => {
    const org = await t.org({ fund: 100_000 });
    const created = (await http.post(BASE, org.liveSecret, { idTypes: ['NIN'] })).json().data;
    const token = tokenOf(created.url);
    await http.post(api(token, '/consent'), undefined, { accepted: true });
    await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: PERSON.nin });
    const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    const other = TEST_IDENTITY_FACES.nin;
    const region = await faceCrop(other, 2.2);
    const frames = await Promise.all([0, 1, 2, 3].map((i) => sharp(samplePath(other.sample)).extract(region).resize(480 - 4 * i).jpeg().toBuffer()));
    expect((await send(token, attempt.attemptId, frames)).json()).toMatchObject({ step: 'done', result: { outcome: 'failed', reasons: ['FACE_MISMATCH'] } });
  });
});
