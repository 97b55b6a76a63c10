import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { openConfiguredDatabase } from '../../src/platform/db/open.js';
import { enqueueEvent } from '../../src/webhooks/events.js';
import { cliJson, killServers, onPostgres, startServer, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { killHard, startWorkerProcess, workerProcesses } from './worker-process.js';

// On PostgreSQL the restarted worker waits out the killed one's lease (5 s); starting processes takes longer.
const SLOW = 180_000;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a process killed in the middle of a delivery', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = { ...throwaway.env, VOUCH_ALLOW_PRIVATE_URLS: '1', VOUCH_DEMO: 'off' };
    receiver = await startWebhookReceiver();
  });
  afterEach(() => {
    killServers();
    for (const child of workerProcesses) child.kill('SIGKILL');
  });
  afterAll(async () => {
    await receiver.close();
    await throwaway.cleanup();
  });

  it('is delivered after the restart, with the same webhook-id', async () => {
    const org = await cliJson<{ id: string }>(['org', 'create', '--name', 'Crash', '--json'], env);
    const endpoint = await cliJson<{ secret: string }>(['webhook', 'set', org.id, '--mode', 'live', '--url', receiver.url, '--json'], env);
    receiver.setSecret(endpoint.secret);
    const database = await openConfiguredDatabase(loadConfig(env));
    let webhookId: string;
    try {
      // Webhook bodies are stored encrypted: the CLI's key (throwawayEnv).
      await openKeyring(database, loadConfig(env));
      webhookId = await enqueueEvent(database.db, { orgId: org.id, mode: 'live', type: 'guarantor.completed', data: { id: 7 } });
    } finally {
      await database.close();
    }

    // The receiver holds the first request open; the process dies while it waits for the answer.
    receiver.hangNext(1);
    let stopRestarted: () => Promise<unknown>;
    if (onPostgres) {
      const first = await startWorkerProcess(env);
      await receiver.waitFor((r) => r.id === webhookId, 60_000);
      await killHard(first);
      const second = await startWorkerProcess(env);
      stopRestarted = () => new Promise((resolve) => second.on('exit', resolve).kill('SIGTERM'));
    } else {
      // The embedded database: `serve` runs the worker in-process; restart it on the same folder.
      await startServer(env);
      await receiver.waitFor((r) => r.id === webhookId, 60_000);
      const pid = Number(await fs.readFile(path.join(env.VOUCH_DATA_DIR!, 'vouch.lock'), 'utf8'));
      killServers();
      while (isRunning(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
      const second = await startServer(env);
      stopRestarted = () => second.stop();
    }

    const redelivered = await receiver.waitForCount(2, 60_000, (r) => r.id === webhookId);
    expect(redelivered[0]!.answeredWith).toBeUndefined();
    expect(redelivered[1]!.answeredWith).toBe(204);
    expect(redelivered[1]!.verified).toBe(true);
    expect(redelivered[1]!.rawBody).toBe(redelivered[0]!.rawBody);

    // The cut-off attempt died with its process and is not in the log; the one after it is.
    await stopRestarted();
    const [delivery] = await cliJson<Array<Record<string, unknown>>>(['webhook', 'deliveries', org.id, '--mode', 'live', '--json'], env);
    expect(delivery).toMatchObject({ webhookId, status: 'delivered', attemptCount: 1, lastStatusCode: 204 });
  }, SLOW);
});
