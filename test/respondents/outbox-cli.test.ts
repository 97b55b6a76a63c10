import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService } from '../../src/accounts/service.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { openConfiguredDatabase } from '../../src/platform/db/open.js';
import { testConfig, bearer } from '../helpers/app.js';
import { cliJson, expectFailure, runCli, throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';
import { EMPLOYMENT_BODY, GUARANTOR_BODY } from './fixtures.js';

// Each CLI run starts `vouch` as built for the run (test/global-setup.ts): a few seconds each.
const SLOW = 60_000;

describe('vouch outbox', () => {
  let throwaway: ThrowawayEnv;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    // Two test-mode verifications and a live one created through the API of an app on the CLI's database, then closed.
    const config = loadConfig(throwaway.env);
    const database = await openConfiguredDatabase(config);
    try {
      await migrate(database.db);
      const app = await buildApp({ config: testConfig({ publicUrl: 'https://vouch.example.com', logLevel: 'silent' }), database });
      const org = await new AccountsService(database.db).create({ name: 'Kudi Loans', enabled: true, riskLevel: 'LOW', fund: 100_000 });
      const guarantor = await app.inject({ method: 'POST', url: '/v1/verifications/guarantors', headers: bearer(org.testSecret), payload: GUARANTOR_BODY });
      expect(guarantor.statusCode).toBe(201);
      const employment = await app.inject({ method: 'POST', url: '/v1/verifications/employments', headers: bearer(org.testSecret), payload: EMPLOYMENT_BODY });
      expect(employment.statusCode).toBe(201);
      const live = await app.inject({ method: 'POST', url: '/v1/verifications/employments', headers: bearer(org.liveSecret), payload: { ...EMPLOYMENT_BODY, employerEmail: 'hr@live.example.com' } });
      expect(live.statusCode).toBe(201);
      await app.close();
    } finally {
      await database.close();
    }
  }, SLOW);
  afterAll(() => throwaway.cleanup());

  it('lists the messages newest first as one JSON document, links included', async () => {
    const messages = await cliJson<Record<string, unknown>[]>(['outbox', 'list', '--json'], throwaway.env);
    expect(messages).toHaveLength(3);
    expect(messages.map((m) => [m.kind, m.to, m.mode])).toEqual([
      ['employer_request', 'hr@live.example.com', 'live'],
      ['employer_request', 'hr@kolanut.example.com', 'test'],
      ['guarantor_request', 'babatunde@example.com', 'test'],
    ]);
    expect(messages[2]).toMatchObject({ mode: 'test', sentAt: null, error: null, subject: 'Kudi Loans: will you stand as guarantor for Adaeze Okonkwo?' });
    expect(messages[2]!.link).toMatch(/^https:\/\/vouch\.example\.com\/respond\/[A-Za-z0-9_-]{43}$/);
    expect(messages[2]!.text).toContain(messages[2]!.link as string);
    // What an operator still has to pass on: live messages only, test-mode ones are never sent.
    const unsent = await cliJson<Record<string, unknown>[]>(['outbox', 'list', '--unsent', '--json'], throwaway.env);
    expect(unsent.map((m) => m.to)).toEqual(['hr@live.example.com']);
    const human = await runCli(['outbox', 'list'], throwaway.env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('to babatunde@example.com  (test mode: never sent, shown in the sandbox outbox)');
    expect(human.stdout).toContain('to hr@live.example.com  (not sent)');
  }, SLOW);

  it('never sends a test-mode message, even when asked by id', async () => {
    const [, testMessage] = await cliJson<{ id: number }[]>(['outbox', 'list', '--json'], throwaway.env);
    const result = await runCli(['outbox', 'send', String(testMessage!.id)], { ...throwaway.env, SMTP_URL: 'smtp://127.0.0.1:9' });
    expectFailure(result, /test-mode message: test mode never sends mail/);
  }, SLOW);

  it('refuses a bad limit, and sending without SMTP_URL, with one line', async () => {
    expectFailure(await runCli(['outbox', 'list', '--limit', '0', '--json'], throwaway.env), /--limit.*whole number from 1 to 1000/);
    expectFailure(await runCli(['outbox', 'send', '1', '--json'], throwaway.env), /SMTP_URL is not set/);
  }, SLOW);
});
