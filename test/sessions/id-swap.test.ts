import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaceMatcher, HeldPhoto } from '../../src/identities/biometrics/matcher.js';
import { ApiError } from '../../src/platform/errors.js';
import { ID_LOOKUP_TIMEOUT_MS } from '../../src/sessions/liveness.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { expectStyleA, HeldRegistry, httpClient, passingLivenessEngine, tokenOf, until, type HttpClient } from './fixtures.js';

/**
 * The ID cannot change under a liveness decision (docs/sessions.md, "The end-user API";
 * docs/security.md). The review's attack: the person sends the victim's NIN (answered by a slow
 * upstream) and, at once, their own (fast); their own passes, their own face matches their own
 * registry photo, and meanwhile the victim's "passed" overwrote the session's ID, so the session
 * ended VERIFIED with the victim's identity. Now one lookup is in flight per session, a result
 * that comes after an ID passed is thrown away, and a decision completes the session only for the
 * ID its face was compared with.
 *
 * The registry answers when the test lets it (HeldRegistry); the liveness engine and the face
 * matcher are stand-ins (the real ones are test/sessions/liveness.test.ts's): the engine passes
 * every attempt, when the test lets it, and the matcher says a face matches only the attacker's
 * own registry photo, recording which ID it was asked about.
 */

const BASE = '/v1/verifications/sessions';
const api = (token: string, step = '') => `/verify/api/${token}${step}`;

const OWN = { nin: '30571948260', firstname: 'Emeka', lastname: 'Obi', gender: 'Male', birthdate: '01-01-1985', phone: '08011112222', photo: 'b3duIGZhY2U=' };
const VICTIM = { nin: '41122334455', firstname: 'Ngozi', lastname: 'Eze', gender: 'Female', birthdate: '02-02-1990', phone: '08099990000', photo: 'dmljdGltIGZhY2U=' };
const MISSING = '51234567890';

let t: TestContext;
let http: HttpClient;
const registry = new HeldRegistry().add('nin', OWN.nin, OWN).add('nin', VICTIM.nin, VICTIM);
/** The IDs the face matcher was asked to compare a face with. */
const compared: string[] = [];
let engineHeld: Promise<void> | undefined;

const engine = passingLivenessEngine(() => engineHeld);
async function paintedMatch(held: HeldPhoto) {
  compared.push(held.idNumber);
  const match = held.photo === OWN.photo;
  return { match, matchScore: match ? 80 : 20, matchingThreshold: 43, maxScore: 100 };
}
const matcher = {
  match: paintedMatch,
  /** A session compares its frames as one. */
  matchFrames: async (held: HeldPhoto) => ({ matching: await paintedMatch(held), framesUsed: 1 }),
} as unknown as FaceMatcher;

beforeAll(async () => {
  t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, liveRegistry: registry, livenessEngine: async () => engine, faceMatcher: matcher });
  http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
});
afterAll(async () => {
  await t.close();
});

async function consented() {
  const org = await t.org({ fund: 100_000 });
  const created = (await http.post(BASE, org.liveSecret, { idTypes: ['NIN'] })).json().data;
  const token = tokenOf(created.url);
  expect((await http.post(api(token, '/consent'), undefined, { accepted: true })).status).toBe(200);
  return { org, id: created.id as string, token };
}

const submitId = (token: string, idNumber: string) => http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber });
const rowOf = (publicId: string) =>
  t.database.db.selectFrom('verification_sessions').select(['status', 'id_number', 'id_attempts', 'id_lookup_started_at', 'checks']).where('public_id', '=', publicId).executeTakeFirstOrThrow();

/** One frame of noise, new bytes each time (frames seen before are refused as replayed). */
async function frames(token: string, attemptId: string) {
  const jpeg = await sharp(randomBytes(64 * 48 * 3), { raw: { width: 64, height: 48, channels: 3 } })
    .jpeg()
    .toBuffer();
  const form = new FormData();
  form.append('timestamps', JSON.stringify([0]));
  form.append('frame', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'frame.jpg');
  return http.call('POST', api(token, `/liveness/attempts/${attemptId}/frames`), { form });
}

/** Makes the lookup in flight look lost: its reservation older than the time a lookup may take. */
async function loseReservation(publicId: string) {
  await t.database.db
    .updateTable('verification_sessions')
    .set({ id_lookup_started_at: new Date(Date.now() - ID_LOOKUP_TIMEOUT_MS - 1000) })
    .where('public_id', '=', publicId)
    .execute();
}

