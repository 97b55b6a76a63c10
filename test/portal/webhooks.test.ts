import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mode } from '../../src/platform/db/schema.js';
import type { Worker } from '../../src/worker.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';
import { startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

let ctx: TestContext;
let receiver: WebhookReceiver;
let worker: Worker;
beforeAll(async () => {
  ctx = await buildTestContext();
  receiver = await startWebhookReceiver();
  worker = await startTestWorker(ctx.database);
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await ctx?.close();
});

type Call = { method: 'GET' | 'PUT' | 'POST'; path: string; payload?: object };

function call(user: PortalUser | undefined, orgId: string, { method, path, payload }: Call) {
  return portal(ctx.app, user, { method, url: `/api/orgs/${orgId}${path}`, ...(payload === undefined ? {} : { payload }) });
}

async function ok(user: PortalUser, orgId: string, request: Call, status = 200) {
  const res = await call(user, orgId, request);
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

async function member(orgId: string, role: 'developer' | 'viewer'): Promise<PortalUser> {
  const user = await portalUser(ctx.database.db);
  await addMember(ctx.database.db, orgId, user.personId, role);
  return user;
}

async function auditOf(orgId: string) {
  return ctx.database.db.selectFrom('audit_events').select(['action', 'actor_kind', 'target', 'before', 'after']).where('org_id', '=', orgId).orderBy('id').execute();
}

/** Log rows written straight to the table, already ended, so the worker leaves them alone. */
async function seedDeliveries(orgId: string, mode: Mode, statuses: ('delivered' | 'failed')[]): Promise<number[]> {
  const ids: number[] = [];
  for (const [i, status] of statuses.entries()) {
    const row = await ctx.database.db
      .insertInto('webhook_deliveries')
      .values({
        message_id: `msg_seed_${orgId.slice(0, 8)}_${mode}_${i}_${Math.random().toString(36).slice(2)}`,
        org_id: orgId,
        mode,
        event_type: 'address.completed',
        payload: JSON.stringify({ type: 'address.completed', timestamp: new Date().toISOString(), data: { id: i } }),
        status,
        attempts: 1,
        last_status_code: status === 'delivered' ? 200 : 500,
        delivered_at: status === 'delivered' ? new Date() : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(Number(row.id));
  }
  return ids;
}

describe('the endpoint of each mode', () => {
  it('starts unset, is set per mode, keeps its secret when the URL changes, and is audited', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    expect(await ok(owner, org.id, { method: 'GET', path: '/webhooks' })).toEqual({
      mode: 'test',
      url: null,
      signing: null,
      secretHint: null,
      createdAt: null,
      updatedAt: null,
      previousSecretExpiresAt: null,
    });

    const set = await ok(owner, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: receiver.url } });
    expect(set).toEqual({
      mode: 'test',
      url: receiver.url,
      signing: 'standard',
      secretHint: expect.stringMatching(/^whsec_….{4}$/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      previousSecretExpiresAt: null,
    });
    expect(await ok(owner, org.id, { method: 'GET', path: '/webhooks?mode=test' })).toEqual(set);
    expect((await ok(owner, org.id, { method: 'GET', path: '/webhooks?mode=live' })).url).toBeNull();

    const moved = await ok(owner, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: `${receiver.url}/v2` } });
    expect(moved).toMatchObject({ url: `${receiver.url}/v2`, secretHint: set.secretHint, createdAt: set.createdAt });

    const live = await ok(owner, org.id, { method: 'PUT', path: '/webhooks?mode=live', payload: { url: 'https://hooks.example.com/vouch' } });
    expect(live.secretHint).not.toBe(set.secretHint);
    expect((await ok(owner, org.id, { method: 'GET', path: '/webhooks' })).url).toBe(`${receiver.url}/v2`);

    expect(await auditOf(org.id)).toEqual([
      { action: 'webhook.url_set', actor_kind: 'member', target: 'test webhook', before: { url: null }, after: { url: receiver.url } },
      { action: 'webhook.url_set', actor_kind: 'member', target: 'test webhook', before: { url: receiver.url }, after: { url: `${receiver.url}/v2` } },
      { action: 'webhook.url_set', actor_kind: 'member', target: 'live webhook', before: { url: null }, after: { url: 'https://hooks.example.com/vouch' } },
    ]);
  });

  it('refuses bad URLs with the CLI rules, naming the field, and changes nothing', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    for (const url of ['ftp://example.com/x', 'not a url', 'https://user:pass@example.com/hook', '']) {
      const res = await call(owner, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toEqual({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringMatching(/^url /) , requestId: expect.stringMatching(/^req_/) });
    }
    for (const payload of [{}, { url: `https://example.com/${'x'.repeat(2050)}` }, { url: { href: 'https://example.com' } }]) {
      expect((await call(owner, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload })).statusCode, JSON.stringify(payload).slice(0, 40)).toBe(400);
    }
    expect((await call(owner, org.id, { method: 'GET', path: '/webhooks?mode=both' })).statusCode).toBe(400);
    expect((await ok(owner, org.id, { method: 'GET', path: '/webhooks' })).url).toBeNull();
    expect(await auditOf(org.id)).toEqual([]);
  });

  describe('on a server that refuses private addresses', () => {
    let strict: TestContext;
    beforeAll(async () => {
      strict = await buildTestContext({ config: { allowPrivateUrls: false } });
    });
    afterAll(() => strict?.close());

    it('refuses loopback and private targets as the CLI does', async () => {
      const { org, owner } = await portalOrg(strict.database.db);
      for (const url of ['http://127.0.0.1:9000/hook', 'http://10.1.2.3/hook', 'http://[::1]/hook', 'http://localhost:8080/hook']) {
        const res = await portal(strict.app, owner, { method: 'PUT', url: `/api/orgs/${org.id}/webhooks?mode=live`, payload: { url } });
        expect(res.statusCode, url).toBe(400);
        expect(res.json().message).toBe(
          'url resolves to a loopback or private network address, which is not allowed; for a receiver on this machine or a private network while developing, set VOUCH_ALLOW_PRIVATE_URLS=1 where Vouch runs (the server, which sends the events, as well as the CLI)',
        );
      }
    });
  });
});

