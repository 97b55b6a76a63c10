import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_EMAIL, DEMO_FUNDING } from '../src/demo.js';
import { expectFailure, killServers, onPostgres, startServer, throwawayEnv, type CliEnv, type CliResult, type ThrowawayEnv } from './helpers/cli.js';

const MAIN = path.join(inject('vouchBuild'), 'main.js');
const SLOW = 120_000;
/** A failed start ends this soon after its line on stderr, or the test kills it and fails. */
const EXIT_AFTER_LINE_MS = 3_000;

interface Ended extends CliResult {
  /** How long the process lived after its first output on stderr. */
  lingeredMs: number;
}

/** Runs `vouch serve` until it exits; one still running EXIT_AFTER_LINE_MS after it wrote to stderr (or at 60 s) is killed. */
function serveUntilExit(env: CliEnv): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, 'serve'], { env: { HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let lineAt = 0;
    let killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (lineAt) return;
      lineAt = Date.now();
      clearTimeout(killer);
      killer = setTimeout(() => child.kill('SIGKILL'), EXIT_AFTER_LINE_MS);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code: code ?? (signal ? -1 : null), stdout, stderr, lingeredMs: lineAt ? Date.now() - lineAt : Number.POSITIVE_INFINITY });
    });
  });
}

/** A port a plain TCP server holds for the test. */
async function takenPort(): Promise<{ port: number; close(): Promise<void> }> {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as net.AddressInfo;
  return { port, close: () => new Promise((resolve) => holder.close(() => resolve())) };
}

describe('vouch serve whose start fails', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let holder: Awaited<ReturnType<typeof takenPort>>;

  beforeAll(async () => {
    // An empty database (or data folder): the failed start would seed the demo on it.
    throwaway = await throwawayEnv({ fresh: true });
    env = { ...throwaway.env, VOUCH_DEMO: 'on' };
    holder = await takenPort();
  });
  afterEach(() => killServers());
  afterAll(async () => {
    await holder?.close();
    await throwaway?.cleanup();
  });

  it('on a port already taken exits at once, non-zero, with one line saying so, and has seeded nothing', { timeout: SLOW }, async () => {
    // It stayed alive without listening, holding its database and running its worker, and a
    // supervisor never restarted it.
    const ended = await serveUntilExit({ ...env, PORT: String(holder.port) });
    expect(ended.lingeredMs, `still running ${EXIT_AFTER_LINE_MS} ms after: ${ended.stderr}`).toBeLessThan(EXIT_AFTER_LINE_MS);
    expectFailure(ended, new RegExp(`^vouch: cannot listen on 127\\.0\\.0\\.1:${holder.port}: the address is already in use\\n$`));

    // The demo is seeded once the port is held: the next start on a free port makes it, and prints its secrets.
    const server = await startServer(env);
    expect(server.banner.demo, server.banner.text).toBeDefined();
    expect((await server.stop()).code).toBe(0);
  });

  it('with an unreachable REDIS_URL and a port taken exits within a few seconds too', { timeout: SLOW }, async () => {
    // The Redis client lets go of a connection that never opened 2 s after it is told to.
    const ended = await serveUntilExit({ ...env, PORT: String(holder.port), REDIS_URL: 'redis://127.0.0.1:1' });
    expect(ended.lingeredMs, `still running ${EXIT_AFTER_LINE_MS} ms after: ${ended.stderr}`).toBeLessThan(EXIT_AFTER_LINE_MS);
    expect(ended.code).not.toBe(0);
    expect(ended.stderr).toMatch(new RegExp(`^vouch: cannot listen on 127\\.0\\.0\\.1:${holder.port}: the address is already in use\\n$`));
  });

  it('with a DATABASE_URL nothing answers exits at once with one line naming it', { timeout: SLOW }, async () => {
    const ended = await serveUntilExit({ ...env, PORT: '0', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/vouch' });
    expect(ended.lingeredMs).toBeLessThan(EXIT_AFTER_LINE_MS);
    expectFailure(ended, /^vouch: cannot connect to DATABASE_URL: connect ECONNREFUSED 127\.0\.0\.1:1\n$/);
  });

  it('with a REDIS_URL that is not one exits at once with one line naming it', { timeout: SLOW }, async () => {
    const ended = await serveUntilExit({ ...env, PORT: '0', REDIS_URL: 'http://127.0.0.1:6379' });
    expect(ended.lingeredMs).toBeLessThan(EXIT_AFTER_LINE_MS);
    expectFailure(ended, /^vouch: invalid configuration: REDIS_URL: /);
  });
});

describe('two vouch serve started together with the demo on one empty database', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;

  beforeAll(async () => {
    throwaway = await throwawayEnv({ fresh: true });
    env = { ...throwaway.env, VOUCH_DEMO: 'on' };
  });
  afterEach(() => killServers());
  afterAll(() => throwaway?.cleanup());

  it.runIf(onPostgres)('make one demo between them, with its owner; both serve, and only its maker prints the secrets', { timeout: SLOW }, async () => {
    // Each made its own "Demo Company", and the second's owner failed on the first's email: two
    // funded organizations, one without an owner, and the second process alive without serving.
    const servers = await Promise.all([startServer(env), startServer(env)]);
    for (const server of servers) expect((await fetch(`${server.banner.url}/ready`)).status).toBe(200);
    const seeded = servers.filter((server) => server.banner.demo);
    expect(seeded, servers.map((server) => server.banner.text).join('\n')).toHaveLength(1);
    expect(servers.find((server) => !server.banner.demo)!.banner.text).not.toMatch(/SECRET|sk_(test|live)_|password/);

    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string; name: string; balance: string; owners: string }>(
        `select o.id, o.name, o.balance, (select count(*) from memberships m join people p on p.id = m.person_id
                                           where m.org_id = o.id and m.role = 'owner' and p.email = $1) as owners
           from organizations o`,
        [DEMO_EMAIL],
      );
      expect(rows.map((row) => ({ ...row, balance: Number(row.balance), owners: Number(row.owners) }))).toEqual([
        { id: seeded[0]!.banner.demo!.orgId, name: 'Demo Company', balance: DEMO_FUNDING, owners: 1 },
      ]);
    } finally {
      await client.end();
    }
    for (const server of servers) expect((await server.stop()).code).toBe(0);
  });

  it.skipIf(onPostgres)('on the embedded database: one serves with the demo, the other says the folder is in use and exits', { timeout: SLOW }, async () => {
    // One process per data folder (its lock): the second must fail with its reason, not hang.
    const started = await Promise.allSettled([startServer(env), startServer(env)]);
    const running = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.flatMap((result) => (result.status === 'rejected' ? [(result.reason as Error).message] : []));
    try {
      expect(running).toHaveLength(1);
      expect(running[0]!.banner.demo, running[0]!.banner.text).toBeDefined();
      expect(failed).toHaveLength(1);
      // Exited with its one line, not killed after printing nothing for a minute.
      // Exit code 75 (EX_TEMPFAIL): the folder is free again once the other server stops.
      expect(failed[0]).toMatch(/^vouch serve exited \(75\) before its banner\nstdout: \nstderr: vouch: the embedded database in \S+ is in use by process \d+ \(a running vouch\); stop it first[^\n]*\n$/);
    } finally {
      for (const server of running) await server.stop();
    }
  });
});
