import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedOrganization } from '../../src/accounts/service.js';
import { FaceEngine, type Face } from '../../src/identities/biometrics/face-engine.js';
import type { DecodedImage } from '../../src/identities/biometrics/image.js';
import { FaceMatcher } from '../../src/identities/biometrics/matcher.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, type PortalUser } from '../helpers/portal.js';
import { HeldRegistry, httpClient, passingLivenessEngine, SANDBOX, tokenOf, type HttpClient } from '../sessions/fixtures.js';

/**
 * An organization's face-match threshold decides its matches (issue 50): the biometrics endpoint
 * and a verification session's face match are decided at the threshold an operator set for the
 * organization at the time of the match, and their records' `matchingThreshold` says which; the
 * default (43) for every other organization. The console's side is
 * test/console/face-match-threshold.test.ts.
 *
 * The face model is replaced by one that reads the score from the image's colour, so a pair's
 * score is what the test paints: a green image is the registry's face, a red one of red value 5s
 * scores s against it (230 → 46). The matcher around it is the service's own, thresholds and all.
 */

class PaintedFaces extends FaceEngine {
  override async describe(image: DecodedImage): Promise<Face | undefined> {
    const [red = 0, green = 0] = image.pixels;
    const descriptor = new Float32Array(512);
    if (green > 128) {
      descriptor[0] = 1;
    } else {
      const similarity = Math.round(red / 5) / 100;
      descriptor[0] = similarity;
      descriptor[1] = Math.sqrt(1 - similarity * similarity);
    }
    return { box: { x: 0, y: 0, width: image.width, height: image.height }, score: 0.99, descriptor, facesFound: 1, quality: { brightness: 128, sharpness: 100, eyeOpenness: 0.3 } };
  }
}

/** Passes every liveness attempt with its first frame as the frontal one. */
const livenessEngine = passingLivenessEngine();

const BIOMETRICS = '/v1/verifications/identities/biometrics';
const SESSIONS = '/v1/verifications/sessions';
const PERSON = { nin: '30571948260', firstname: 'Emeka', lastname: 'Obi', gender: 'Male', birthdate: '01-01-1985', phone: '08011112222' };

let t: TestContext;
let http: HttpClient;
let operator: PortalUser;
const registry = new HeldRegistry();

/** An image whose face scores `score` against the registry's (a whole number up to 51). */
async function facePng(score: number): Promise<string> {
  return (await sharp({ create: { width: 160, height: 160, channels: 3, background: { r: score * 5, g: 0, b: 0 } } }).png().toBuffer()).toString('base64');
}

/**
 * A frame of that face: the top painted, the bottom rows noise, so that no two frames are the
 * same bytes (a frame seen before is refused as replayed) while the top-left pixel keeps its colour.
 */
async function faceFrame(score: number): Promise<Buffer> {
  const width = 160;
  const height = 128;
  const painted = 96;
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * painted; i++) pixels.set([score * 5, 0, 0], i * 3);
  randomBytes(width * (height - painted) * 3).copy(pixels, width * painted * 3);
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
}

beforeAll(async () => {
  const registryPhoto = (await sharp({ create: { width: 160, height: 160, channels: 3, background: { r: 0, g: 255, b: 0 } } }).png().toBuffer()).toString('base64');
  registry.add('nin', PERSON.nin, { ...PERSON, photo: registryPhoto });
  t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, liveRegistry: registry, livenessEngine: async () => livenessEngine, faceMatcher: new FaceMatcher(new PaintedFaces()) });
  http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  operator = await operatorUser(t.app, t.database.db);
});
afterAll(() => t.close());

async function setThreshold(org: CreatedOrganization, matchingThreshold: number | 'default'): Promise<void> {
  const res = await portal(t.app, operator, { method: 'PUT', url: `/api/console/organizations/${org.id}/face-match`, payload: { matchingThreshold } });
  expect(res.statusCode, res.body).toBe(200);
}

async function biometrics(org: CreatedOrganization, score: number) {
  const res = await http.post(BIOMETRICS, org.liveSecret, { idType: 'nin', idNumber: PERSON.nin, photo: await facePng(score) });
  expect(res.status, res.text).toBe(200);
  return res.json().data.photoMatching as { match: boolean; matchScore: number; matchingThreshold: number; maxScore: number };
}

