import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { openConfiguredDatabase } from '../../src/platform/db/open.js';
import { enqueueEvent } from '../../src/webhooks/events.js';
import { cliJson, expectFailure, runCli, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';
import { startTestWorker, startWebhookReceiver } from '../helpers/webhook-receiver.js';

// Every case spawns `vouch` as built for the run (test/global-setup.ts); the embedded database allows one at a time.
const SLOW = 120_000;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('vouch webhook', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let allowed: CliEnv;
  let orgId: string;
  let otherOrgId: string;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = throwaway.env;
    allowed = { ...env, VOUCH_ALLOW_PRIVATE_URLS: '1' };
    orgId = (await cliJson<{ id: string }>(['org', 'create', '--name', 'Hooks', '--json'], env)).id;
    otherOrgId = (await cliJson<{ id: string }>(['org', 'create', '--name', 'Others', '--json'], env)).id;
  }, SLOW);
  afterAll(async () => {
    await throwaway.cleanup();
  });

  it('set refuses private and malformed URLs with one line on stderr', async () => {
    // These fail before the database is opened, so they can run side by side.
    const set = (url: string, mode = 'test') => runCli(['webhook', 'set', orgId, '--mode', mode, '--url', url, '--json'], env);
    const [loopback, privateNet, notUrl, ftp, badMode] = await Promise.all([
      set('http://127.0.0.1:9/hook'),
      set('http://10.1.2.3/hook'),
      set('not a url'),
      set('ftp://example.com/x'),
      set('https://93.184.215.14/x', 'sandbox'),
    ]);
    expectFailure(loopback, /^vouch: webhook URL resolves to a loopback or private network address/);
    expectFailure(privateNet, /private network address/);
    // It says how to allow it while developing, for the server too.
    expectFailure(loopback, /set VOUCH_ALLOW_PRIVATE_URLS=1 where Vouch runs \(the server, which sends the events, as well as the CLI\)\s*$/);
    expectFailure(notUrl, /webhook URL is not a valid URL/);
    expectFailure(ftp, /must be an http or https URL/);
    expectFailure(badMode, /mode must be one of test, live/);
    expectFailure(await runCli(['webhook', 'set', '00000000-0000-4000-8000-000000000000', '--mode', 'test', '--url', 'https://93.184.215.14/x', '--json'], env), /no organization/);
    expectFailure(await runCli(['webhook', 'show', orgId, '--mode', 'test', '--json'], env), /has no test webhook endpoint/);
  }, SLOW);

  it('set prints {url, secret}; a later set keeps the secret, --rotate and rotate-secret replace it', async () => {
    const first = await cliJson(['webhook', 'set', orgId, '--mode', 'test', '--url', 'http://127.0.0.1:9/hook', '--json'], allowed);
    expect(Object.keys(first).sort()).toEqual(['secret', 'signing', 'url']);
    expect(first).toEqual({ url: 'http://127.0.0.1:9/hook', secret: expect.stringMatching(SECRET), signing: 'standard' });
    expect(Buffer.from(String(first.secret).slice('whsec_'.length), 'base64')).toHaveLength(32);

    const moved = await cliJson(['webhook', 'set', orgId, '--mode', 'test', '--url', 'https://93.184.215.14/new', '--json'], env);
    expect(moved).toEqual({ url: 'https://93.184.215.14/new', secret: first.secret, signing: 'standard' });

    const live = await cliJson(['webhook', 'set', orgId, '--mode', 'live', '--url', 'https://93.184.215.14/live', '--json'], env);
    expect(live.secret).toMatch(SECRET);
    expect(live.secret).not.toBe(first.secret);

    const rotated = await cliJson(['webhook', 'set', orgId, '--mode', 'test', '--url', 'https://93.184.215.14/new', '--rotate', '--json'], env);
    expect(rotated.secret).toMatch(SECRET);
    expect(rotated.secret).not.toBe(first.secret);

    const before = Date.now();
    const again = await cliJson<{ url: string; secret: string; previousSecretExpiresAt: string }>(['webhook', 'rotate-secret', orgId, '--mode', 'test', '--json'], env);
    expect(again.secret).not.toBe(rotated.secret);
    const expires = new Date(again.previousSecretExpiresAt).getTime();
    expect(expires).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000);

    const shown = await cliJson(['webhook', 'show', orgId, '--mode', 'test', '--json'], env);
    expect(shown).toMatchObject({ url: 'https://93.184.215.14/new', secret: again.secret, previousSecretExpiresAt: again.previousSecretExpiresAt });
  }, SLOW);

  it('set --signing chooses the signature headers, which a later set keeps; the worker signs that way', async () => {
    const signingOrgId = (await cliJson<{ id: string }>(['org', 'create', '--name', 'Signing', '--json'], env)).id;
    const receiver = await startWebhookReceiver();
    try {
      const set = (...extra: string[]) => cliJson(['webhook', 'set', signingOrgId, '--mode', 'live', '--url', receiver.url, ...extra, '--json'], allowed);
      const first = await set('--signing', 'verifyme');
      expect(first).toEqual({ url: receiver.url, secret: expect.stringMatching(SECRET), signing: 'verifyme' });
      expect(await set()).toMatchObject({ signing: 'verifyme', secret: first.secret });
      expectFailure(await runCli(['webhook', 'set', signingOrgId, '--mode', 'live', '--url', receiver.url, '--signing', 'hmac', '--json'], allowed), /signing must be one of standard, verifyme, both/);
      expect(await cliJson(['webhook', 'show', signingOrgId, '--mode', 'live', '--json'], env)).toMatchObject({ signing: 'verifyme' });
      receiver.setSecret(String(first.secret));

      const sendOne = async () => {
        const config = loadConfig(allowed);
        const database = await openConfiguredDatabase(config);
        try {
          await openKeyring(database, config);
          const id = await enqueueEvent(database.db, { orgId: signingOrgId, mode: 'live', type: 'address.completed', data: { id: 9 } });
          const worker = await startTestWorker(database);
          try {
            return await receiver.waitFor((r) => r.id === id, 30_000);
          } finally {
            await worker.stop();
          }
        } finally {
          await database.close();
        }
      };
      const verifyme = await sendOne();
      expect(verifyme.verifymeVerified).toBe(true);
      expect(verifyme.headers['webhook-signature']).toBeUndefined();

      expect(await set('--signing', 'both')).toMatchObject({ signing: 'both' });
      const both = await sendOne();
      expect(both.verifymeVerified && both.verified).toBe(true);
    } finally {
      await receiver.close();
    }
  }, SLOW);

  it('deliveries lists one organization and mode; redeliver queues a delivery again', async () => {
    const config = loadConfig(env);
    const database = await openConfiguredDatabase(config);
    const ids: Record<string, string> = {};
    try {
      // Webhook bodies are stored encrypted: the CLI's key (throwawayEnv).
      await openKeyring(database, config);
      ids.test = await enqueueEvent(database.db, { orgId, mode: 'test', type: 'address.completed', data: { id: 1 } });
      ids.live = await enqueueEvent(database.db, { orgId, mode: 'live', type: 'business.cancelled', data: { id: 2 } });
      ids.other = await enqueueEvent(database.db, { orgId: otherOrgId, mode: 'test', type: 'address.completed', data: { id: 3 } });
    } finally {
      await database.close();
    }

    const testOnly = await cliJson<Array<Record<string, unknown>>>(['webhook', 'deliveries', orgId, '--mode', 'test', '--json'], env);
    expect(testOnly.map((d) => d.webhookId)).toEqual([ids.test]);
    expect(testOnly[0]).toMatchObject({ orgId, mode: 'test', type: 'address.completed', status: 'pending', attemptCount: 0, attempts: [] });
    const both = await cliJson<Array<Record<string, unknown>>>(['webhook', 'deliveries', orgId, '--json'], env);
    expect(both.map((d) => d.webhookId)).toEqual([ids.live, ids.test]);
    const limited = await cliJson<Array<Record<string, unknown>>>(['webhook', 'deliveries', orgId, '--limit', '1', '--status', 'pending', '--json'], env);
    expect(limited.map((d) => d.webhookId)).toEqual([ids.live]);
    expect(await cliJson(['webhook', 'deliveries', orgId, '--status', 'delivered', '--json'], env)).toEqual([]);
    const others = await cliJson<Array<Record<string, unknown>>>(['webhook', 'deliveries', otherOrgId, '--json'], env);
    expect(others.map((d) => d.webhookId)).toEqual([ids.other]);

    const redelivered = await cliJson(['webhook', 'redeliver', String(testOnly[0]!.id), '--json'], env);
    expect(redelivered).toMatchObject({ id: testOnly[0]!.id, webhookId: ids.test, status: 'pending' });
    const audited = await openConfiguredDatabase(config);
    try {
      const rows = await audited.db.selectFrom('audit_events').select(['actor_kind', 'actor_id', 'action', 'target']).where('org_id', '=', orgId).where('action', '=', 'webhook.resent').execute();
      expect(rows).toEqual([{ actor_kind: 'cli', actor_id: null, action: 'webhook.resent', target: ids.test }]);
    } finally {
      await audited.close();
    }

    const [notNumber, zeroLimit] = await Promise.all([
      runCli(['webhook', 'redeliver', 'abc', '--json'], env),
      runCli(['webhook', 'deliveries', orgId, '--limit', '0', '--json'], env),
    ]);
    expectFailure(notNumber, /must be a whole number/);
    expectFailure(zeroLimit, /must be a whole number from 1/);
    expectFailure(await runCli(['webhook', 'redeliver', '999999999', '--json'], env), /no webhook delivery 999999999/);
    expectFailure(await runCli(['webhook', 'deliveries', '00000000-0000-4000-8000-000000000000', '--json'], env), /no organization/);
  }, SLOW);
});
