import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../../src/platform/db/database.js';
import { ADDRESS_BODY } from '../agents/fixtures.js';
import { cliJson, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';

const MAIN = path.join(inject('vouchBuild'), 'main.js');
/** Issue 19, item 10: every stop within 10 s. */
const EXIT_WITHIN_MS = 10_000;

interface Server {
  child: ChildProcess;
  /** Resolves with the API's URL once the banner is out. */
  ready: Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/**
 * `vouch serve` as a supervisor starts it: its own process group, stdout and stderr piped to us,
 * info-level logs (a line per request, so the pipe is busy).
 */
function serve(env: CliEnv): Server {
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const url = /^\s*API\s+(http\S+)$/m.exec(stdout)?.[1];
      if (url) resolve(url);
    });
    void exited.then(() => reject(new Error(`exited before its banner:\n${stdout}`)));
  });
  ready.catch(() => undefined);
  child.stderr!.resume();
  return { child, ready, exited, output: () => stdout };
}

/** SIGTERM, then the time to the exit; a process still there after the limit is killed and fails the test. */
async function terminate(server: Server, moment: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const started = Date.now();
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), EXIT_WITHIN_MS);
  const exit = await server.exited;
  clearTimeout(timer);
  const ms = Date.now() - started;
  expect(exit.signal, `${moment}: still running ${EXIT_WITHIN_MS} ms after SIGTERM`).not.toBe('SIGKILL');
  expect(ms, `${moment}: exited ${ms} ms after SIGTERM`).toBeLessThan(EXIT_WITHIN_MS);
  return exit;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * SIGTERM at random moments (during start, under load, right after ready, with the log reader
 * gone): `vouch serve` exits within 10 s every time, with code 0 once its handlers are in place,
 * and every create it acknowledged is in the database afterwards.
 */
describe('vouch serve stops on SIGTERM', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let secret: string;
  /** Address verifications the servers answered 201, by Idempotency-Key. */
  const acknowledged = new Map<string, string>();
  let counter = 0;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = throwaway.env;
    const org = await cliJson<{ liveSecret: string }>(['org', 'create', '--name', 'Shutdown', '--risk-level', 'LOW', '--enable', '--fund', '100000000', '--json'], env);
    secret = org.liveSecret;
  });
  afterAll(async () => {
    await throwaway?.cleanup();
  });

  /**
   * Lookups and idempotent creates, `parallel` at a time, until the server exits; records what
   * was acknowledged. `answering` resolves once the server has answered a few.
   */
  function load(url: string, server: Server, parallel = 4): { answering: Promise<void>; done: Promise<void> } {
    let stopped = false;
    void server.exited.then(() => (stopped = true));
    let answered = 0;
    let answering!: () => void;
    const client = async () => {
      while (!stopped) {
        const key = `shutdown-${process.pid}-${++counter}`;
        const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': key };
        try {
          const created = await fetch(`${url}/v1/verifications/addresses`, { method: 'POST', headers, body: JSON.stringify(ADDRESS_BODY) });
          if (created.status === 201) acknowledged.set(key, String(((await created.json()) as { data: { id: number } }).data.id));
          await fetch(`${url}/v1/verifications/identities/bvn/22345678901`, { method: 'POST', headers: { ...headers, 'idempotency-key': `${key}-lookup` }, body: '{}' });
          if (++answered === parallel) answering();
        } catch {
          await pause(20); // refused while stopping: the client tries again until the server is gone
        }
      }
    };
    return { answering: new Promise((resolve) => (answering = resolve)), done: Promise.all(Array.from({ length: parallel }, client)).then(() => undefined) };
  }

  it('during start', async () => {
    const server = serve(env);
    await pause(50 + Math.random() * 600);
    const exit = await terminate(server, 'during start');
    // Before its handlers are in place the signal's default action ends it; after, it exits 0.
    expect(exit.code === 0 || exit.signal === 'SIGTERM', JSON.stringify(exit)).toBe(true);
  });

  it('under load of lookups and idempotent creates', async () => {
    const server = serve(env);
    const traffic = load(await server.ready, server);
    await traffic.answering;
    await pause(Math.random() * 500);
    expect(await terminate(server, 'under load')).toEqual({ code: 0, signal: null });
    await traffic.done;
  });

  it('with the log reader gone: stdout and stderr closed as the signal is sent (a supervisor that exits)', async () => {
    const server = serve(env);
    const traffic = load(await server.ready, server, 2);
    await traffic.answering;
    await pause(Math.random() * 300);
    const exit = terminate(server, 'reader gone');
    server.child.stdout!.destroy();
    server.child.stderr!.destroy();
    expect(await exit).toEqual({ code: 0, signal: null });
    await traffic.done;
  });

  it('right after ready; then every acknowledged create is in the database with its answer kept', async () => {
    const server = serve(env);
    await server.ready;
    expect(await terminate(server, 'right after ready')).toEqual({ code: 0, signal: null });

    expect(acknowledged.size).toBeGreaterThan(0);
    const database = await openDatabase(env.DATABASE_URL ? { url: env.DATABASE_URL } : { dataDir: path.join(env.VOUCH_DATA_DIR!, 'pglite') });
    try {
      const ids = new Set((await database.db.selectFrom('address_verifications').select('id').execute()).map((row) => String(row.id)));
      const keys = await database.db.selectFrom('idempotency_keys').select(['key', 'state', 'status_code']).where('key', 'in', [...acknowledged.keys()]).execute();
      for (const [key, id] of acknowledged) {
        expect(ids.has(id), `acknowledged ${id}`).toBe(true);
        expect(keys.find((row) => row.key === key), key).toMatchObject({ state: 'done', status_code: 201 });
      }
    } finally {
      await database.close();
    }
  });
});
