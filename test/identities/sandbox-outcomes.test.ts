import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedOrganization } from '../../src/accounts/service.js';
import { SANDBOX_OUTCOME_NUMBERS, SANDBOX_TIMING, sandboxOutcomeTable } from '../../src/identities/registry/sandbox-outcomes.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { cliJson, throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';

/**
 * Test mode's magic numbers (docs/test-mode.md, "Every outcome"): the registry unavailable, a slow
 * registry and a wallet that cannot pay, answered in test mode as live mode answers them, over a
 * real socket; and listed by `vouch test-identities --json`.
 */

const ADAEZE = { firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' };
const BABATUNDE = { firstname: 'Babatunde', lastname: 'Adeyemi', dob: '02-11-1985' };

let t: TestContext;
let base: string;
let org: CreatedOrganization;
const slowMs = SANDBOX_TIMING.slowMs;

beforeAll(async () => {
  t = await buildTestContext();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  org = await t.org({ riskLevel: 'LOW', fund: 0 });
  SANDBOX_TIMING.slowMs = 1_500;
});
afterAll(async () => {
  SANDBOX_TIMING.slowMs = slowMs;
  await t?.close();
});

const lookup = (path: string, body: object, secret = org.testSecret) =>
  fetch(`${base}/v1/verifications/identities/${path}`, { method: 'POST', headers: { ...bearer(secret), 'content-type': 'application/json' }, body: JSON.stringify(body) });

const usage = () => t.database.db.selectFrom('usage_events').select(['type', 'outcome', 'price', 'mode']).where('org_id', '=', org.id).orderBy('id').execute();

describe('test mode answers every outcome an integration must handle', () => {
  it('the unavailable numbers answer 503 with Retry-After, in style B, as a live outage does, and record nothing', async () => {
    for (const [path, body] of [
      [`bvn/${SANDBOX_OUTCOME_NUMBERS.bvn.unavailable}`, ADAEZE],
      [`bvn/${SANDBOX_OUTCOME_NUMBERS.bvn.unavailable}/match`, ADAEZE],
      [`nin/${SANDBOX_OUTCOME_NUMBERS.nin.unavailable}`, BABATUNDE],
    ] as const) {
      const res = await lookup(path, body);
      expect(res.status, path).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toMatchObject({ statusCode: 503, error: 'Service Unavailable', message: expect.stringMatching(/registry is unavailable/) });
    }
    expect(await usage()).toEqual([]);
  });

  it('the unpaid numbers answer 402 as a live wallet that cannot pay, recorded as refused, charging nothing', async () => {
    const bvn = await lookup(`bvn/${SANDBOX_OUTCOME_NUMBERS.bvn.unpaid}?type=premium`, ADAEZE);
    expect(bvn.status).toBe(402);
    const body = await bvn.json();
    expect(body).toMatchObject({ statusCode: 402, error: 'Payment Required', message: expect.stringMatching(/must be funded/) });
    // The same body a live lookup gets from an empty wallet.
    const live = await lookup('bvn/22345678901', ADAEZE, org.liveSecret);
    expect(live.status).toBe(402);
    expect({ ...(await live.json()), requestId: 'x' }).toEqual({ ...body, requestId: 'x' });
    const nin = await lookup(`nin/${SANDBOX_OUTCOME_NUMBERS.nin.unpaid}`, BABATUNDE);
    expect(nin.status).toBe(402);
    const test = (await usage()).filter((row) => row.mode === 'test');
    expect(test.map((row) => [row.outcome, row.price])).toEqual([
      ['insufficient_funds', 0],
      ['insufficient_funds', 0],
    ]);
  });

  it('the slow numbers answer the test identity under their own number, late', { timeout: 30_000 }, async () => {
    for (const [path, body, field, holder] of [
      [`bvn/${SANDBOX_OUTCOME_NUMBERS.bvn.slow}`, ADAEZE, 'bvn', 'Adaeze'],
      [`nin/${SANDBOX_OUTCOME_NUMBERS.nin.slow}`, BABATUNDE, 'nin', 'Babatunde'],
    ] as const) {
      const started = performance.now();
      const res = await lookup(path, body);
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_400);
      expect(res.status, path).toBeLessThan(300);
      const { data } = (await res.json()) as { data: Record<string, unknown> };
      expect(data).toMatchObject({ [field]: path.split('/')[1], firstname: holder, fieldMatches: { firstname: true, lastname: true } });
    }
  });

  it('the magic numbers are ordinary unknown numbers in live mode', async () => {
    const funded = await t.org({ riskLevel: 'LOW' });
    for (const number of Object.values(SANDBOX_OUTCOME_NUMBERS.bvn)) {
      const res = await lookup(`bvn/${number}`, ADAEZE, funded.liveSecret);
      expect(res.status, number).toBe(404);
    }
  });
});

describe('vouch test-identities --json', () => {
  let throwaway: ThrowawayEnv;
  beforeAll(async () => {
    throwaway = await throwawayEnv();
  });
  afterAll(async () => {
    await throwaway?.cleanup();
  });

  it('lists the magic numbers beside the identities and the screening subjects', { timeout: 60_000 }, async () => {
    const listed = await cliJson<{ outcomes: unknown[]; bvn: { bvn: string }; screening: unknown }>(['test-identities', '--json'], throwaway.env);
    expect(listed.bvn.bvn).toBe('22345678901');
    expect(listed.screening).toBeDefined();
    expect(listed.outcomes).toEqual(sandboxOutcomeTable().map((row) => ({ ...row, answers: expect.any(String) })));
    expect(listed.outcomes).toHaveLength(6);
  });
});
