import { Readable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService, type CreatedOrganization } from '../../src/accounts/service.js';
import { buildApp } from '../../src/app.js';
import { FaceMatchCapacity } from '../../src/identities/biometrics/capacity.js';
import { FaceEngine } from '../../src/identities/biometrics/face-engine.js';
import { FaceMatcher, type FramesMatch } from '../../src/identities/biometrics/matcher.js';
import type { PhotoMatching } from '../../src/identities/biometrics/score.js';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { importRegistry } from '../../src/identities/registry/import.js';
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
    return { match: true, matchScore: 80, matchingThreshold: 43, maxScore: 100 };
  }

  /** A session's frames, compared as one: held like any comparison. */
  override async matchFrames(): Promise<FramesMatch> {
    return { matching: await this.match(), framesUsed: 1 };
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

/** The app's face-match places, counting the places a session's match held (never refused). */
class WatchedCapacity extends FaceMatchCapacity {
  holds = 0;

  override hold(orgId: string): () => void {
    this.holds += 1;
    return super.hold(orgId);
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
    expect(extra.json()).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.stringMatching(/face match/i) , requestId: expect.stringMatching(/^req_/) });
    expect(Number(extra.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // Another organization is not held back by the first one's cap.
    held.push(match(b));
    await matcher.until(3);

    // Three matches run in the process (its cap here): the next one, from anyone, is 503.
    const saturated = await promptly(match(c));
    expect(saturated.statusCode, saturated.body).toBe(503);
    expect(saturated.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', message: expect.stringMatching(/face match/i) , requestId: expect.stringMatching(/^req_/) });
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

  it("counts a verification session's face match in its organization's places, and runs it even when API matches hold every place", { timeout: 180_000 }, async () => {
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

    // With both places taken by API matches, a session's match still runs at once (it is never
    // refused: its liveness decision already cost seconds, and an attempt is decided once), and
    // while it runs it counts: the organization's next API match is refused.
    // (Another organization: the liveness engine refuses the same person's frames seen again in
    // one organization as replayed.)
    const b = await org();
    const second = await sessionAtLiveness(b);
    started = matcher.started;
    const held = [match(b), match(b)];
    await matcher.until(started + 2);
    const holds = capacity.holds;
    const running = sendFrames(second, 0, 82);
    await matcher.until(started + 3);
    expect(capacity.holds).toBe(holds + 1);
    expect(capacity.inUse(b.id).org).toBe(3);
    expect((await promptly(match(b))).statusCode).toBe(429);
    matcher.release();
    for (const response of await Promise.all(held)) expect(response.statusCode).toBe(200);
    const verified = await running;
    expect(verified.status, verified.text).toBe(200);
    expect(verified.json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    expect(capacity.inUse(b.id).org).toBe(0);
  });

  it('decides an attempt once: with every place of its organization held for long, the session\'s match is not handed back to be decided again', { timeout: 180_000 }, async () => {
    const a = await org();
    const session = await sessionAtLiveness(a);
    // Both of a's places stay taken while the frames are decided (before, the match waited 10 s,
    // then answered 503 and reopened the attempt, and each resend cost another full decision).
    const places = [capacityHolder(a.id), capacityHolder(a.id)];
    try {
      const started = matcher.started;
      const answer = sendFrames(session, 100, 83);
      await matcher.until(started + 1);
      matcher.release();
      const decided = await answer;
      expect(decided.status, decided.text).toBe(200);
      expect(decided.json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    } finally {
      for (const release of places) release();
    }
    const attempts = await database.db.selectFrom('session_liveness_attempts').select(['status', 'decided_at']).where('id', '=', session.attemptId).execute();
    expect(attempts).toEqual([{ status: 'passed', decided_at: expect.any(Date) }]);
  });
});
