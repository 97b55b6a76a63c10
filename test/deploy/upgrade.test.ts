import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, killServers, onPostgres, startServer, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';

/**
 * The rolling upgrade of docs/upgrades.md: the previous release (the commit before the newest
 * migration was added, built from git history) serves a database; this build's migrations apply
 * while it runs; it keeps serving lookups and workflow creations, side by side with this build's
 * server. On the embedded database (one process per data folder) the upgrade is stop, then start
 * the new version on the same folder.
 */

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SLOW = 300_000;
const MIGRATIONS = 'src/platform/db/migrations/';
const APPLICANT = { firstname: 'Babatunde', lastname: 'Adeyemi', dob: '02-11-1985' };
const ADDRESS = { street: '5 Upgrade Road', lga: 'Ikeja', state: 'Lagos', applicant: { firstname: 'Ada', lastname: 'Obi', idType: 'NIN', idNumber: '12345678901' } };

const git = async (...args: string[]) => (await run('git', args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 })).stdout.trim();

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface OldRelease {
  commit: string;
  main: string;
}

/**
 * Builds `commit`'s server into a cache folder keyed by the commit (repeated runs on one machine
 * build once). node_modules is this checkout's when the lock file is the same, else `npm ci`.
 * Resolves undefined when that commit does not build.
 */
async function buildRelease(commit: string): Promise<OldRelease | undefined> {
  const dir = path.join(os.tmpdir(), `vouch-release-${commit.slice(0, 12)}`);
  const main = path.join(dir, 'dist', 'main.js');
  const failed = `${dir}.failed`;
  // A cached build links to the node_modules of the checkout that made it, which may be gone
  // (a removed clone): then it is built again.
  if (existsSync(main) && existsSync(path.join(dir, 'node_modules', 'fastify', 'package.json'))) return { commit, main };
  if (existsSync(main)) await fs.rm(dir, { recursive: true, force: true });
  if (existsSync(failed)) return undefined;
  const staging = `${dir}.${process.pid}`;
  await fs.rm(staging, { recursive: true, force: true });
  await fs.mkdir(staging, { recursive: true });
  try {
    await run('sh', ['-c', `git archive --format=tar ${commit} | tar -x -C "${staging}"`], { cwd: ROOT });
    const sameLock = (await git('show', `${commit}:package-lock.json`)) === (await fs.readFile(path.join(ROOT, 'package-lock.json'), 'utf8')).trim();
    if (sameLock) await fs.symlink(path.join(ROOT, 'node_modules'), path.join(staging, 'node_modules'), 'dir');
    else await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: staging, timeout: 240_000 });
    await run(process.execPath, ['--import', 'tsx', 'scripts/build-server.ts', 'dist'], { cwd: staging, timeout: 120_000 });
  } catch {
    await fs.rm(staging, { recursive: true, force: true });
    await fs.writeFile(failed, '');
    return undefined;
  }
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rename(staging, dir);
  return { commit, main };
}

/**
 * The previous release: the parent of the commit that added the newest migration (VOUCH_UPGRADE_FROM
 * names another). A commit in history that does not build is passed over for the one before the
 * next newest migration.
 */
async function previousRelease(): Promise<OldRelease> {
  const pinned = process.env.VOUCH_UPGRADE_FROM;
  const candidates = pinned
    ? [await git('rev-parse', pinned)]
    : await Promise.all((await git('log', '--diff-filter=A', '--format=%H', '-4', '--', MIGRATIONS)).split('\n').map((added) => git('rev-parse', `${added}^`)));
  for (const commit of candidates) {
    const release = await buildRelease(commit);
    if (release) return release;
  }
  throw new Error(`none of the previous releases builds: ${candidates.join(', ')}`);
}

