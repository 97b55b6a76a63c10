import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_FUNDING } from '../src/demo.js';
import { IDENTITY_BILLABLES } from '../src/identities/lookups.js';
import type { BvnRecord } from '../src/identities/records.js';
import { demoExamples, generateDemoRegistry } from '../src/identities/registry/demo.js';
import { SESSION_COOKIE } from '../src/portal/sessions.js';
import { readmeCurls } from './helpers/readme-examples.js';
import { cliJson, expectFailure, killServers, onPostgres, runCli, startServer, throwawayEnv, type CliEnv, type CliResult, type RunningServer, type ThrowawayEnv } from './helpers/cli.js';

// Each case starts `vouch serve` (the build, see test/global-setup.ts) or a CLI command: seconds each.
const SLOW = 60_000;

const SANDBOX_APPLICANT = { firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' };

type Demo = NonNullable<RunningServer['banner']['demo']>;

describe('vouch serve over real sockets', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let server: RunningServer | undefined;
  let demo: Demo;
  /** The demo owner's portal session, once signed in. */
  let portalCookie = '';
  let badPort: Promise<CliResult>;
  let firstDemoBvn: Promise<BvnRecord>;

  const api = (path: string, init: RequestInit = {}) => fetch(`${server?.banner.url}${path}`, init);
  const lookupBvn = (secret: string, bvn: string, applicant: object) =>
    api(`/v1/verifications/identities/bvn/${bvn}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(applicant),
    });
  const balance = async () => (await cliJson<{ balance: number }>(['org', 'show', demo.orgId, '--json'], env)).balance;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = { ...throwaway.env, VOUCH_DEMO: 'on' };
    // Fails on its configuration before touching the database, so it can run alongside the rest.
    badPort = runCli(['serve'], { ...env, PORT: '99999' });
    // The README's live example: the first BVN of the registry the demo seed loads.
    firstDemoBvn = generateDemoRegistry().then((records) => {
      const bvn = demoExamples(records).bvn;
      if (!bvn) throw new Error('the demo registry has no BVN');
      return bvn;
    });
  });
  afterAll(async () => {
    killServers();
    await throwaway?.cleanup();
  });

  it('first start on an empty database seeds the demo organization and prints both secrets', { timeout: SLOW }, async () => {
    server = await startServer(env);
    expect(server.banner.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.banner.url).not.toMatch(/:0$/);
    expect(server.banner.demo, server.banner.text).toBeDefined();
    demo = server.banner.demo as Demo;
    expect(demo.testSecret).toMatch(/^sk_test_\S{20,}$/);
    expect(demo.liveSecret).toMatch(/^sk_live_\S{20,}$/);
  });

  it('answers /health, /ready, /openapi.json and /docs/ over HTTP', { timeout: SLOW }, async () => {
    const health = await api('/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    const ready = await api('/ready');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', database: onPostgres ? 'postgres' : 'pglite' });

    const openapi = await api('/openapi.json');
    expect(openapi.status).toBe(200);
    const document = (await openapi.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toContain('/v1/verifications/identities/bvn/{ref}');

    const docs = await api('/docs/');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    expect(await docs.text()).toMatch(/swagger/i);
  });

  it('signs the demo owner in to the portal with the password the banner printed, and the session cookie works', { timeout: SLOW }, async () => {
    // The built server parses and sets cookies through @fastify/cookie's dynamic import of
    // cookie, a CommonJS package: the bundle must hand it the named exports Node would
    // (scripts/build-server.ts). Every portal request with a cookie answered 500 when it did not.
    const origin = server!.banner.url;
    const signIn = await api('/api/auth/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify(demo.portal),
    });
    expect(signIn.status, await signIn.clone().text()).toBe(200);
    expect(await signIn.json()).toEqual({ totpRequired: false });
    const cookie = signIn.headers.get('set-cookie')?.split(';')[0];
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=\\S{20,}$`));

    portalCookie = cookie!;
    const sessions = await api('/api/account/sessions', { headers: { cookie: cookie! } });
    expect(sessions.status, await sessions.clone().text()).toBe(200);
    // A cookie that names no session is refused in the portal's style, not failed with a 500.
    const stranger = await api('/api/account/sessions', { headers: { cookie: `${SESSION_COOKIE}=not-a-session` } });
    expect(stranger.status).toBe(401);
  });

  it('answers every documented GET of the built server, signed in, without a 5xx or the web app\'s page under /v1 and /api', { timeout: SLOW }, async () => {
    // The tests build their apps from the sources; this reads each route as the bundle runs it,
    // so a module a route loads that the bundle broke shows here (the cookie 500 above did not).
    const document = (await (await api('/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    const values: Record<string, string> = { orgId: demo.orgId, mode: 'test', kind: 'address', type: 'bvn_basic', ref: '22345678901' };
    const failures: string[] = [];
    let read = 0;
    for (const [template, operations] of Object.entries(document.paths)) {
      if (!('get' in operations)) continue;
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? 'a1b2c3');
      // A cookie always, so every route parses one, even where the sign-in above failed.
      const res = await api(path, { headers: { authorization: `Bearer ${demo.testSecret}`, cookie: portalCookie || `${SESSION_COOKIE}=none` } });
      read++;
      const body = await res.text();
      const page = /^\/(v1|api)\//.test(path) && /^\s*<!doctype/i.test(body);
      if (res.status >= 500 || page) failures.push(`${res.status} GET ${path}: ${body.slice(0, 200)}`);
    }
    expect(read).toBeGreaterThan(60);
    expect(failures).toEqual([]);
  });

  it('answers a sandbox lookup of the test BVN with the test secret', { timeout: SLOW }, async () => {
    const res = await lookupBvn(demo.testSecret, '22345678901', SANDBOX_APPLICANT);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; data: { bvn: string; fieldMatches: Record<string, boolean> } };
    expect(body.status).toBe('success');
    expect(body.data.bvn).toBe('22345678901');
    expect(Object.keys(body.data.fieldMatches).length).toBeGreaterThan(0);
    for (const [field, match] of Object.entries(body.data.fieldMatches)) expect(match, field).toBe(true);
  });

  it('answers a live lookup of the first demo BVN with the live secret and charges the wallet', { timeout: SLOW }, async () => {
    const example = await firstDemoBvn;
    const res = await lookupBvn(demo.liveSecret, example.bvn, { firstname: example.firstname, lastname: example.lastname, dob: example.birthdate });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { bvn: string; lastname: string; fieldMatches: Record<string, boolean> } };
    expect(body.data).toMatchObject({ bvn: example.bvn, lastname: example.lastname });
    for (const [field, match] of Object.entries(body.data.fieldMatches)) expect(match, field).toBe(true);
    // PostgreSQL takes a second client; the embedded database is read once the server has stopped.
    if (onPostgres) expect(await balance()).toBe(DEMO_FUNDING - IDENTITY_BILLABLES.bvn_basic.defaultPrice);
  });

  it.skipIf(onPostgres)('while it runs, CLI commands go through it (the socket in the data folder); those that cannot are refused with a clear message', { timeout: SLOW }, async () => {
    // PGlite is single-process: the command finds the folder locked and hands its arguments to
    // the server, which runs it on its own database and answers with the output and exit code.
    const funded = await runCli(['org', 'fund', demo.orgId, '100', '--json'], env);
    expect(funded.code, funded.stderr).toBe(0);
    expect(JSON.parse(funded.stdout)).toMatchObject({ id: demo.orgId, balance: DEMO_FUNDING - IDENTITY_BILLABLES.bvn_basic.defaultPrice + 100 });
    const listed = await runCli(['org', 'list'], env);
    expect(listed.stdout).toContain(`${demo.orgId}  Demo Company`);
    // Failures keep their exit codes and forms through the server.
    const unknown = await runCli(['org', 'show', '00000000-0000-4000-8000-000000000000', '--json'], env);
    expectFailure(unknown, /no organization/);
    expect(unknown.code).toBe(3);
    // A command that cannot run inside the server says the folder is in use: a temporary failure (EX_TEMPFAIL).
    const refused = await runCli(['migrate'], env);
    expectFailure(refused, /^vouch: the embedded database in \S+ is in use by process \d+ \(a running vouch\); stop it first/);
    expect(refused.code).toBe(75);
    // The socket is the machine user's alone.
    expect((await fs.stat(path.join(env.VOUCH_DATA_DIR!, 'vouch.sock'))).mode & 0o777).toBe(0o600);
    expect((await api('/ready')).status).toBe(200);
  });

  it("prints links at the running server's address, not the command's own default", { timeout: SLOW }, async () => {
    // The command has no PORT or PUBLIC_URL of its own (its default would be port 8080): on
    // PostgreSQL it reads the address the server recorded at start; on the embedded database it
    // runs inside the server.
    const created = await runCli(['operator', 'create', '--email', 'links-check@operator.example', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { signInLink } = JSON.parse(created.stdout) as { signInLink: string };
    expect(signInLink.startsWith(`${server!.banner.url}/`), signInLink).toBe(true);
  });

  it('stops on SIGTERM with exit code 0 within a few seconds', { timeout: SLOW }, async () => {
    const stopped = await server?.stop();
    expect(stopped).toMatchObject({ code: 0, signal: null });
    expect(stopped?.ms, `exited after ${stopped?.ms} ms`).toBeLessThan(5_000);
    await expect(fetch(`${server?.banner.url}/health`)).rejects.toThrow();
    // The command run through the server stored its credit; the socket is gone with the server.
    if (!onPostgres) expect(await balance()).toBe(DEMO_FUNDING - IDENTITY_BILLABLES.bvn_basic.defaultPrice + 100);
    if (!onPostgres) await expect(fs.stat(path.join(env.VOUCH_DATA_DIR!, 'vouch.sock'))).rejects.toThrow();
  });

  it('restarts on the same database without seeding again, and the earlier data is still there', { timeout: SLOW }, async () => {
    server = await startServer(env);
    expect(server.banner.demo).toBeUndefined();
    expect(server.banner.text).not.toMatch(/SECRET|sk_(test|live)_/);

    // The organization, both secrets and the demo registry survived the restart.
    expect((await lookupBvn(demo.testSecret, '22345678901', SANDBOX_APPLICANT)).status).toBe(200);
    const example = await firstDemoBvn;
    expect((await lookupBvn(demo.liveSecret, example.bvn, { lastname: example.lastname })).status).toBe(200);
    if (onPostgres) expect(await balance()).toBe(DEMO_FUNDING - 2 * IDENTITY_BILLABLES.bvn_basic.defaultPrice);
  });

  it("runs the README's examples as written, each answering the status its comment says", { timeout: SLOW }, async () => {
    const examples = readmeCurls();
    expect(examples.length).toBeGreaterThanOrEqual(7);
    const secrets: Record<string, string> = { VOUCH_TEST_SECRET: demo.testSecret, VOUCH_LIVE_SECRET: demo.liveSecret };
    const fill = (text: string) => text.replace(/\$(VOUCH_(?:TEST|LIVE)_SECRET)/g, (_, name: string) => secrets[name]!);
    for (const example of examples) {
      const url = example.url.replace('http://127.0.0.1:8080', server!.banner.url);
      const headers = Object.fromEntries(Object.entries(example.headers).map(([name, value]) => [name, fill(value)]));
      const res = await fetch(url, { method: example.method, headers, ...(example.body === undefined ? {} : { body: example.body }) });
      const text = await res.text();
      const where = `${example.comment}: ${example.method} ${example.url} answered ${res.status} ${text.slice(0, 300)}`;
      if (example.status === undefined) expect(res.status >= 200 && res.status < 300, where).toBe(true);
      else expect(res.status, where).toBe(example.status);
    }
    expect(await server!.stop()).toMatchObject({ code: 0 });
  });

  it('refuses a bad PORT: non-zero exit, one stderr line naming PORT', { timeout: SLOW }, async () => {
    expectFailure(await badPort, /\bPORT\b.*99999/);
  });
});