describe('verification sessions: one ID lookup at a time, and the face matched is the ID completed', () => {
  it("the review's attack: a second ID while the victim's is being looked up is 409, and the victim's ID then needs the victim's face", async () => {
    const { org, id, token } = await consented();
    const release = registry.hold(VICTIM.nin);
    const victimAnswer = submitId(token, VICTIM.nin);
    await until(() => registry.asked.includes(VICTIM.nin), "the victim's lookup");

    expect(expectStyleA(await submitId(token, OWN.nin), 409, 'CONFLICT').message).toMatch(/already being checked/);
    expectStyleA(await http.post(api(token, '/liveness/attempts'), undefined, {}), 409, 'CONFLICT');
    expect((await rowOf(id)).id_attempts).toBe(1);

    release();
    expect((await victimAnswer).json().step).toBe('liveness');
    const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    const view = (await frames(token, attempt.attemptId)).json();
    // The attacker's own face against the victim's registry photo: not a match, the session fails.
    expect(view).toMatchObject({ step: 'done', result: { outcome: 'failed', reasons: ['FACE_MISMATCH'] } });
    expect(compared.at(-1)).toBe(VICTIM.nin);
    const record = (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data;
    expect(record.status.status).toBe('NOT_VERIFIED');
  });

  it('a lookup answered after another ID passed is thrown away, passing or not: the ID that passed stays', async () => {
    for (const late of [VICTIM.nin, MISSING]) {
      const { id, token } = await consented();
      const release = registry.hold(late);
      const asked = registry.asked.length;
      const lateAnswer = submitId(token, late);
      await until(() => registry.asked.length > asked, 'the slow lookup');
      // The slow lookup is taken for lost (a stopped process): the next ID may be looked up.
      await loseReservation(id);
      expect((await submitId(token, OWN.nin)).json().step).toBe('liveness');
      release();
      expectStyleA(await lateAnswer, 409, 'CONFLICT');
      const row = await rowOf(id);
      expect(row).toMatchObject({ status: 'in_progress', id_number: OWN.nin, id_attempts: 2, id_lookup_started_at: null });
      expect(row.checks.idLookup).toMatchObject({ passed: true, idType: 'NIN', attempts: 2, reasons: [] });
      expect((await http.get(api(token))).json()).toMatchObject({ step: 'liveness', attemptsLeft: { id: 1 } });
    }
  });

  it('a lookup that fails (the registry down) gives its try and its place back; a lost one stops holding the session', async () => {
    const { id, token } = await consented();
    registry.fail(MISSING, new ApiError('SERVICE_UNAVAILABLE', 'The registry did not answer', { retryAfterSeconds: 5 }));
    try {
      expectStyleA(await submitId(token, MISSING), 503, 'SERVICE_UNAVAILABLE');
    } finally {
      registry.heal(MISSING);
    }
    expect(await rowOf(id)).toMatchObject({ id_attempts: 0, id_lookup_started_at: null });
    expect((await submitId(token, OWN.nin)).json().step).toBe('liveness');

    // A reservation whose lookup never came back (its process stopped) holds the session only
    // for the time a lookup may take.
    const lost = await consented();
    await t.database.db.updateTable('verification_sessions').set({ id_attempts: 1, id_lookup_started_at: new Date() }).where('public_id', '=', lost.id).execute();
    expectStyleA(await submitId(lost.token, OWN.nin), 409, 'CONFLICT');
    await loseReservation(lost.id);
    expect((await submitId(lost.token, OWN.nin)).json()).toMatchObject({ step: 'liveness', attemptsLeft: { id: 1 } });
  });

  it('the face is compared with the ID the attempt was started on, and the session completes only if that is still its ID', async () => {
    const { org, id, token } = await consented();
    expect((await submitId(token, OWN.nin)).json().step).toBe('liveness');
    const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    let releaseEngine!: () => void;
    engineHeld = new Promise((resolve) => (releaseEngine = resolve));
    const answer = frames(token, attempt.attemptId);
    await until(async () => (await t.database.db.selectFrom('session_frames').select('position').where('attempt_id', '=', attempt.attemptId).execute()).length > 0, 'the frames stored');
    // Whatever path might change the session's ID while the decision runs, the decision must not
    // complete the session with it.
    await t.database.db
      .updateTable('verification_sessions')
      .set({ id_number: VICTIM.nin, identity: JSON.stringify({ nin: VICTIM.nin, firstname: VICTIM.firstname }) })
      .where('public_id', '=', id)
      .execute();
    engineHeld = undefined;
    releaseEngine();
    const view = (await answer).json();
    expect(compared.at(-1)).toBe(OWN.nin);
    expect(view).toMatchObject({ step: 'liveness', result: null, lastAttempt: { passed: false } });
    const stored = await t.database.db.selectFrom('session_liveness_attempts').select(['status', 'id_type', 'id_number']).where('id', '=', attempt.attemptId).executeTakeFirstOrThrow();
    expect(stored).toEqual({ status: 'failed', id_type: 'NIN', id_number: OWN.nin });
    const record = (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data;
    expect(record).toMatchObject({ status: { status: 'IN_PROGRESS' }, checks: { faceMatch: null } });
  });

  it('a genuine attempt on the ID that passed completes the session verified, with that ID', async () => {
    const { org, id, token } = await consented();
    expect((await submitId(token, OWN.nin)).json().step).toBe('liveness');
    const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    expect((await frames(token, attempt.attemptId)).json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    const record = (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data;
    expect(record).toMatchObject({ status: { status: 'VERIFIED' }, identity: { nin: OWN.nin }, checks: { faceMatch: { passed: true } } });
    expect((await t.database.db.selectFrom('session_liveness_attempts').select(['id_number']).where('id', '=', attempt.attemptId).executeTakeFirstOrThrow()).id_number).toBe(OWN.nin);
  });
});
