import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectFailure, killServers, startServer, throwawayEnv, type CliEnv, type CliResult, type ThrowawayEnv } from './helpers/cli.js';

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
