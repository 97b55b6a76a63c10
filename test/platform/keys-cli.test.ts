import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, expectFailure, onPostgres, runCli, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';

// Each CLI run starts `vouch` as built for the run (test/global-setup.ts): a few seconds each.
const SLOW = 90_000;

interface Status {
  kekId: string;
  previousKekId: string | null;
  activeKey: string;
  keys: { id: string; purpose: 'data' | 'index'; kekId: string; active: boolean }[];
}

describe('vouch keys', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = throwaway.env;
  }, SLOW);
  afterAll(() => throwaway?.cleanup());

  it('shows the keys, rotates to a new data key, and re-wraps every key under a new VOUCH_ENCRYPTION_KEY', async () => {
    const first = await cliJson<Status>(['keys', 'status', '--json'], env);
    expect(first.keys.map((key) => key.purpose).sort()).toEqual(['data', 'index']);
    expect(first.keys.find((key) => key.active)!.id).toBe(first.activeKey);
    expect(JSON.stringify(first)).not.toContain(env.VOUCH_ENCRYPTION_KEY!);

    // Data written before the rotation, read after it (the registry import and a lookup of it).
    const line = JSON.stringify({ type: 'bvn', record: { bvn: '22233344455', firstname: 'Kelechi', lastname: 'Iheanacho', gender: 'Male', phone: '08012345670', birthdate: '03-10-1996' } });
    expect(await cliJson(['registry', 'import', '-', '--json'], env, line)).toMatchObject({ imported: 1, new: 1 });

    const rotated = await cliJson<{ created: string; activatesAt: string; rewrapped: string[]; kekId: string; reencrypted?: { rows: Record<string, number>; files: number } }>(
      ['keys', 'rotate', '--reencrypt', '--json'],
      env,
    );
    expect(rotated.created).not.toBe(first.activeKey);
    expect(rotated.rewrapped).toEqual([]);
    expect(rotated.reencrypted!.rows.registry_records).toBe(1);
    // On PostgreSQL the new key starts encrypting after the other processes' polls have loaded it.
    if (onPostgres) expect(Date.parse(rotated.activatesAt)).toBeGreaterThan(Date.now() - 60_000);
    const second = await cliJson<Status>(['keys', 'status', '--json'], env);
    expect(second.activeKey).toBe(rotated.created);
    expect(second.keys.filter((key) => key.purpose === 'data')).toHaveLength(2);
    expect(await cliJson(['registry', 'import', '-', '--json'], env, line)).toMatchObject({ imported: 1, unchanged: 1 });

    // A new KEK: refused alone, accepted with the old one as VOUCH_ENCRYPTION_KEY_PREVIOUS until rotate re-wraps.
    const newKek = Buffer.alloc(32, 0x42).toString('base64');
    const changed = { ...env, VOUCH_ENCRYPTION_KEY: newKek };
    expectFailure(await runCli(['keys', 'status', '--json'], changed), new RegExp(`^vouch: data key [0-9a-f]{8} is wrapped by the key-encryption key ${first.kekId}, which is neither VOUCH_ENCRYPTION_KEY`));
    const during = { ...changed, VOUCH_ENCRYPTION_KEY_PREVIOUS: env.VOUCH_ENCRYPTION_KEY };
    const rewrap = await cliJson<{ rewrapped: string[]; kekId: string }>(['keys', 'rotate', '--json'], during);
    expect(rewrap.rewrapped).toHaveLength(3);
    expect(rewrap.kekId).not.toBe(first.kekId);
    const after = await cliJson<Status>(['keys', 'status', '--json'], changed);
    expect(new Set(after.keys.map((key) => key.kekId))).toEqual(new Set([rewrap.kekId]));
    expect(await cliJson(['registry', 'import', '-', '--json'], changed, line)).toMatchObject({ imported: 1, unchanged: 1 });
    // The old key alone no longer opens anything.
    expectFailure(await runCli(['keys', 'status'], env), /is neither VOUCH_ENCRYPTION_KEY/);
  }, 4 * SLOW);

  it.runIf(onPostgres)('refuses personal data without VOUCH_ENCRYPTION_KEY on PostgreSQL, with one line', async () => {
    const withoutKey = { ...env };
    delete withoutKey.VOUCH_ENCRYPTION_KEY;
    expectFailure(await runCli(['registry', 'import', '-', '--json'], withoutKey, JSON.stringify({ type: 'bvn', record: { bvn: '22233344466', firstname: 'Ada', lastname: 'Obi', gender: 'Female', phone: '08012345671', birthdate: '01-01-1990' } })), /^vouch: personal data cannot be encrypted or read: VOUCH_ENCRYPTION_KEY is not set/);
    expectFailure(await runCli(['keys', 'status', '--json'], withoutKey), /^vouch: VOUCH_ENCRYPTION_KEY is not set/);
    expectFailure(await runCli(['serve'], { ...withoutKey, PORT: '0' }), /^vouch: VOUCH_ENCRYPTION_KEY is not set/);
    // Commands without personal data still work.
    expect((await runCli(['price', 'list', '--json'], withoutKey)).code).toBe(0);
  }, SLOW);
});
