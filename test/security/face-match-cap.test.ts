import { Readable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService, type CreatedOrganization } from '../../src/accounts/service.js';
import { buildApp } from '../../src/app.js';
import { FaceMatchCapacity } from '../../src/identities/biometrics/capacity.js';
import { FaceEngine } from '../../src/identities/biometrics/face-engine.js';
import { FaceMatcher } from '../../src/identities/biometrics/matcher.js';
import type { PhotoMatching } from '../../src/identities/biometrics/score.js';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { FACE_MATCH_WAIT_MS } from '../../src/sessions/attempts.js';
import { testConfig } from '../helpers/app.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { loopCapture } from '../liveness/genuine.js';
import { httpClient, tokenOf, type HttpClient } from '../sessions/fixtures.js';

/**
 * A face match costs about 0.35 s of CPU: without a cap, one organization could queue matches
 * without bound and starve every other. Matches in progress are capped per organization (429) and
 * per process (503), both with Retry-After. The face model is replaced by a matcher that holds each
 * comparison until the test lets it go, so "in progress" is whatever the test says.
 */

const PATH = '/v1/verifications/identities/biometrics';
const PRICE = IDENTITY_BILLABLES.biometrics.defaultPrice;
const LIVE_NIN = { nin: '31313131313', firstname: 'Halima', lastname: 'Yusuf', gender: 'Female', birthdate: '12-12-1992' };

/** Holds every comparison until released; counts the comparisons started. */
class HeldMatcher extends FaceMatcher {
  started = 0;
  private readonly waiting: (() => void)[] = [];

  constructor() {
    // An engine that is never asked: its worker starts only on first use.
    super(new FaceEngine());
  }

  /** The supplied photo's face, described before the identity is looked up: any descriptor will do here. */
  override async describeSupplied(): Promise<Float32Array> {
    return new Float32Array(128);
  }

  override async match(): Promise<PhotoMatching> {
    this.started += 1;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    return { match: true, matchScore: 80, matchingThreshold: 55, maxScore: 100 };
  }