describe('signing (standard, verifyme, both)', () => {
  it('signs the way the endpoint chose: x-verifyme-signature is the hex HMAC-SHA512 of the raw body keyed with the whole secret', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const developer = await member(org.id, 'developer');
    const set = await ok(developer, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: receiver.url, signing: 'verifyme' } });
    expect(set.signing).toBe('verifyme');
    const { secret } = await ok(developer, org.id, { method: 'POST', path: '/webhooks/secret/reveal?mode=test' });

    const send = async () => {
      const sent = await ok(developer, org.id, { method: 'POST', path: '/webhooks/test?mode=test' }, 201);
      return receiver.waitFor((r) => r.id === sent.webhookId);
    };
    const verifyme = await send();
    expect(verifyme.headers['x-verifyme-signature']).toMatch(/^[0-9a-f]{128}$/);
    expect(receiver.verifyVerifyme(verifyme, secret)).toBe(true);
    expect(verifyme.headers['webhook-signature']).toBeUndefined();
    expect(verifyme.headers['webhook-id']).toBe(verifyme.id);
    expect(receiver.verify(verifyme, secret)).toBe(false);
    // The key is the secret as pasted, not the bytes Standard Webhooks decodes from it.
    const decoded = createHmac('sha512', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(verifyme.rawBody).digest('hex');
    expect(verifyme.headers['x-verifyme-signature']).not.toBe(decoded);

    // A URL change alone keeps the choice.
    expect((await ok(developer, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: receiver.url } })).signing).toBe('verifyme');
    expect((await ok(developer, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: receiver.url, signing: 'both' } })).signing).toBe('both');
    const both = await send();
    expect(receiver.verify(both, secret)).toBe(true);
    expect(receiver.verifyVerifyme(both, secret)).toBe(true);

    // After a rotation the VerifyMe header carries the new secret's signature, the old one a header of its own.
    const rotated = await ok(developer, org.id, { method: 'POST', path: '/webhooks/secret/rotate?mode=test' });
    const overlap = await send();
    expect(receiver.verifyVerifyme(overlap, rotated.secret)).toBe(true);
    expect(receiver.verifyVerifyme(overlap, secret, 'x-verifyme-signature-previous')).toBe(true);
    expect(receiver.verify(overlap, secret) && receiver.verify(overlap, rotated.secret)).toBe(true);

    await ok(developer, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: receiver.url, signing: 'standard' } });
    const standard = await send();
    expect(receiver.verify(standard, rotated.secret)).toBe(true);
    expect(standard.headers['x-verifyme-signature']).toBeUndefined();

    const changes = (await auditOf(org.id)).filter((a) => a.action === 'webhook.signing_set');
    expect(changes).toEqual([
      { action: 'webhook.signing_set', actor_kind: 'member', target: 'test webhook', before: { signing: null }, after: { signing: 'verifyme' } },
      { action: 'webhook.signing_set', actor_kind: 'member', target: 'test webhook', before: { signing: 'verifyme' }, after: { signing: 'both' } },
      { action: 'webhook.signing_set', actor_kind: 'member', target: 'test webhook', before: { signing: 'both' }, after: { signing: 'standard' } },
    ]);
  });

  it('refuses a signing it does not know with a style A 400, changing nothing', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    await ok(owner, org.id, { method: 'PUT', path: '/webhooks?mode=live', payload: { url: 'https://hooks.example.com/vouch', signing: 'both' } });
    for (const signing of ['hmac', 'VERIFYME', '', 1, null]) {
      const res = await call(owner, org.id, { method: 'PUT', path: '/webhooks?mode=live', payload: { url: 'https://hooks.example.com/other', signing } });
      expect(res.statusCode, String(signing)).toBe(400);
      expect(res.json()).toEqual({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringContaining('signing') , requestId: expect.stringMatching(/^req_/) });
    }
    expect(await ok(owner, org.id, { method: 'GET', path: '/webhooks?mode=live' })).toMatchObject({ url: 'https://hooks.example.com/vouch', signing: 'both' });
    expect((await auditOf(org.id)).map((a) => a.action)).toEqual(['webhook.url_set', 'webhook.signing_set']);
  });
});

