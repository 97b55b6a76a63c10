import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, expectFailure, runCli, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';

// Spawns `vouch` as built for the run (test/global-setup.ts); the embedded database allows one process at a time.
const SLOW = 60_000;

describe('vouch operator create', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = { ...throwaway.env, VOUCH_DEMO: '0', PUBLIC_URL: 'https://vouch.example.ng' };
  });
  afterAll(() => throwaway.cleanup());

  it('prints the operator and a one-time sign-in link; a second time, or a bad address, is one line on stderr', { timeout: SLOW }, async () => {
    const created = await cliJson<Record<string, string>>(['operator', 'create', '--email', 'Ada@Ops.example', '--name', 'Ada Ops', '--json'], env);
    expect(Object.keys(created).sort()).toEqual(['email', 'id', 'linkExpiresAt', 'name', 'signInLink']);
    expect(created).toMatchObject({ email: 'ada@ops.example', name: 'Ada Ops' });
    expect(created.signInLink).toMatch(/^https:\/\/vouch\.example\.ng\/reset-password\?token=[\w-]{40,}$/);
    expect(Date.parse(created.linkExpiresAt!) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    expectFailure(await runCli(['operator', 'create', '--email', 'ada@ops.example', '--json'], env), /ada@ops\.example is already an operator/);
    expectFailure(await runCli(['operator', 'create', '--email', 'nope', '--json'], env), /--email "nope" is not an email address/);
  });
});