  release(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  async until(started: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (this.started < started) {
      if (Date.now() > deadline) throw new Error(`${this.started} comparisons started, expected ${started}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/**
 * The app's face-match places, counting the times a session's match asked to wait for one and
 * how long it asked to wait. `waitCapMs` shortens the wait itself, for a test that waits it out.
 */
class WatchedCapacity extends FaceMatchCapacity {
  /** The wait each call asked for, in order. */
  askedMs: number[] = [];
  waitCapMs = Infinity;

  get waits(): number {
    return this.askedMs.length;
  }

  override waitForPlace(orgId: string, waitMs: number): Promise<() => void> {
    this.askedMs.push(waitMs);
    return super.waitForPlace(orgId, Math.min(waitMs, this.waitCapMs));
  }

  async untilWaits(waits: number): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (this.waits < waits) {
      if (Date.now() > deadline) throw new Error(`${this.waits} waits, expected ${waits}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** Fails instead of hanging when a request that should be refused at once is held. */
async function promptly(response: Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the request was held instead of refused')), 3_000);
  });
  try {
    return await Promise.race([response, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('face match caps: per organization (429) and per process (503)', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let accounts: AccountsService;
  const matcher = new HeldMatcher();
  const capacity = new WatchedCapacity({ perOrg: 2, perProcess: 3 });
  const capacityHolder = (orgId: string) => capacity.reserve(orgId);
  let photo: string;
  let counter = 0;
  let http: HttpClient;

  const org = () => accounts.create({ name: `Faces ${++counter}`, enabled: true, riskLevel: 'NONE', payloadType: 'FULL', fund: 1_000_000 });
  const match = (who: CreatedOrganization, payload: object = { idType: 'nin', idNumber: LIVE_NIN.nin, photo }) =>
    app.inject({ method: 'POST', url: PATH, headers: { authorization: `Bearer ${who.liveSecret}` }, payload });
  const usage = (who: CreatedOrganization) =>
    database.db.selectFrom('usage_events').select(['outcome', 'price']).where('org_id', '=', who.id).orderBy('id').execute();

  beforeAll(async () => {
    database = await openTestDatabase();
    app = await buildApp({ config: testConfig({ logLevel: 'warn', faceMatchCaps: { perOrg: 2, perProcess: 3 } }), database, faceMatcher: matcher, faceMatchCapacity: capacity });
    http = httpClient(await app.listen({ port: 0, host: '127.0.0.1' }));
    accounts = new AccountsService(database.db);
    photo = (await sharp({ create: { width: 96, height: 96, channels: 3, background: '#8a6f5a' } }).jpeg().toBuffer()).toString('base64');
    const imported = await importRegistry(database.db, Readable.from([`${JSON.stringify({ type: 'nin', record: { ...LIVE_NIN, photo } })}\n`]));
    expect(imported).toMatchObject({ imported: 1, rejected: 0 });
  });

  afterAll(async () => {
    matcher.release();
    await app?.close();
    await database?.cleanup();
  });

  it("refuses an organization's match past its cap with 429 and Retry-After, charges nothing for it, and leaves other organizations alone until the process is full", async () => {
    const [a, b, c] = [await org(), await org(), await org()];
    const held = [match(a), match(a)];
    await matcher.until(2);

    const extra = await promptly(match(a));
    expect(extra.statusCode, extra.body).toBe(429);
    expect(extra.json()).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.stringMatching(/face match/i) });
    expect(Number(extra.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // Another organization is not held back by the first one's cap.
    held.push(match(b));
    await matcher.until(3);

    // Three matches run in the process (its cap here): the next one, from anyone, is 503.
    const saturated = await promptly(match(c));
    expect(saturated.statusCode, saturated.body).toBe(503);
    expect(saturated.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', message: expect.stringMatching(/face match/i) });
    expect(Number(saturated.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    matcher.release();
    for (const response of await Promise.all(held)) expect(response.statusCode, response.body).toBe(200);
    expect(await usage(a)).toEqual([
      { outcome: 'success', price: PRICE },
      { outcome: 'success', price: PRICE },
    ]);
    expect((await accounts.get(a.id)).balance).toBe(1_000_000 - 2 * PRICE);
    expect(await usage(c)).toEqual([]);
    expect((await accounts.get(c.id)).balance).toBe(1_000_000);
  });

  it('gives the places back when a match ends, whether it succeeded or failed', async () => {
    const a = await org();
    // Each of these fails after taking a place (the photo cannot be decoded): a leak would make the third a 429.
    const unreadable = Buffer.from('ffd8ffe000104a464946', 'hex').toString('base64');
    for (let i = 0; i < 3; i++) {
      const failed = await promptly(match(a, { idType: 'nin', idNumber: LIVE_NIN.nin, photo: unreadable }));
      expect(failed.statusCode, failed.body).toBe(400);
    }
    const started = matcher.started;
    const ok = match(a);
    await matcher.until(started + 1);
    matcher.release();
    expect((await ok).statusCode).toBe(200);
    const again = [match(a), match(a)];
    await matcher.until(started + 3);
    matcher.release();
    for (const response of await Promise.all(again)) expect(response.statusCode).toBe(200);
  });

  /** A live session of the organization at its liveness step, and an open attempt. */
  async function sessionAtLiveness(who: CreatedOrganization) {
    const created = (await http.post('/v1/verifications/sessions', who.liveSecret, {})).json().data;
    const token = tokenOf(created.url);
    await http.post(`/verify/api/${token}/consent`, undefined, { accepted: true });
    const view = (await http.post(`/verify/api/${token}/id`, undefined, { idType: 'NIN', idNumber: LIVE_NIN.nin })).json();
    expect(view.step).toBe('liveness');
    const attempt = (await http.post(`/verify/api/${token}/liveness/attempts`, undefined, {})).json();
    return { id: created.id as string, token, attemptId: attempt.attemptId as string };
  }

  /** The genuine webcam sequence (test/fixtures/liveness) as the attempt's frames, decided by the real liveness engine. */
  async function sendFrames(session: { token: string; attemptId: string }, phaseMs: number, quality: number) {
    // Re-encoded: frames whose bytes were sent in any earlier attempt are refused as replayed.
    const frames = await Promise.all(loopCapture('genuine.mjpeg', phaseMs).map(async (frame) => ({ atMs: frame.atMs, jpeg: await sharp(frame.jpeg).jpeg({ quality }).toBuffer() })));
    const form = new FormData();
    form.append('timestamps', JSON.stringify(frames.map((frame) => frame.atMs)));
    for (const frame of frames) form.append('frame', new Blob([new Uint8Array(frame.jpeg)], { type: 'image/jpeg' }), 'frame.jpg');
    return http.call('POST', `/verify/api/${session.token}/liveness/attempts/${session.attemptId}/frames`, { form });
  }

  it("counts a verification session's face match in its organization's places, and the session waits for a place instead of failing", { timeout: 180_000 }, async () => {
    const a = await org();
    // The session's match (after a real liveness decision) takes one of a's two places ...
    const first = await sessionAtLiveness(a);
    let started = matcher.started;
    const answer = sendFrames(first, 0, 81);
    await matcher.until(started + 1);
    const api = [match(a)];
    await matcher.until(started + 2);
    // ... so a's next API match is refused: the two share one count.
    const refused = await promptly(match(a));
    expect(refused.statusCode, refused.body).toBe(429);
    matcher.release();
    const done = await answer;
    expect(done.status, done.text).toBe(200);
    expect(done.json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    expect((await api[0]!).statusCode).toBe(200);

    // With both places taken by API matches, a session's match waits (it does not fail the
    // attempt its liveness decision already paid for) and runs as soon as one is given back.
    // (Another organization: the liveness engine refuses the same person's frames seen again in
    // one organization as replayed.)
    const b = await org();
    const second = await sessionAtLiveness(b);
    started = matcher.started;
    const held = [match(b), match(b)];
    await matcher.until(started + 2);
    const waits = capacity.waits;
    const waiting = sendFrames(second, 0, 82);
    // The liveness decision (seconds of CPU) passed and its match now waits for a place.
    await Promise.race([capacity.untilWaits(waits + 1), waiting.then((early) => Promise.reject(new Error(`answered before its match: ${early.text}`)))]);
    const waited = await Promise.race([waiting.then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 500))]);
    expect(waited).toBe('waiting');
    expect(matcher.started).toBe(started + 2);
    matcher.release();
    for (const response of await Promise.all(held)) expect(response.statusCode).toBe(200);
    await matcher.until(started + 3);
    matcher.release();
    const verified = await waiting;
    expect(verified.status, verified.text).toBe(200);
    expect(verified.json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
  });

  it('hands the attempt back (503, Retry-After, frames not kept, no attempt spent) when no place comes free in time', { timeout: 180_000 }, async () => {
    const a = await org();
    const session = await sessionAtLiveness(a);
    // Both of a's places stay taken for longer than a session's match waits. The match asks to
    // wait FACE_MATCH_WAIT_MS; the test cuts the wait itself to 1 s rather than sit through 10.
    const places = [capacityHolder(a.id), capacityHolder(a.id)];
    capacity.waitCapMs = 1_000;
    const asked = capacity.waits;
    try {
      const answer = await sendFrames(session, 100, 83);
      expect(answer.status, answer.text).toBe(503);
      expect(answer.json()).toMatchObject({ status: 'error', code: 'SERVICE_UNAVAILABLE' });
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(capacity.askedMs.slice(asked)).toEqual([FACE_MATCH_WAIT_MS]);
    } finally {
      capacity.waitCapMs = Infinity;
      for (const release of places) release();
    }
    expect(await database.db.selectFrom('session_frames').select('position').where('attempt_id', '=', session.attemptId).execute()).toEqual([]);
    expect((await http.get(`/verify/api/${session.token}`)).json()).toMatchObject({ step: 'liveness', attemptsLeft: { liveness: 2 } });
    // The same attempt takes the same frames once a place is free.
    const started = matcher.started;
    const again = sendFrames(session, 100, 83);
    await matcher.until(started + 1);
    matcher.release();
    expect((await again).json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
  });
});