describe('the signing secret', () => {
  it('is revealed and rotated by developers; deliveries are signed with both secrets during the overlap', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const developer = await member(org.id, 'developer');
    const noUrl = await call(developer, org.id, { method: 'POST', path: '/webhooks/secret/reveal?mode=test' });
    expect(noUrl.statusCode).toBe(404);
    expect(noUrl.json().message).toMatch(/No test webhook URL is set/);

    const set = await ok(developer, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: receiver.url } });
    const { secret } = await ok(developer, org.id, { method: 'POST', path: '/webhooks/secret/reveal?mode=test' });
    expect(secret).toMatch(/^whsec_/);
    expect(set.secretHint).toBe(`whsec_…${secret.slice(-4)}`);

    const rotated = await ok(developer, org.id, { method: 'POST', path: '/webhooks/secret/rotate?mode=test' });
    expect(rotated).toEqual({ secret: expect.stringMatching(/^whsec_/), secretHint: `whsec_…${rotated.secret.slice(-4)}`, previousSecretExpiresAt: expect.any(String) });
    expect(rotated.secret).not.toBe(secret);
    const dayLeft = new Date(rotated.previousSecretExpiresAt).getTime() - Date.now();
    expect(dayLeft).toBeGreaterThan(23.9 * 3_600_000);
    expect(await ok(developer, org.id, { method: 'GET', path: '/webhooks?mode=test' })).toMatchObject({
      secretHint: rotated.secretHint,
      previousSecretExpiresAt: rotated.previousSecretExpiresAt,
    });

    const sent = await ok(developer, org.id, { method: 'POST', path: '/webhooks/test?mode=test' }, 201);
    const arrived = await receiver.waitFor((r) => r.id === sent.webhookId);
    expect(receiver.verify(arrived, rotated.secret)).toBe(true);
    expect(receiver.verify(arrived, secret)).toBe(true);

    // The live endpoint has none yet: nothing to rotate there.
    expect((await call(developer, org.id, { method: 'POST', path: '/webhooks/secret/rotate?mode=live' })).statusCode).toBe(404);

    const audit = await auditOf(org.id);
    expect(audit.map((a) => a.action)).toEqual(['webhook.url_set', 'webhook.secret_revealed', 'webhook.secret_rotated', 'webhook.test_sent']);
    expect(audit.at(-1)).toMatchObject({ actor_kind: 'member', target: 'test webhook', after: { webhookId: sent.webhookId } });
    expect(JSON.stringify(audit)).not.toContain(secret);
    expect(JSON.stringify(audit)).not.toContain(rotated.secret);
  });
});

