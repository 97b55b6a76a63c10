import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, expectFailure, onPostgres, runCli, throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';

/**
 * `vouch upstream face-match ...` as an operator runs it: which engine decides an organization's
 * live face matches. Spawns: 13 (three of them fail before the database opens).
 */

let throwaway: ThrowawayEnv;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  throwaway = await throwawayEnv();
  env = { ...throwaway.env, ...(onPostgres ? { VOUCH_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') } : {}) };
  if (!onPostgres) delete env.VOUCH_ENCRYPTION_KEY;
}, 60_000);

afterAll(async () => {
  await throwaway?.cleanup();
});

describe('vouch upstream face-match', () => {
  it('sets, shows and lists an organization’s engine; refuses what cannot work; keeps a routed source', async () => {
    const org = await cliJson<{ id: string }>(['org', 'create', '--name', 'Face Routed', '--json'], env);
    await cliJson(['upstream', 'add', 'dojah', '--kind', 'dojah', '--url', 'https://api.dojah.io', '--secret', 'app:prod_sk_face', '--json'], env);

    // Mistakes seen before the database opens.
    expectFailure(await runCli(['upstream', 'face-match', 'set', org.id, 'cloud', '--json'], env), /^vouch: engine must be one of local, upstream, upstream-then-local, local-then-upstream\n$/);
    expectFailure(await runCli(['upstream', 'face-match', 'set', org.id, 'upstream', '--json'], env), /^vouch: engine upstream needs --source NAME/);
    expectFailure(await runCli(['upstream', 'face-match', 'set', org.id, 'local', '--source', 'dojah'], env), /^vouch: the local engine takes no --source\n$/);
    // ... and after.
    expectFailure(await runCli(['upstream', 'face-match', 'set', org.id, 'upstream', '--source', 'nope'], env), /^vouch: no upstream named "nope"\n$/);
    expectFailure(await runCli(['upstream', 'face-match', 'show', 'not-an-org'], env), /^vouch: no organization with id not-an-org\n$/);

    const set = await cliJson(['upstream', 'face-match', 'set', org.id, 'upstream-then-local', '--source', 'dojah', '--json'], env);
    expect(set).toEqual({ orgId: org.id, engine: 'upstream-then-local', source: 'dojah', updatedAt: expect.any(String) });
    expect(await cliJson(['upstream', 'face-match', 'show', org.id, '--json'], env)).toEqual(set);
    expect(await cliJson(['upstream', 'face-match', 'list', '--json'], env)).toEqual([set]);

    expectFailure(await runCli(['upstream', 'remove', 'dojah'], env), /^vouch: upstream "dojah" decides the face matches of 1 organization\(s\); route them elsewhere first/);

    const local = await runCli(['upstream', 'face-match', 'set', org.id, 'local'], env);
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).toBe(`${org.id}  local\n`);
    const removed = await runCli(['upstream', 'remove', 'dojah'], env);
    expect(removed.code, removed.stderr).toBe(0);
  }, 90_000);
});