interface Server {
  url: string;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();

/** Starts `main serve` and resolves once /ready answers 200. */
async function startRelease(main: string, env: CliEnv): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [main, 'serve'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${main} serve exited: ${output}`);
    if (Date.now() > deadline) throw new Error(`${main} serve was not ready within 60 s: ${output}`);
    const ready = await fetch(`${url}/ready`).then((res) => res.ok, () => false);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      children.delete(child);
    },
  };
}

async function call(server: Server, method: string, url: string, secret: string, body?: object) {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

/** A lookup in the sandbox and a live address verification, on `server`; returns the address's id. */
async function expectServes(server: Server, org: { testSecret: string; liveSecret: string }, reference: string): Promise<number> {
  const lookup = await call(server, 'POST', '/v1/verifications/identities/nin/70412358961', org.testSecret, APPLICANT);
  expect([200, 201], lookup.json.message).toContain(lookup.status);
  expect(lookup.json.data).toMatchObject({ firstname: 'Babatunde' });
  const created = await call(server, 'POST', '/v1/verifications/addresses', org.liveSecret, { ...ADDRESS, reference });
  expect(created.status, created.json.message).toBe(201);
  return created.json.data.id as number;
}

async function expectAddress(server: Server, secret: string, id: number, reference: string): Promise<void> {
  const read = await call(server, 'GET', `/v1/verifications/addresses/${id}`, secret);
  expect(read.status).toBe(200);
  expect(read.json.data).toMatchObject({ id, reference, street: '5 Upgrade Road', applicant: { firstname: 'Ada', lastname: 'Obi' } });
}

describe(`rolling upgrade from the previous release on ${onPostgres ? 'PostgreSQL' : 'the embedded database'}`, () => {
  let release: OldRelease;
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let org: { id: string; testSecret: string; liveSecret: string };
  const oldCli = <T>(args: string[]) => run(process.execPath, [release.main, ...args], { env }).then(({ stdout }) => JSON.parse(stdout) as T);

  beforeAll(async () => {
    release = await previousRelease();
    // An empty data folder: the previous release makes its own schema.
    throwaway = await throwawayEnv({ fresh: true });
    env = { ...throwaway.env, VOUCH_DEMO: 'off' };
    // (The embedded database starts from the release's migrated template: nothing left to apply there.)
    await oldCli(['migrate', '--json']);
    org = await oldCli(['org', 'create', '--name', 'Upgrade Ltd', '--enable', '--risk-level', 'LOW', '--fund', '10000000', '--json']);
  }, SLOW);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    killServers();
    await throwaway?.cleanup();
  });

  if (onPostgres) {
    it('the previous release keeps serving while the new migrations apply, then beside the new release', async () => {
      const old = await startRelease(release.main, env);
      const before = await expectServes(old, org, 'before-upgrade');

      // This build's migrations, applied while the previous release serves.
      const { applied } = await cliJson<{ applied: string[] }>(['migrate', '--json'], env);
      expect(applied.length, `no migration is newer than ${release.commit}`).toBeGreaterThan(0);

      const during = await expectServes(old, org, 'during-upgrade');
      await expectAddress(old, org.liveSecret, before, 'before-upgrade');

      // Both versions side by side on one database: each reads what the other wrote.
      const next = await startServer(env);
      const current: Server = { url: next.banner.url, stop: async () => void (await next.stop()) };
      const after = await expectServes(current, org, 'new-release');
      await expectAddress(current, org.liveSecret, before, 'before-upgrade');
      await expectAddress(current, org.liveSecret, during, 'during-upgrade');
      await expectAddress(old, org.liveSecret, after, 'new-release');
      expect((await fetch(`${old.url}/ready`)).status).toBe(200);

      await old.stop();
      await current.stop();
    }, SLOW);
  } else {
    it('stop the previous release, start the new one on the same data folder: migrated, and everything still there', async () => {
      const old = await startRelease(release.main, env);
      const before = await expectServes(old, org, 'before-upgrade');
      await old.stop();

      const next = await startServer(env);
      const current: Server = { url: next.banner.url, stop: async () => void (await next.stop()) };
      await expectAddress(current, org.liveSecret, before, 'before-upgrade');
      await expectServes(current, org, 'new-release');
      await current.stop();
      const { applied } = await cliJson<{ applied: string[] }>(['migrate', '--json'], env);
      expect(applied).toEqual([]);
    }, SLOW);
  }
});