describe('test events and the delivery log', () => {
  it('sends a signed webhook.test through the queue and shows it delivered, with its attempt and body', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const noUrl = await call(owner, org.id, { method: 'POST', path: '/webhooks/test?mode=test' });
    expect(noUrl.statusCode).toBe(404);

    await ok(owner, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: receiver.url } });
    const { secret } = await ok(owner, org.id, { method: 'POST', path: '/webhooks/secret/reveal?mode=test' });
    const sent = await ok(owner, org.id, { method: 'POST', path: '/webhooks/test?mode=test' }, 201);
    expect(sent).toEqual({ id: expect.any(Number), webhookId: expect.stringMatching(/^msg_/) });

    const arrived = await receiver.waitFor((r) => r.id === sent.webhookId);
    expect(receiver.verify(arrived, secret)).toBe(true);
    expect(arrived.body).toMatchObject({ type: 'webhook.test', data: { mode: 'test' } });

    const list = () => ok(owner, org.id, { method: 'GET', path: '/webhook-deliveries?mode=test' });
    await expect.poll(async () => (await list()).data[0]?.status, { timeout: 10_000 }).toBe('delivered');
    const page = await list();
    expect(page).toEqual({
      data: [
        {
          id: sent.id,
          webhookId: sent.webhookId,
          type: 'webhook.test',
          status: 'delivered',
          attemptCount: 1,
          lastStatusCode: 204,
          lastError: null,
          nextAttemptAt: null,
          createdAt: expect.any(String),
          deliveredAt: expect.any(String),
          sendable: true,
        },
      ],
      total: 1,
      totalCapped: false,
      limit: 25,
      offset: 0,
      retentionDays: 30,
    });

    const detail = await ok(owner, org.id, { method: 'GET', path: `/webhook-deliveries/${sent.id}?mode=test` });
    expect(detail).toMatchObject({ ...page.data[0], payload: JSON.parse(arrived.rawBody) });
    expect(detail.attempts).toEqual([{ attemptedAt: expect.any(String), statusCode: 204, durationMs: expect.any(Number), error: null, responseExcerpt: null }]);

    // The other mode's log is empty, and its id is not found there.
    expect((await ok(owner, org.id, { method: 'GET', path: '/webhook-deliveries?mode=live' })).data).toEqual([]);
    expect((await call(owner, org.id, { method: 'GET', path: `/webhook-deliveries/${sent.id}?mode=live` })).statusCode).toBe(404);
    expect((await call(owner, org.id, { method: 'POST', path: `/webhook-deliveries/${sent.id}/resend?mode=live` })).statusCode).toBe(404);
  });

  it("keeps the start of the receiver's answer and the error of each attempt", async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    let calls = 0;
    const answering = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls += 1;
        if (calls === 1) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`boom: ${'é'.repeat(600)}`);
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      });
    });
    await new Promise<void>((resolve) => answering.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(answering.address() as AddressInfo).port}/hooks`;
      await ok(owner, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url } });
      const sent = await ok(owner, org.id, { method: 'POST', path: '/webhooks/test?mode=test' }, 201);
      const detail = () => ok(owner, org.id, { method: 'GET', path: `/webhook-deliveries/${sent.id}` });
      // The first attempt fails, the retry (50 ms later on the test schedule) is delivered.
      await expect.poll(async () => (await detail()).status, { timeout: 10_000 }).toBe('delivered');
      const { attempts } = await detail();
      expect(attempts).toHaveLength(2);
      expect(attempts[0]).toMatchObject({ statusCode: 500, error: 'HTTP 500' });
      expect(attempts[0].responseExcerpt).toHaveLength(500);
      expect(attempts[0].responseExcerpt).toBe(`boom: ${'é'.repeat(494)}`);
      expect(attempts[1]).toMatchObject({ statusCode: 200, error: null, responseExcerpt: '{"received":true}' });
    } finally {
      await new Promise<void>((resolve) => answering.close(() => resolve()));
    }
  });

  it('pages through the log newest first, filtered by status, with totals per mode', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const ids = await seedDeliveries(org.id, 'live', [...Array(20).fill('delivered'), ...Array(10).fill('failed')]);
    const newest = [...ids].reverse();

    const first = await ok(owner, org.id, { method: 'GET', path: '/webhook-deliveries?mode=live&limit=10' });
    expect(first).toMatchObject({ total: 30, totalCapped: false, limit: 10, offset: 0 });
    expect(first.data.map((d: { id: number }) => d.id)).toEqual(newest.slice(0, 10));
    const last = await ok(owner, org.id, { method: 'GET', path: '/webhook-deliveries?mode=live&limit=10&offset=25' });
    expect(last.data.map((d: { id: number }) => d.id)).toEqual(newest.slice(25));

    const failed = await ok(owner, org.id, { method: 'GET', path: '/webhook-deliveries?mode=live&status=failed&limit=100' });
    expect(failed.total).toBe(10);
    expect(failed.data.map((d: { id: number }) => d.id)).toEqual(newest.slice(0, 10));
    expect(failed.data.every((d: { status: string; lastStatusCode: number }) => d.status === 'failed' && d.lastStatusCode === 500)).toBe(true);
    expect((await ok(owner, org.id, { method: 'GET', path: '/webhook-deliveries?mode=live&status=pending' })).total).toBe(0);
    expect((await ok(owner, org.id, { method: 'GET', path: '/webhook-deliveries' })).total).toBe(0);

    for (const query of ['limit=0', 'limit=101', 'offset=-1', 'offset=10001', 'status=lost', 'mode=prod', 'limit=ten']) {
      const res = await call(owner, org.id, { method: 'GET', path: `/webhook-deliveries?${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
    }
    for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999', String(Number.MAX_SAFE_INTEGER)]) {
      expect((await call(owner, org.id, { method: 'GET', path: `/webhook-deliveries/${id}?mode=live` })).statusCode, id).toBe(404);
    }
  });

  it('resends a delivery with the same webhook-id, keeping every attempt, and audits it', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    await ok(owner, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: receiver.url } });
    const sent = await ok(owner, org.id, { method: 'POST', path: '/webhooks/test?mode=test' }, 201);
    const detail = () => ok(owner, org.id, { method: 'GET', path: `/webhook-deliveries/${sent.id}?mode=test` });
    await expect.poll(async () => (await detail()).status, { timeout: 10_000 }).toBe('delivered');

    const resent = await ok(owner, org.id, { method: 'POST', path: `/webhook-deliveries/${sent.id}/resend?mode=test` });
    expect(resent).toMatchObject({ id: sent.id, webhookId: sent.webhookId, status: 'pending', deliveredAt: null });
    await receiver.waitForCount(2, 10_000, (r) => r.id === sent.webhookId);
    await expect.poll(async () => (await detail()).attempts.length, { timeout: 10_000 }).toBe(2);
    expect((await detail()).status).toBe('delivered');
    expect((await auditOf(org.id)).at(-1)).toMatchObject({ action: 'webhook.resent', target: sent.webhookId, before: { status: 'delivered' }, after: { type: 'webhook.test', status: 'pending' } });
  });
});

