import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, killServers, onPostgres, runCli, startServer, throwawayEnv, type CliEnv, type RunningServer, type ThrowawayEnv } from '../helpers/cli.js';

// Starting `vouch serve` takes seconds; the window alignment below may wait up to PHASES_MS.
const SLOW = 60_000;
const LIMIT = 60;
/** The limits count fixed one-minute windows aligned to the clock (docs/rate-limits.md). */
const WINDOW_MS = 60_000;
/** Every phase of a case must fall in one window: they take about 9 s on a busy machine. */
const PHASES_MS = 14_000;
const SANDBOX_BVN = '/v1/verifications/identities/bvn/22345678901';
const SANDBOX_APPLICANT = JSON.stringify({ firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' });

/** Waits for the next window when less than PHASES_MS is left of this one. */
async function freshWindowTime(): Promise<void> {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < PHASES_MS) await new Promise((resolve) => setTimeout(resolve, left + 250));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Tally {
  /** Answers other than 429 (the request ran). */
  admitted: number;
  limited: number;
}

async function tally(requests: Promise<Response>[]): Promise<Tally> {
  const statuses = await Promise.all(requests.map(async (request) => {
    const response = await request;
    await response.arrayBuffer();
    return response.status;
  }));
  return { admitted: statuses.filter((status) => status !== 429).length, limited: statuses.filter((status) => status === 429).length };
}

/**
 * Rate limits across real `vouch serve` processes on one database (issue 19, item 8): at 60 a
 * minute per secret and per address, two processes together admit at most 60 + 2 a window, in a
 * burst and paced. On the embedded database a second process cannot open the folder, so the one
 * process counts in memory, exactly.
 */
describe('rate limits across processes', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  const servers: RunningServer[] = [];
  let burstSecret: string;
  let pacedSecret: string;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = { ...throwaway.env, VOUCH_DEMO: 'off', VOUCH_RATE_LIMIT: String(LIMIT), VOUCH_RATE_LIMIT_PER_ADDRESS: String(LIMIT) };
    const create = (name: string) => cliJson<{ testSecret: string }>(['org', 'create', '--name', name, '--enable', '--json'], env);
    // One after the other: on the embedded database each command takes the data folder's lock.
    burstSecret = (await create('Burst')).testSecret;
    pacedSecret = (await create('Paced')).testSecret;
  }, SLOW);
  afterAll(async () => {
    killServers();
    await throwaway?.cleanup();
  });

  const lookup = (server: RunningServer, secret: string) =>
    fetch(`${server.banner.url}${SANDBOX_BVN}`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: SANDBOX_APPLICANT });

  it('starts with REDIS_URL naming a Redis that is not there: it warns and serves, letting requests through', { timeout: SLOW }, async () => {
    // Port 9 (discard): nothing listens. The built server loads its Redis client only when
    // REDIS_URL is set (src/platform/rate-limit.ts), so this is the one test of that load on every machine.
    const server = await startServer({ ...env, REDIS_URL: 'redis://127.0.0.1:9/0' });
    try {
      const refused = await fetch(`${server.banner.url}/api/me`);
      expect(refused.status).toBe(401);
      const { stdout, stderr } = server.output();
      expect(stdout + stderr).toContain('rate-limit store (Redis) unreachable');
    } finally {
      await server.stop();
    }
  });

  it.runIf(onPostgres)('two processes on PostgreSQL admit at most the limit + 1 per process in a window, in a burst and paced', { timeout: 90_000 }, async () => {
    servers.push(...(await Promise.all([startServer(env), startServer(env)])));
    const [first, second] = servers as [RunningServer, RunningServer];
    await freshWindowTime();

    // A burst of 200 at once, half to each process, for one secret.
    const burst = await tally(Array.from({ length: 200 }, (_, i) => lookup(i % 2 ? second : first, burstSecret)));

    // The portal's API per client address, refused credentials: the same count for both processes.
    const byAddress = await tally(Array.from({ length: 200 }, (_, i) => fetch(`${(i % 2 ? second : first).banner.url}/api/me`)));

    // Paced: 90 requests at 15 a second, alternating, for another secret.
    const paced: Promise<Response>[] = [];
    for (let i = 0; i < 90; i++) {
      paced.push(lookup(i % 2 ? second : first, pacedSecret));
      await sleep(1000 / 15);
    }
    const pacedTally = await tally(paced);

    for (const [phase, { admitted }] of Object.entries({ burst, byAddress, paced: pacedTally })) {
      expect.soft(admitted, `${phase}: ${admitted} admitted`).toBeLessThanOrEqual(LIMIT + 2);
      // Exact, not strict: the processes' unused leases are few at the end of a window.
      expect.soft(admitted, `${phase}: ${admitted} admitted`).toBeGreaterThanOrEqual(LIMIT - 2);
    }
  });

  it.skipIf(onPostgres)('on the embedded database one process serves, counting in memory, exactly', { timeout: SLOW }, async () => {
    servers.push(await startServer(env));
    const [only] = servers as [RunningServer];
    // A second process cannot open the data folder, so counts in memory are all the counts.
    const second = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', ...env });
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(/in use by process \d+/);
    await freshWindowTime();
    const burst = await tally(Array.from({ length: 200 }, () => lookup(only, burstSecret)));
    expect(burst).toEqual({ admitted: LIMIT, limited: 200 - LIMIT });
  });
});
