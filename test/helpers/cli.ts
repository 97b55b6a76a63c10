import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, inject } from 'vitest';
import { TEST_ENCRYPTION_KEY } from './database.js';
import { adminQuery } from './postgres-admin.js';

/** The repository root: the CLI runs there, as `npx vouch` would from a checkout. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The server as the global setup built it for this run, as `npm run build` does (test/global-setup.ts). */
const MAIN = path.join(inject('vouchBuild'), 'main.js');

/** The CLI's failure contract: non-zero exit, one line on stderr matching `reason`, nothing on stdout. */
export function expectFailure(result: CliResult, reason: RegExp): void {
  expect(result.code, result.stderr).not.toBe(0);
  expect(result.stdout).toBe('');
  expect(result.stderr.trimEnd().split('\n'), result.stderr).toHaveLength(1);
  expect(oneLineOf(result)).toMatch(reason);
}

/**
 * The failure's line as the CLI prints it without `--json` ("vouch: <message>\n"). With `--json`
 * the CLI prints `{"error": {kind, exitCode, message}}` on stderr instead: its shape and exit code
 * are checked here, and its message read as that line, so one expectation fits both forms.
 */
export function oneLineOf(result: CliResult): string {
  if (!result.stderr.startsWith('{')) return result.stderr;
  const { error } = JSON.parse(result.stderr) as { error: { kind: string; exitCode: number; message: string } };
  expect(Object.keys(error).sort()).toEqual(['exitCode', 'kind', 'message']);
  expect(error.exitCode).toBe(result.code);
  expect(['failed', 'usage', 'notFound', 'temporary']).toContain(error.kind);
  return `vouch: ${error.message}\n`;
}

export type CliEnv = NodeJS.ProcessEnv;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** True when the suite runs against the PostgreSQL server named by DATABASE_URL. */
export const onPostgres = !!process.env.DATABASE_URL;

/**
 * V8 flags of every `vouch` the tests start. `--liftoff-only`: WebAssembly (the embedded
 * database) runs as V8's baseline compiler makes it, without the optimising compiler, which for a
 * process that lives a few seconds spends more CPU than it saves: an embedded `vouch org create`
 * took 0.9-1.0 s of CPU instead of 1.6-2.2 s (and 310 MB instead of 400), on two cores the CPU
 * every other test file of the run was waiting for (docs/benchmarks.md, fourteenth session).
 */
const TEST_PROCESS_FLAGS = ['--liftoff-only'] as const;

