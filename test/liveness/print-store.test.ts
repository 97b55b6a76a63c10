import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService } from '../../src/accounts/service.js';
import { decodeFrame, type FramePrint } from '../../src/identities/liveness/frames.js';
import { DatabasePrintStore, forgetSessionPrints, purgeExpiredPrints } from '../../src/identities/liveness/print-store.js';
import { DEFAULT_THRESHOLDS } from '../../src/identities/liveness/settings.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { fixtureFrames } from './genuine.js';

// The replay store in the database (migration 0034), on PGlite or on PostgreSQL with DATABASE_URL.
let database: TestDatabase;
let orgA: string;
let orgB: string;
let prints: FramePrint[];
let reencoded: FramePrint[];
let later: FramePrint[];
const bits = DEFAULT_THRESHOLDS.replayBits;

async function printsOf(jpegs: Buffer[]): Promise<FramePrint[]> {
  return Promise.all(jpegs.map(async (jpeg) => (await decodeFrame(jpeg, 480))!.print));
}

beforeAll(async () => {
  database = await openTestDatabase();
  const accounts = new AccountsService(database.db);
  const make = async (name: string) => (await accounts.create({ name, enabled: true, riskLevel: 'NONE', payloadType: 'FULL', fund: 0 })).id;
  orgA = await make('Prints A');
  orgB = await make('Prints B');
  const frames = fixtureFrames('natural-a.mjpeg');
  const attempt = frames.filter((_, i) => i % 5 === 0).slice(0, 8);
  prints = await printsOf(attempt);
  reencoded = await printsOf(await Promise.all(attempt.map((jpeg) => sharp(jpeg).resize(360).jpeg({ quality: 70 }).toBuffer())));
  // The same person in the same place a few seconds later: new captures, never replays.
  later = await printsOf(frames.slice(100).filter((_, i) => i % 5 === 0).slice(0, 8));
}, 120_000);
afterAll(async () => {
  await database.cleanup();
});

describe('frame prints in the database', () => {
  it('finds frames of another attempt, as sent or re-encoded, and not new captures of the same scene', async () => {
    const store = new DatabasePrintStore(database.db);
    const first = { scope: { orgId: orgA, mode: 'live' as const }, sessionId: 'ses_1', attemptId: 'att_1' };
    expect(await store.countReplayed(first, prints, bits)).toBe(0);
    await store.remember(first, prints, new Date(Date.now() + 86_400_000));
    const second = { ...first, sessionId: 'ses_2', attemptId: 'att_2' };
    expect(await store.countReplayed(second, prints, bits)).toBe(prints.length);
    expect(await store.countReplayed(second, reencoded, bits)).toBeGreaterThanOrEqual(DEFAULT_THRESHOLDS.minReplayedFrames);
    expect(await store.countReplayed(second, later, bits)).toBe(0);
    // An attempt is never a replay of itself.
    expect(await store.countReplayed(first, prints, bits)).toBe(0);
  });

  it('compares within one organization and mode only', async () => {
    const store = new DatabasePrintStore(database.db);
    const owner = { scope: { orgId: orgA, mode: 'test' as const }, sessionId: 'ses_3', attemptId: 'att_3' };
    await store.remember(owner, prints, new Date(Date.now() + 86_400_000));
    expect(await store.countReplayed({ ...owner, attemptId: 'att_4' }, prints, bits)).toBe(prints.length);
    expect(await store.countReplayed({ scope: { orgId: orgB, mode: 'test' }, sessionId: 'ses_5', attemptId: 'att_5' }, prints, bits)).toBe(0);
    expect(await store.countReplayed({ scope: { orgId: orgB, mode: 'live' }, sessionId: 'ses_5', attemptId: 'att_5' }, prints, bits)).toBe(0);
  });

  it('forgets prints past their retention and with their session', async () => {
    const store = new DatabasePrintStore(database.db);
    const owner = { scope: { orgId: orgB, mode: 'live' as const }, sessionId: 'ses_6', attemptId: 'att_6' };
    await store.remember(owner, prints, new Date(Date.now() + 1000));
    const probe = { ...owner, attemptId: 'att_7' };
    expect(await store.countReplayed(probe, prints, bits)).toBe(prints.length);
    const afterExpiry = new DatabasePrintStore(database.db, () => new Date(Date.now() + 5000));
    expect(await afterExpiry.countReplayed(probe, prints, bits)).toBe(0);
    expect(await purgeExpiredPrints(database.db, new Date(Date.now() + 5000))).toBe(prints.length);

    await store.remember({ ...owner, sessionId: 'ses_8', attemptId: 'att_8' }, prints, new Date(Date.now() + 86_400_000));
    expect(await forgetSessionPrints(database.db, { orgId: orgA, mode: 'live' }, 'ses_8')).toBe(0);
    expect(await forgetSessionPrints(database.db, owner.scope, 'ses_8')).toBe(prints.length);
    expect(await store.countReplayed(probe, prints, bits)).toBe(0);
  });
});
