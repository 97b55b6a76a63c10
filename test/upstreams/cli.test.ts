import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, expectFailure, onPostgres, runCli, throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';

/**
 * `vouch upstream ...` as an operator runs it. Spawns: 12 (the successful commands, one failure
 * per kind of mistake that needs the database, four that fail before opening it).
 */

const SECRET = 'sk_live_upstream_secret_never_printed';
let throwaway: ThrowawayEnv;
let env: NodeJS.ProcessEnv;
const outputs: string[] = [];

async function run(args: string[]) {
  const result = await runCli(args, env);
  outputs.push(result.stdout, result.stderr);
  return result;
}

beforeAll(async () => {
  throwaway = await throwawayEnv();
  // On PostgreSQL the key must come from the environment; the embedded default makes its own.
  env = { ...throwaway.env, ...(onPostgres ? { VOUCH_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') } : {}) };
  if (!onPostgres) delete env.VOUCH_ENCRYPTION_KEY;
}, 60_000);

afterAll(async () => {
  await throwaway?.cleanup();
});

describe('vouch upstream', () => {
  it('adds, lists, orders, sets a cache TTL, reports status and removes', async () => {
    const added = await cliJson(['upstream', 'add', 'primary', '--kind', 'verifyme', '--url', 'https://verify.example.com/', '--secret', SECRET, '--types', 'bvn,nin', '--timeout-ms', '3000', '--json'], env);
    expect(added).toEqual({ name: 'primary', kind: 'verifyme', url: 'https://verify.example.com', types: ['bvn', 'nin'] });
    if (!onPostgres) {
      const stat = fs.statSync(path.join(env.VOUCH_DATA_DIR!, 'encryption.key'));
      expect(stat.mode & 0o777).toBe(0o600);
    }

    const duplicate = await run(['upstream', 'add', 'primary', '--kind', 'verifyme', '--url', 'https://other.example.com', '--secret', SECRET, '--json']);
    expectFailure(duplicate, /^vouch: an upstream named "primary" already exists/);

    const badKind = await run(['upstream', 'add', 'other', '--kind', 'nope', '--url', 'https://x.example.com', '--secret', SECRET, '--json']);
    expectFailure(badKind, /^vouch: unknown kind "nope"; one of verifyme, dojah, youverify/);
    const badUrl = await run(['upstream', 'add', 'other', '--kind', 'verifyme', '--url', 'ftp://x', '--secret', SECRET, '--timeout-ms', '5', '--json']);
    expectFailure(badUrl, /^vouch: --url must start with https:\/\/ or http:\/\//);
    // Each provider checks its own secret's shape and its own types, naming neither value.
    const dojahSecret = await run(['upstream', 'add', 'dojah', '--kind', 'dojah', '--url', 'https://api.dojah.io', '--secret', SECRET, '--json']);
    expectFailure(dojahSecret, /^vouch: --secret: the dojah secret must be APP_ID:SECRET_KEY/);
    const youverifyTypes = await run(['upstream', 'add', 'yv', '--kind', 'youverify', '--url', 'https://api.youverify.co', '--secret', SECRET, '--types', 'bvn', '--json']);
    expectFailure(youverifyTypes, /^vouch: kind youverify does not offer bvn; it offers nin, vnin, tin/);

    const order = await cliJson(['upstream', 'order', 'bvn', 'primary', 'embedded', '--json'], env);
    expect(order).toEqual({ type: 'bvn', order: ['primary', 'embedded'] });
    const wrongType = await run(['upstream', 'order', 'tin', 'primary', '--json']);
    expectFailure(wrongType, /^vouch: upstream "primary" does not serve tin; it serves bvn, nin/);

    expect(await cliJson(['upstream', 'cache-ttl', 'bvn', '3600', '--json'], env)).toEqual({ type: 'bvn', seconds: 3600 });

    const listed = await cliJson<unknown[]>(['upstream', 'list', '--json'], env);
    expect(listed).toEqual([{ name: 'primary', kind: 'verifyme', url: 'https://verify.example.com', types: ['bvn', 'nin'], status: 'no lookups yet' }]);
    const status = await cliJson<Record<string, unknown>[]>(['upstream', 'status', '--json'], env);
    expect(status).toEqual([expect.objectContaining({ name: 'primary', circuit: null, failures: 0, latencyMs: { p50: null, p99: null } })]);

    const removed = await run(['upstream', 'remove', 'primary']);
    expect(removed.code, removed.stderr).toBe(0);
    for (const text of outputs) expect(text).not.toContain(SECRET);
  }, 60_000);

  it.runIf(onPostgres)('refuses to store a secret on PostgreSQL without VOUCH_ENCRYPTION_KEY', async () => {
    const withoutKey = { ...throwaway.env };
    delete withoutKey.VOUCH_ENCRYPTION_KEY;
    const result = await runCli(['upstream', 'add', 'primary', '--kind', 'verifyme', '--url', 'https://verify.example.com', '--secret', SECRET, '--json'], withoutKey);
    expectFailure(result, /^vouch: VOUCH_ENCRYPTION_KEY is not set: set it to 32 random bytes/);
    expect(result.stderr).not.toContain(SECRET);
  }, 30_000);
});