function vouch(args: readonly string[], env: CliEnv): ChildProcess {
  return spawn(process.execPath, [...TEST_PROCESS_FLAGS, MAIN, ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Runs `vouch ARGS` from the sources to completion; `input` is written to its standard input. */
export function runCli(args: readonly string[], env: CliEnv, input = ''): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = vouch(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin?.end(input);
  });
}

/** Runs a `--json` command that must succeed and returns its one JSON document. */
export async function cliJson<T = Record<string, unknown>>(args: readonly string[], env: CliEnv, input?: string): Promise<T> {
  const result = await runCli(args, env, input);
  if (result.code !== 0) throw new Error(`vouch ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

export interface ThrowawayEnv {
  /** Environment for a CLI or server process: its own data folder, or its own PostgreSQL database. */
  env: CliEnv;
  /** Removes the data folder and, on PostgreSQL, drops the database. */
  cleanup(): Promise<void>;
}

/**
 * An environment nobody else uses: a temp VOUCH_DATA_DIR for the embedded database, and with
 * DATABASE_URL set, a new `vouch_test_<random>` database on that server (test files run in
 * parallel). Variables of the test runner's own environment that would change the CLI's
 * behaviour are reset. The database starts migrated (a copy of the run's template: PGlite's
 * initdb and the migrations are saved on the first command) unless `fresh` asks for an empty one.
 */
export async function throwawayEnv({ fresh = false } = {}): Promise<ThrowawayEnv> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-cli-'));
  if (!fresh && !process.env.DATABASE_URL) await fs.cp(inject('pgliteTemplateDir'), dataDir, { recursive: true });
  const env: CliEnv = { ...process.env, VOUCH_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  for (const name of ['PORT', 'HOST', 'PUBLIC_URL', 'VOUCH_DEMO', 'DATABASE_URL']) delete env[name];
  // The test apps' key (testConfig), so a CLI and an app in the test share one database's data
  // keys; PostgreSQL has no data folder for a generated key anyway. Delete it to test without.
  env.VOUCH_ENCRYPTION_KEY ??= TEST_ENCRYPTION_KEY.toString('base64');
  const removeDir = () => fs.rm(dataDir, { recursive: true, force: true });
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return { env, cleanup: removeDir };

  const name = `vouch_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, fresh ? `create database ${name}` : `create database ${name} template ${inject('postgresTemplate')}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  env.DATABASE_URL = url.toString();
  return {
    env,
    cleanup: async () => {
      await adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
      await removeDir();
    },
  };
}

export interface Banner {
  text: string;
  /** The API base URL the server printed. */
  url: string;
  /** Present only when this start seeded the demo organization. */
  demo?: { orgId: string; testSecret: string; liveSecret: string; portal: { email: string; password: string } };
}

export interface RunningServer {
  banner: Banner;
  /** Everything written to stdout / stderr so far. */
  output(): { stdout: string; stderr: string };
  /** Sends SIGTERM and waits for the exit; `ms` is how long it took. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  /** Sends `signal` (SIGKILL: the process dies on the spot) and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

const servers = new Set<ChildProcess>();

/** Starts `vouch serve` (PORT=0 unless `env` says otherwise) and waits for its banner. */
export function startServer(env: CliEnv, timeoutMs = 60_000): Promise<RunningServer> {
  const child = vouch(['serve'], { PORT: '0', HOST: '127.0.0.1', ...env });
  servers.add(child);
  let stdout = '';
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      servers.delete(child);
      resolve({ code, signal });
    }),
  );
  const server: Omit<RunningServer, 'banner'> = {
    output: () => ({ stdout, stderr }),
    stop: () => server.kill('SIGTERM'),
    kill: async (sent) => {
      const started = Date.now();
      child.kill(sent);
      const { code, signal } = await exited;
      return { code, signal, ms: Date.now() - started };
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`vouch serve printed no banner within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const banner = parseBanner(stdout);
      if (banner) {
        clearTimeout(timer);
        resolve({ ...server, banner });
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`vouch serve exited (${code ?? signal}) before its banner\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/**
 * The banner is written at once and ends with a blank line; undefined until all of it is in.
 * Log lines (pino writes JSON to stdout too) are left out.
 */
function parseBanner(stdout: string): Banner | undefined {
  const withoutLogs = stdout.replace(/^\{.*\}\n/gm, '');
  const start = withoutLogs.indexOf('Vouch is running');
  if (start < 0 || !withoutLogs.endsWith('\n\n')) return undefined;
  const text = withoutLogs.slice(start);
  const url = /^\s*API\s+(http\S+)$/m.exec(text)?.[1];
  if (!url) return undefined;
  const testSecret = /export VOUCH_TEST_SECRET=(\S+)/.exec(text)?.[1];
  const liveSecret = /export VOUCH_LIVE_SECRET=(\S+)/.exec(text)?.[1];
  const orgId = /demo organization "[^"]*" \(([0-9a-f-]{36})\)/.exec(text)?.[1];
  const portal = /Sign in to the portal as (\S+) with the password (\S+) /.exec(text);
  if (testSecret && liveSecret && orgId && portal) return { text, url, demo: { orgId, testSecret, liveSecret, portal: { email: portal[1]!, password: portal[2]! } } };
  return { text, url };
}

/** Kills any server a failed test left running. */
export function killServers(): void {
  for (const child of servers) child.kill('SIGKILL');
}
