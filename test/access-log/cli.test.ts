import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, expectFailure, runCli, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';

// Spawns `vouch` as built for the run (test/global-setup.ts); the embedded database allows one process at a time.
const SLOW = 60_000;

describe('vouch org consent and vouch access-log', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = { ...throwaway.env, VOUCH_DEMO: '0' };
  });
  afterAll(() => throwaway.cleanup());

  it('shows and sets the consent setting; refuses a bad setting or organization in one line', { timeout: SLOW }, async () => {
    const org = await cliJson<{ id: string }>(['org', 'create', '--name', 'Consent Org', '--json'], env);
    expect(await cliJson(['org', 'consent', org.id, '--json'], env)).toEqual({ orgId: org.id, consentRequired: false });
    expect(await cliJson(['org', 'consent', org.id, 'required', '--json'], env)).toEqual({ orgId: org.id, consentRequired: true });
    expect(await cliJson(['org', 'consent', org.id, '--json'], env)).toEqual({ orgId: org.id, consentRequired: true });
    expectFailure(await runCli(['org', 'consent', org.id, 'maybe'], env), /setting must be "required" or "optional"/);
    expectFailure(await runCli(['org', 'consent', '00000000-0000-4000-8000-000000000000', 'required'], env), /no organization with id/);
  });

  it('prints the access log as JSON, filtered; refuses bad filters', { timeout: SLOW }, async () => {
    const log = await cliJson<{ data: unknown[]; total: number }>(['access-log', '--resource', 'address', '--json'], env);
    expect(log).toEqual({ data: [], total: 0 });
    expectFailure(await runCli(['access-log', '--from', 'yesterday'], env), /--from must be a date/);
    expectFailure(await runCli(['access-log', '--channel', 'fax'], env), /--channel must be one of api, portal, console, field, cli/);
  });
});
