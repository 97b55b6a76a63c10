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
import { MAX_CONCURRENT_DECISIONS, MAX_DECISIONS_PER_ORG, MAX_TEST_DECISIONS } from '../../src/sessions/attempts.js';
import { SESSION_BILLABLES } from '../../src/sessions/billing.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { fixturePath, loopCapture } from '../liveness/genuine.js';
import { balanceOf, expectStyleA, httpClient, SANDBOX, sessionEvents, sessionUsage, tokenOf, type HttpClient } from './fixtures.js';

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
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, config: { dataDir } });
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
    // Nothing charged while it is open.
    expect(await balanceOf(t.database.db, org.id)).toBe(100_000);
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

  it('shares the decision places: test mode and each organization hold a part of them; past it 503 with Retry-After, spending nothing, and the page sends the frames again', { timeout: 180_000 }, async () => {
    expect(MAX_TEST_DECISIONS + MAX_DECISIONS_PER_ORG).toBeLessThanOrEqual(MAX_CONCURRENT_DECISIONS);
    const tester = await t.org();
    const otherTester = await t.org();
    const live = await t.org({ fund: 1_000_000 });
    // Test sessions of two organizations beside a live account's: the test share fills, the live end users keep their places.
    const testers = [tester, tester, otherTester].slice(0, MAX_TEST_DECISIONS + 1);
    const sessions = await Promise.all([
      ...testers.map((org) => atLiveness(org.testSecret, SANDBOX.nin.idNumber)),
      ...Array.from({ length: MAX_DECISIONS_PER_ORG }, () => atLiveness(live.liveSecret, PERSON.nin)),
    ]);
    const { attempts, captures, answers } = await submitTogether(sessions, 100);
    const refused = answers.flatMap((answer, i) => (answer.status === 503 ? [i] : []));
    expect(refused).toHaveLength(1);
    const i = refused[0]!;
    expect(i).toBeLessThan(testers.length);
    expectStyleA(answers[i]!, 503, 'SERVICE_UNAVAILABLE');
    expect(answers[i]!.headers.get('retry-after')).toBe('5');
    expect(answers.slice(testers.length).map((answer) => answer.status)).toEqual(Array(MAX_DECISIONS_PER_ORG).fill(200));
    // Nothing was stored or spent for it: the same attempt takes the frames now.
    expect(await t.database.db.selectFrom('session_frames').select('position').where('attempt_id', '=', attempts[i].attemptId).execute()).toEqual([]);
    expect((await http.get(api(sessions[i]!.token))).json()).toMatchObject({ step: 'liveness', attemptsLeft: { liveness: 2 } });
    expect((await submit(sessions[i]!.token, attempts[i].attemptId, captures[i]!)).status).toBe(200);

    // One live account past its own part is refused while another's end user is served.
    const busy = await t.org({ fund: 1_000_000 });
    const other = await t.org({ fund: 1_000_000 });
    const more = await Promise.all([
      ...Array.from({ length: MAX_DECISIONS_PER_ORG + 1 }, () => atLiveness(busy.liveSecret, PERSON.nin)),
      atLiveness(other.liveSecret, PERSON.nin),
    ]);
    const statuses = (await submitTogether(more, 300)).answers.map((answer) => answer.status);
    expect(statuses.slice(0, MAX_DECISIONS_PER_ORG + 1).filter((status) => status === 503)).toHaveLength(1);
    expect(statuses.at(-1)).toBe(200);
  });
});
