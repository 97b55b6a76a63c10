import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LivenessFrame } from '../../src/identities/liveness/engine.js';
import { LIVENESS_CAPTURE } from '../../src/identities/liveness/settings.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { decisions } from '../../src/sessions/attempts.js';
import { DECISION_LIMITS } from '../../src/sessions/decision-queue.js';
import { SESSION_BILLABLES } from '../../src/sessions/billing.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { fixturePath, loopCapture } from '../liveness/genuine.js';
import { balanceOf, expectStyleA, httpClient, SANDBOX, sessionEvents, sessionUsage, tokenOf, until, type HttpClient } from './fixtures.js';

const BASE = '/v1/verifications/sessions';
const api = (token: string, step = '') => `/verify/api/${token}${step}`;

/**
 * The liveness step with real frames (test/fixtures/liveness, README there): a genuine webcam
 * sequence of one real person, and a still photo of him held to the camera. The registry photo is
 * his frontal photo, imported into the live registry under a NIN of our own.
 */
const PERSON = { nin: '30571948260', firstname: 'Fixture', lastname: 'Webcamperson', gender: 'Male', birthdate: '01-01-1985' };

// Real decisions take seconds of CPU each; on a busy machine more.
describe('verification sessions: liveness and face match with real frames', { timeout: 120_000 }, () => {
  let t: TestContext;
  let http: HttpClient;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-session-liveness-'));
    // One test sends a flood of frames from this one address: the per-address upload cap is not what it tests.
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, config: { dataDir, frameUploads: { perAddress: 64, perProcess: 64 } } });
    http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
    const photo = readFileSync(fixturePath('genuine-registry.jpg')).toString('base64');
    const imported = await importRegistry(t.database.db, Readable.from([JSON.stringify({ type: 'nin', record: { ...PERSON, photo } })]));
    expect(imported.imported).toBe(1);
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** A session at the liveness step: consent given, the ID verified. */
  async function atLiveness(secret: string, idNumber: string) {
    const created = (await http.post(BASE, secret, {})).json().data;
    const token = tokenOf(created.url);
    await http.post(api(token, '/consent'), undefined, { accepted: true });
    const view = (await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber })).json();
    expect(view.step).toBe('liveness');
    return { session: created, token };
  }

  /**
   * The same capture with new bytes (re-encoded): frames are refused as replayed when their bytes
   * were sent in any earlier attempt, so each test that needs a fresh capture makes one.
   */
  async function fresh(frames: LivenessFrame[], quality: number): Promise<LivenessFrame[]> {
    return Promise.all(frames.map(async (frame) => ({ atMs: frame.atMs, jpeg: await sharp(frame.jpeg).jpeg({ quality }).toBuffer() })));
  }

  async function submit(token: string, attemptId: string, frames: LivenessFrame[]) {
    const form = new FormData();
    form.append('timestamps', JSON.stringify(frames.map((frame) => frame.atMs)));
    for (const frame of frames) form.append('frame', new Blob([new Uint8Array(frame.jpeg)], { type: 'image/jpeg' }), 'frame.jpg');
    return http.call('POST', api(token, `/liveness/attempts/${attemptId}/frames`), { form });
  }

  it('a genuine sequence passes, the face matches the registry photo, and the live session completes, charged once', async () => {
    const org = await t.org({ fund: 100_000 });
    const { session, token } = await atLiveness(org.liveSecret, PERSON.nin);
    const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    const res = await submit(token, attempt.attemptId, loopCapture('genuine.mjpeg', 0));
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toMatchObject({ step: 'done', result: { outcome: 'verified', reasons: [] }, lastAttempt: { passed: true, reasons: [] } });
    const record = (await http.get(`${BASE}/${session.id}`, org.liveSecret)).json().data;
    expect(record.status).toEqual({ status: 'VERIFIED', subStatus: 'VERIFIED', state: 'COMPLETED' });
    expect(record.checks.liveness).toMatchObject({ passed: true, attempts: 1, reasons: [], simulated: false });
    expect(record.checks.liveness.challenges.map((c: { challenge: string }) => c.challenge)).toEqual(attempt.challenges);
    expect(record.checks.liveness.challenges.every((c: { passed: boolean }) => c.passed)).toBe(true);
    for (const score of Object.values(record.checks.liveness.scores) as number[]) expect(score).toBeGreaterThan(0);
    expect(record.checks.faceMatch).toMatchObject({ passed: true, reasons: [], maxScore: 100 });
    expect(record.checks.faceMatch.matchScore).toBeGreaterThanOrEqual(record.checks.faceMatch.matchingThreshold);
    expect(await balanceOf(t.database.db, org.id)).toBe(100_000 - SESSION_BILLABLES.session.defaultPrice);
    expect((await sessionUsage(t.database.db, org.id)).map((u) => [u.outcome, u.price])).toEqual([['success', SESSION_BILLABLES.session.defaultPrice]]);
    expect((await sessionEvents(t.database.db, org.id)).map((e) => e.type)).toEqual(['session.completed']);
    // The frames are kept encrypted in the store, listed with their attempt.
    const frames = await t.database.db.selectFrom('session_frames').select(['file_id', 'sha256']).where('attempt_id', '=', attempt.attemptId).execute();
    expect(frames).toHaveLength(LIVENESS_CAPTURE.maxFrames);
    const stored = await fs.readFile(path.join(dataDir, 'files', frames[0]!.file_id!.slice(0, 2), frames[0]!.file_id!));
    expect(stored.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))).toBe(false);
  });

  it('a still photo held to the camera fails with its reasons; the page goes back to the selfie with a try less', async () => {
    const org = await t.org({ fund: 100_000 });
    const { session, token } = await atLiveness(org.liveSecret, PERSON.nin);
    const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    const view = (await submit(token, attempt.attemptId, loopCapture('still-photo.mjpeg', 0))).json();
    expect(view).toMatchObject({ step: 'liveness', result: null, attemptsLeft: { liveness: 2 }, lastAttempt: { passed: false } });
    expect(view.lastAttempt.reasons.length).toBeGreaterThan(0);
    const record = (await http.get(`${BASE}/${session.id}`, org.liveSecret)).json().data;
    expect(record.checks.liveness).toMatchObject({ passed: false, reasons: view.lastAttempt.reasons });
    expect(record.checks.faceMatch).toBeNull();
    // The same attempt cannot be answered twice.
    expectStyleA(await submit(token, attempt.attemptId, loopCapture('genuine.mjpeg', 0)), 409, 'CONFLICT');
    // Charged once, with its ID lookup; a failed selfie charges nothing more.
    expect(await balanceOf(t.database.db, org.id)).toBe(100_000 - SESSION_BILLABLES.session.defaultPrice);
  });

  it('frames sent in another attempt are refused as replayed, in any session', async () => {
    const org = await t.org({ fund: 100_000 });
    const first = await atLiveness(org.testSecret, SANDBOX.nin.idNumber);
    const frames = await fresh(loopCapture('genuine.mjpeg', 400), 93);
    const a = (await http.post(api(first.token, '/liveness/attempts'), undefined, {})).json();
    await submit(first.token, a.attemptId, frames);
    const second = await atLiveness(org.testSecret, SANDBOX.nin.idNumber);
    const b = (await http.post(api(second.token, '/liveness/attempts'), undefined, {})).json();
    const view = (await submit(second.token, b.attemptId, frames)).json();
    expect(view).toMatchObject({ step: 'liveness', lastAttempt: { passed: false, reasons: ['REPLAYED_FRAMES'] } });
  });

  it('a live face that is not the registry photo ends the session: FACE_MISMATCH, charged as completed', async () => {
    // The sandbox NIN wears another person's face (face-api's sample photo 2).
    const org = await t.org();
    const { session, token } = await atLiveness(org.testSecret, SANDBOX.nin.idNumber);
    const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
    const view = (await submit(token, attempt.attemptId, await fresh(loopCapture('genuine.mjpeg', 800), 91))).json();
    expect(view).toMatchObject({ step: 'done', result: { outcome: 'failed', reasons: ['FACE_MISMATCH'] }, lastAttempt: { passed: true } });
    const record = (await http.get(`${BASE}/${session.id}`, org.testSecret)).json().data;
    expect(record).toMatchObject({ status: { status: 'NOT_VERIFIED', subStatus: 'FACE_MISMATCH', state: 'FAILED' }, checks: { liveness: { passed: true }, faceMatch: { passed: false, reasons: ['FACE_MISMATCH'] } } });
    expect(record.checks.faceMatch.matchScore).toBeLessThan(record.checks.faceMatch.matchingThreshold);
    expect((await sessionUsage(t.database.db, org.id)).map((u) => [u.mode, u.outcome, u.price])).toEqual([['test', 'success', 0]]);
  });

  it('a registry photo without a face, a registry photo that does not decode, and no registry photo end the session: NO_REGISTRY_PHOTO', async () => {
    const blank = await sharp({ create: { width: 480, height: 600, channels: 3, background: '#b9a58c' } }).jpeg().toBuffer();
    const people = [
      { ...PERSON, nin: '30571948261', photo: blank.toString('base64') },
      { ...PERSON, nin: '30571948262', photo: Buffer.from('not a picture at all').toString('base64') },
      { ...PERSON, nin: '30571948263' },
    ];
    const imported = await importRegistry(t.database.db, Readable.from([people.map((record) => JSON.stringify({ type: 'nin', record })).join('\n')]));
    expect(imported.imported).toBe(people.length);
    for (const [i, person] of people.entries()) {
      // An organization each: frames seen in another of the organization's attempts count as replayed.
      const org = await t.org({ fund: 100_000 });
      const { token } = await atLiveness(org.liveSecret, person.nin);
      const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
      const view = (await submit(token, attempt.attemptId, await fresh(loopCapture('genuine.mjpeg', 1200 + i * 150), 61 + i))).json();
      expect(view, person.nin).toMatchObject({ step: 'done', result: { outcome: 'failed', reasons: ['NO_REGISTRY_PHOTO'] }, lastAttempt: { passed: true } });
    }
  });

  it('the third failed attempt ends the session: LIVENESS_ATTEMPTS_EXHAUSTED', async () => {
    const org = await t.org();
    const { token } = await atLiveness(org.testSecret, SANDBOX.nin.idNumber);
    let view: Record<string, any> = {};
    for (let i = 0; i < 3; i++) {
      const attempt = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
      view = (await submit(token, attempt.attemptId, await fresh(loopCapture('still-photo.mjpeg', i * 200), 80 + i))).json();
    }
    expect(view).toMatchObject({ step: 'done', attemptsLeft: { liveness: 0 }, result: { outcome: 'failed' } });
    expect(view.result.reasons).toContain('LIVENESS_ATTEMPTS_EXHAUSTED');
    expectStyleA(await http.post(api(token, '/liveness/attempts'), undefined, {}), 409, 'CONFLICT');
  });

  /** Frames sent for each session at once (a fresh capture each); the answers in the same order. */
  async function submitTogether(sessions: { token: string }[], offset: number) {
    const attempts = await Promise.all(sessions.map(async ({ token }) => (await http.post(api(token, '/liveness/attempts'), undefined, {})).json()));
    const captures = await Promise.all(sessions.map((_, i) => fresh(loopCapture('genuine.mjpeg', offset + i * 33), 60 + offset / 10 + i)));
    const answers = await Promise.all(sessions.map(({ token }, i) => submit(token, attempts[i].attemptId, captures[i]!)));
    return { attempts, captures, answers };
  }

  it('queues decisions fairly: a live end user is decided before a test flood and a second live account\'s backlog; past an organization\'s share, 503 at once, nothing read or spent', { timeout: 240_000 }, async () => {
    const tester = await t.org();
    const flooder = await t.org({ fund: 1_000_000 });
    const victim = await t.org({ fund: 1_000_000 });
    // Everything made ready first, so that the victim's frames arrive while the flood waits.
    const victimSession = await atLiveness(victim.liveSecret, PERSON.nin);
    const victimAttempt = (await http.post(api(victimSession.token, '/liveness/attempts'), undefined, {})).json();
    const victimFrames = await fresh(loopCapture('genuine.mjpeg', 900), 91);
    const extraTest = await atLiveness(tester.testSecret, SANDBOX.nin.idNumber);
    const extraAttempt = (await http.post(api(extraTest.token, '/liveness/attempts'), undefined, {})).json();
    const extraFrames = await fresh(loopCapture('genuine.mjpeg', 700), 90);
    // The test account takes every test-mode place, the second live account all of its own.
    const flood = await Promise.all([
      ...Array.from({ length: DECISION_LIMITS.testTotal }, () => atLiveness(tester.testSecret, SANDBOX.nin.idNumber)),
      ...Array.from({ length: DECISION_LIMITS.perOrg }, () => atLiveness(flooder.liveSecret, PERSON.nin)),
    ]);
    const floodAttempts = await Promise.all(flood.map(async ({ token }) => (await http.post(api(token, '/liveness/attempts'), undefined, {})).json()));
    const floodCaptures = await Promise.all(flood.map((_, i) => fresh(loopCapture('genuine.mjpeg', 300 + i * 33), 70 + i)));
    const answeredAt: number[] = [];
    const floodAnswers = Promise.all(
      flood.map(({ token }, i) =>
        submit(token, floodAttempts[i].attemptId, floodCaptures[i]!).then((answer) => {
          answeredAt.push(Date.now());
          return answer;
        }),
      ),
    );
    const full = (orgId: string, mode: 'live' | 'test') => {
      try {
        decisions.admit(orgId, mode);
        return false;
      } catch {
        return true;
      }
    };
    await until(() => full(tester.id, 'test') && full(flooder.id, 'live'), 'the flood to fill its shares', 60_000);

    // One more of either: refused at once, before its form is read, with nothing stored or spent.
    const refused = await submit(extraTest.token, extraAttempt.attemptId, extraFrames);
    expectStyleA(refused, 503, 'SERVICE_UNAVAILABLE');
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await t.database.db.selectFrom('session_frames').select('position').where('attempt_id', '=', extraAttempt.attemptId).execute()).toEqual([]);
    expect((await http.get(api(extraTest.token))).json()).toMatchObject({ step: 'liveness', attemptsLeft: { liveness: 2 } });

    // The victim's end user waits for the decisions running and a turn of the flooder, not for
    // the backlog.
    const victimAnswer = submit(victimSession.token, victimAttempt.attemptId, victimFrames);
    const answered = await victimAnswer;
    // Decided before at least half of the flood that was there before it: it waited for the
    // decisions running and a turn or two, not for the backlog.
    expect(answeredAt.length).toBeLessThanOrEqual(flood.length / 2);
    expect(answered.status, answered.text).toBe(200);
    expect(answered.json().lastAttempt).not.toBeNull();
    // The flood is decided too, or (on a slow machine, past the queue's wait) handed back to be sent again.
    for (const answer of await floodAnswers) {
      if (answer.status !== 200) expect(expectStyleA(answer, 503, 'SERVICE_UNAVAILABLE') && answer.headers.get('retry-after')).toBe('5');
    }
  });
});