describe("the biometrics endpoint decides at the organization's threshold", () => {
  it('a pair scoring 46 matches at the default (43), not once the organization is set to 50, and again at 45; the record says which threshold applied', async () => {
    const org = await t.org();
    expect(await biometrics(org, 46)).toEqual({ match: true, matchScore: 46, matchingThreshold: 43, maxScore: 100 });
    await setThreshold(org, 50);
    expect(await biometrics(org, 46)).toEqual({ match: false, matchScore: 46, matchingThreshold: 50, maxScore: 100 });
    await setThreshold(org, 45);
    expect(await biometrics(org, 46)).toEqual({ match: true, matchScore: 46, matchingThreshold: 45, maxScore: 100 });
  });

  it('a looser threshold lets a pair through that the default turns away; reset, the default applies again', async () => {
    const org = await t.org();
    expect(await biometrics(org, 40)).toMatchObject({ match: false, matchScore: 40, matchingThreshold: 43 });
    await setThreshold(org, 35);
    expect(await biometrics(org, 40)).toMatchObject({ match: true, matchScore: 40, matchingThreshold: 35 });
    await setThreshold(org, 'default');
    expect(await biometrics(org, 40)).toMatchObject({ match: false, matchScore: 40, matchingThreshold: 43 });
  });

  it("another organization's setting changes nothing for this one", async () => {
    const [strict, other] = [await t.org(), await t.org()];
    await setThreshold(strict, 50);
    expect(await biometrics(other, 46)).toMatchObject({ match: true, matchingThreshold: 43 });
    expect(await biometrics(strict, 46)).toMatchObject({ match: false, matchingThreshold: 50 });
  });
});

describe("a session's face match is decided at its organization's threshold when it runs", () => {
  const api = (token: string, step = '') => `/verify/api/${token}${step}`;

  /** A live session of the organization whose ID has passed: the person is at the liveness step. */
  async function atLiveness(org: CreatedOrganization) {
    const created = await http.post(SESSIONS, org.liveSecret, { idTypes: ['NIN'] });
    expect(created.status, created.text).toBe(201);
    const { id, url } = created.json().data as { id: string; url: string };
    const token = tokenOf(url);
    expect((await http.post(api(token, '/consent'), undefined, { accepted: true })).status).toBe(200);
    const found = await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: PERSON.nin });
    expect(found.json().step, found.text).toBe('liveness');
    return { id, token };
  }

  /** The person's face, scoring `score` against the registry photo, sent as a liveness attempt's frames. */
  async function sendFace(token: string, score: number) {
    const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    const form = new FormData();
    form.append('timestamps', JSON.stringify([0]));
    form.append('frame', new Blob([new Uint8Array(await faceFrame(score))], { type: 'image/jpeg' }), 'frame.jpg');
    const res = await http.call('POST', api(token, `/liveness/attempts/${attempt.attemptId}/frames`), { form });
    expect(res.status, res.text).toBe(200);
    return res.json();
  }

  const record = async (org: CreatedOrganization, id: string) => (await http.get(`${SESSIONS}/${id}`, org.liveSecret)).json().data;

  it('set to 50 after the session began, a face scoring 46 fails FACE_MISMATCH with matchingThreshold 50; another organization at the default verifies it at 43', async () => {
    const [strict, other] = [await t.org(), await t.org()];
    const strictSession = await atLiveness(strict);
    const otherSession = await atLiveness(other);
    await setThreshold(strict, 50);

    expect(await sendFace(strictSession.token, 46)).toMatchObject({ step: 'done', result: { outcome: 'failed', reasons: ['FACE_MISMATCH'] } });
    const failed = await record(strict, strictSession.id);
    expect(failed.status).toMatchObject({ status: 'NOT_VERIFIED' });
    expect(failed.checks.faceMatch).toEqual({ passed: false, matchScore: 46, matchingThreshold: 50, maxScore: 100, reasons: ['FACE_MISMATCH'], simulated: false, engine: 'local' });

    expect(await sendFace(otherSession.token, 46)).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    expect((await record(other, otherSession.id)).checks.faceMatch).toEqual({ passed: true, matchScore: 46, matchingThreshold: 43, maxScore: 100, reasons: [], simulated: false, engine: 'local' });
  });

  it('set to 35, a face scoring 40 that the default turns away verifies, recorded at 35', async () => {
    const org = await t.org();
    await setThreshold(org, 35);
    const session = await atLiveness(org);
    expect(await sendFace(session.token, 40)).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    expect((await record(org, session.id)).checks.faceMatch).toMatchObject({ passed: true, matchScore: 40, matchingThreshold: 35 });
  });

  it("the sandbox's test helper records the organization's threshold on its simulated face match", async () => {
    const [strict, other] = [await t.org(), await t.org()];
    await setThreshold(strict, 48);
    for (const [org, threshold] of [
      [strict, 48],
      [other, 43],
    ] as const) {
      const created = (await http.post(SESSIONS, org.testSecret, { idTypes: ['NIN'], applicant: { idType: 'NIN', idNumber: SANDBOX.nin.idNumber } })).json().data;
      const done = await http.post(`/v1/test-helpers/sessions/${created.id}/complete`, org.testSecret, { outcome: 'verified' });
      expect(done.status, done.text).toBe(200);
      expect(done.json().data.checks.faceMatch).toEqual({ passed: true, matchScore: null, matchingThreshold: threshold, maxScore: 100, reasons: [], simulated: true, engine: 'local' });
    }
  });
});