describe('roles and tenants', () => {
  it('lets a viewer read the endpoint and the log but change nothing', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    await ok(owner, org.id, { method: 'PUT', path: '/webhooks?mode=live', payload: { url: 'https://hooks.example.com/vouch' } });
    const [id] = await seedDeliveries(org.id, 'live', ['failed']);
    const viewer = await member(org.id, 'viewer');
    expect((await ok(viewer, org.id, { method: 'GET', path: '/webhooks?mode=live' })).url).toBe('https://hooks.example.com/vouch');
    expect((await ok(viewer, org.id, { method: 'GET', path: '/webhook-deliveries?mode=live' })).total).toBe(1);
    expect((await ok(viewer, org.id, { method: 'GET', path: `/webhook-deliveries/${id}?mode=live` })).id).toBe(id);
    const writes: Call[] = [
      { method: 'PUT', path: '/webhooks?mode=live', payload: { url: 'https://evil.example.com/' } },
      { method: 'PUT', path: '/webhooks?mode=live', payload: { url: 42 } },
      { method: 'PUT', path: '/webhooks?mode=live', payload: { url: 'https://hooks.example.com/vouch', signing: 'verifyme' } },
      { method: 'POST', path: '/webhooks/secret/reveal?mode=live' },
      { method: 'POST', path: '/webhooks/secret/rotate?mode=live' },
      { method: 'POST', path: '/webhooks/test?mode=live' },
      { method: 'POST', path: `/webhook-deliveries/${id}/resend?mode=live` },
    ];
    for (const write of writes) {
      const res = await call(viewer, org.id, write);
      expect(res.statusCode, write.path).toBe(403);
      expect(res.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    }
    expect(await ok(owner, org.id, { method: 'GET', path: '/webhooks?mode=live' })).toMatchObject({ url: 'https://hooks.example.com/vouch', signing: 'standard' });
    expect((await ok(owner, org.id, { method: 'GET', path: `/webhook-deliveries/${id}?mode=live` })).status).toBe('failed');
  });

  it("answers 404 for another organization's endpoint and deliveries, even under one's own organization", async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    await ok(owner, org.id, { method: 'PUT', path: '/webhooks?mode=test', payload: { url: 'https://hooks.example.com/a' } });
    const [id] = await seedDeliveries(org.id, 'test', ['delivered']);
    const other = await portalOrg(ctx.database.db);
    const everything: Call[] = [
      { method: 'GET', path: '/webhooks' },
      { method: 'PUT', path: '/webhooks', payload: { url: 'https://evil.example.com/' } },
      { method: 'PUT', path: '/webhooks', payload: { url: 'https://hooks.example.com/a', signing: 'verifyme' } },
      { method: 'POST', path: '/webhooks/secret/reveal' },
      { method: 'POST', path: '/webhooks/secret/rotate' },
      { method: 'POST', path: '/webhooks/test' },
      { method: 'GET', path: '/webhook-deliveries' },
      { method: 'GET', path: `/webhook-deliveries/${id}` },
      { method: 'POST', path: `/webhook-deliveries/${id}/resend` },
    ];
    for (const request of everything) {
      const foreign = await call(other.owner, org.id, request);
      expect(foreign.statusCode, `${request.method} ${request.path}`).toBe(404);
      expect(foreign.body).not.toContain('hooks.example.com');
      expect((await call(undefined, org.id, request)).statusCode).toBe(401);
    }
    // Its own organization's path with the other's delivery id.
    expect((await call(other.owner, other.org.id, { method: 'GET', path: `/webhook-deliveries/${id}` })).statusCode).toBe(404);
    expect((await call(other.owner, other.org.id, { method: 'POST', path: `/webhook-deliveries/${id}/resend` })).statusCode).toBe(404);
    expect(await ok(owner, org.id, { method: 'GET', path: '/webhooks' })).toMatchObject({ url: 'https://hooks.example.com/a', signing: 'standard' });
    expect(await auditOf(other.org.id)).toEqual([]);
  });
});
