import { Readable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService, type CreatedOrganization } from '../../src/accounts/service.js';
import { buildApp } from '../../src/app.js';
import { FaceEngine } from '../../src/identities/biometrics/face-engine.js';
import { FaceMatcher } from '../../src/identities/biometrics/matcher.js';
import type { PhotoMatching } from '../../src/identities/biometrics/score.js';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { testConfig } from '../helpers/app.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

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
  let photo: string;
  let counter = 0;

  const org = () => accounts.create({ name: `Faces ${++counter}`, enabled: true, riskLevel: 'NONE', payloadType: 'FULL', fund: 1_000_000 });
  const match = (who: CreatedOrganization, payload: object = { idType: 'nin', idNumber: LIVE_NIN.nin, photo }) =>
    app.inject({ method: 'POST', url: PATH, headers: { authorization: `Bearer ${who.liveSecret}` }, payload });
  const usage = (who: CreatedOrganization) =>
    database.db.selectFrom('usage_events').select(['outcome', 'price']).where('org_id', '=', who.id).orderBy('id').execute();

  beforeAll(async () => {
    database = await openTestDatabase();
    app = await buildApp({ config: testConfig({ logLevel: 'warn', faceMatchCaps: { perOrg: 2, perProcess: 3 } }), database, faceMatcher: matcher });
    await app.ready();
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
});
