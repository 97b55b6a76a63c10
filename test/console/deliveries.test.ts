import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expireUnansweredEmployments } from '../../src/employments/service.js';
import type { Mode } from '../../src/platform/db/schema.js';
import { LINK_TTL_MS } from '../../src/respondents/links.js';
import { recordCircuitOpened } from '../../src/webhooks/circuits.js';
import { enqueueEvent } from '../../src/webhooks/events.js';
import type { Worker } from '../../src/worker.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { client, EMPLOYMENT_BODY, GUARANTOR_BODY } from '../respondents/fixtures.js';

let ctx: TestContext;
let operator: PortalUser;
const receivers: WebhookReceiver[] = [];
let worker: Worker | undefined;

beforeAll(async () => {
  ctx = await buildTestContext();
  operator = await operatorUser(ctx.app, ctx.database.db);
});
// A test that fails midway must not leave its worker delivering with its settings into the next.
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});
afterAll(async () => {
  await worker?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await ctx.close();
});

const get = (url: string, user: PortalUser | undefined = operator) => portal(ctx.app, user, { method: 'GET', url });
const post = (url: string, payload?: object, user: PortalUser | undefined = operator) => portal(ctx.app, user, { method: 'POST', url, ...(payload ? { payload } : {}) });

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const event = (orgId: string, mode: Mode = 'test') => enqueueEvent(ctx.database.db, { orgId, mode, type: 'webhook.test', data: { message: 'queue check', mode } });

async function deliveryOf(webhookId: string) {
  return ctx.database.db.selectFrom('webhook_deliveries').selectAll().where('message_id', '=', webhookId).executeTakeFirstOrThrow();
}

/** What the queue holds for an organization and mode, counted straight from the table. */
async function counted(orgId: string, mode: Mode) {
  const rows = await ctx.database.db.selectFrom('webhook_deliveries').select(['status', 'attempts', 'created_at']).where('org_id', '=', orgId).where('mode', '=', mode).execute();
  const pending = rows.filter((row) => row.status === 'pending');
  return {
    waiting: pending.filter((row) => row.attempts === 0).length,
    retrying: pending.filter((row) => row.attempts > 0).length,
    failed: rows.filter((row) => row.status === 'failed').length,
    oldestPendingAt: pending.length ? new Date(Math.min(...pending.map((row) => row.created_at.getTime()))).toISOString() : null,
  };
}

async function auditRows(orgId: string, action: string) {
  return ctx.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', orgId).where('action', '=', action).orderBy('id').execute();
}

describe('who may use the deliveries console', () => {
  it('answers 401 without a session and 403 to customers, owners included, on every route', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const id = await event(org.id);
    const delivery = await deliveryOf(id);
    const routes: [string, string, object?][] = [
      ['GET', '/api/console/deliveries/backlog'],
      ['GET', '/api/console/deliveries/failing-endpoints'],
      ['GET', '/api/console/deliveries'],
      ['POST', `/api/console/deliveries/${delivery.id}/resend`],
      ['POST', '/api/console/deliveries/resend-failed', { orgId: org.id, mode: 'test' }],
      ['GET', '/api/console/invitations'],
      ['GET', '/api/console/invitations/counts'],
      ['POST', '/api/console/invitations/guarantor/1/resend'],
    ];
    for (const [method, url, payload] of routes) {
      const anonymous = await portal(ctx.app, undefined, { method: method as 'GET', url, ...(payload ? { payload } : {}) });
      expect(anonymous.statusCode, `${method} ${url}`).toBe(401);
      const customer = await portal(ctx.app, owner, { method: method as 'GET', url, ...(payload ? { payload } : {}) });
      expect(customer.statusCode, `${method} ${url}`).toBe(403);
      expect(customer.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    }
    expect((await deliveryOf(id)).attempts).toBe(0);
    expect(await auditRows(org.id, 'webhook.resent')).toEqual([]);
  });

  it('refuses bad filters with 400 and unknown deliveries with 404', async () => {
    for (const url of ['/api/console/deliveries?orgId=nope', '/api/console/deliveries?status=delivered', '/api/console/deliveries/backlog?mode=prod', '/api/console/invitations?status=late', '/api/console/invitations?limit=0']) {
      expect((await get(url)).statusCode, url).toBe(400);
    }
    for (const id of ['abc', '0', '99999999', '1.5']) expect((await post(`/api/console/deliveries/${id}/resend`)).statusCode, id).toBe(404);
    expect((await post('/api/console/deliveries/resend-failed', { orgId: '00000000-0000-4000-8000-000000000000', mode: 'test' })).statusCode).toBe(404);
    expect((await post('/api/console/deliveries/resend-failed', { orgId: 'x', mode: 'both' })).statusCode).toBe(400);
    expect((await post('/api/console/invitations/guarantor/abc/resend')).statusCode).toBe(404);
    expect((await post('/api/console/invitations/address/1/resend')).statusCode).toBe(400);
  });
});

describe('the webhook backlog and failing endpoints', () => {
  it('counts what waits, retries and failed per organization from the real queue, and shows an open circuit with its last error and probe', { timeout: 60_000 }, async () => {
    const failing = await receiver();
    failing.failNext(1000, 503);
    const a = await ctx.org({ name: 'Akara Loans' });
    await connectReceiver(ctx.database, failing, a.id, 'test');

    // Four failed attempts (the fast schedule's first try and three retries) fail the event for
    // good and open the breaker (threshold 4); the events after it are held, not attempted.
    worker = await startTestWorker(ctx.database, { breakerThreshold: 4, breakerCooldownMs: 60_000 });
    const first = await event(a.id);
    await until('the first event to fail for good', async () => (await deliveryOf(first)).status === 'failed');
    const circuit = await until('the circuit row', () => ctx.database.db.selectFrom('webhook_circuits').selectAll().where('url', '=', failing.url).executeTakeFirst());
    expect(circuit).toMatchObject({ failures: 4, last_status_code: 503 });
    expect(circuit.probe_at.getTime() - circuit.opened_at.getTime()).toBeGreaterThan(50_000);
    const held = [await event(a.id), await event(a.id)];
    await until('the held events to move to the probe time', async () => {
      const rows = await Promise.all(held.map(deliveryOf));
      return rows.every((row) => row.attempts === 0 && row.next_attempt_at.getTime() > Date.now() + 30_000);
    });
    expect(failing.requests).toHaveLength(4);
    await worker.stop();

    // A second worker (as after a restart) keeps holding the failing URL from the circuit row,
    // and retries another organization's failed attempt only in ten minutes.
    const flaky = await receiver();
    flaky.failNext(1, 500);
    const b = await ctx.org({ name: 'Bole Finance' });
    await connectReceiver(ctx.database, flaky, b.id, 'live');
    worker = await startTestWorker(ctx.database, { breakerThreshold: 4, breakerCooldownMs: 60_000, retrySchedule: [600_000, 600_000] });
    const retried = await event(b.id, 'live');
    const later = await event(a.id);
    await until('the first attempt of the other organization', async () => (await deliveryOf(retried)).last_status_code === 500);
    await until('the new event of the failing URL to be held', async () => {
      const row = await deliveryOf(later);
      return row.attempts === 0 && row.next_attempt_at.getTime() > Date.now() + 30_000;
    });
    expect(failing.requests).toHaveLength(4);

    const backlog = await get('/api/console/deliveries/backlog');
    expect(backlog.statusCode).toBe(200);
    const rows = backlog.json().data as { orgId: string; mode: string }[];
    const rowA = rows.find((row) => row.orgId === a.id && row.mode === 'test');
    const rowB = rows.find((row) => row.orgId === b.id && row.mode === 'live');
    expect(await counted(a.id, 'test')).toEqual({ waiting: 3, retrying: 0, failed: 1, oldestPendingAt: (await deliveryOf(held[0]!)).created_at.toISOString() });
    expect(rowA).toEqual({
      orgId: a.id,
      orgName: 'Akara Loans',
      mode: 'test',
      ...(await counted(a.id, 'test')),
      lastFailedAt: expect.any(String),
      endpoint: new URL(failing.url).origin,
      circuitOpen: true,
    });
    expect(rowB).toMatchObject({ orgName: 'Bole Finance', ...(await counted(b.id, 'live')), waiting: 0, retrying: 1, failed: 0, circuitOpen: false });
    // The longest waiting comes first.
    expect(rows.findIndex((row) => row === rowA)).toBeLessThan(rows.findIndex((row) => row === rowB));
    expect((await get(`/api/console/deliveries/backlog?orgId=${b.id}`)).json().data).toEqual([rowB]);
    expect((await get(`/api/console/deliveries/backlog?orgId=${a.id}&mode=live`)).json().data).toEqual([]);

    const endpoints = (await get('/api/console/deliveries/failing-endpoints')).json().data;
    expect(endpoints).toEqual([
      {
        orgId: a.id,
        orgName: 'Akara Loans',
        mode: 'test',
        endpoint: new URL(failing.url).origin,
        openedAt: circuit.opened_at.toISOString(),
        probeAt: circuit.probe_at.toISOString(),
        failures: 4,
        lastStatusCode: 503,
        lastError: expect.stringContaining('503'),
        pending: 3,
      },
    ]);

    const failed = (await get(`/api/console/deliveries?status=failed&orgId=${a.id}`)).json();
    expect(failed).toMatchObject({ total: 1, data: [{ webhookId: first, orgName: 'Akara Loans', status: 'failed', attemptCount: 4, lastStatusCode: 503 }] });
    expect((await get('/api/console/deliveries?status=pending&mode=live')).json().data.map((d: { webhookId: string }) => d.webhookId)).toContain(retried);

    // Resending every failed delivery of the endpoint: one audit row naming the operator. The
    // worker stops first, so what the resend wrote is read before any worker attempts it again.
    await worker.stop();
    worker = undefined;
    const all = await post('/api/console/deliveries/resend-failed', { orgId: a.id, mode: 'test' });
    expect(all.json()).toEqual({ resent: 1 });
    expect(await deliveryOf(first)).toMatchObject({ status: 'pending', attempts: 0 });
    const [audit] = await auditRows(a.id, 'webhook.resent_failed');
    expect(audit).toMatchObject({ actor_kind: 'operator', actor_id: operator.personId, target: 'test webhook', before: { failed: 1 }, after: { resent: 1 } });
    expect((await post('/api/console/deliveries/resend-failed', { orgId: a.id, mode: 'test' })).json()).toEqual({ resent: 0 });
    expect(await auditRows(a.id, 'webhook.resent_failed')).toHaveLength(1);
  });

  it('resends one failed delivery as the customer can: it arrives with the same webhook-id, audited with the operator', { timeout: 60_000 }, async () => {
    const r = await receiver();
    r.failNext(4, 500);
    const { org, owner } = await portalOrg(ctx.database.db);
    await connectReceiver(ctx.database, r, org.id, 'live');
    worker = await startTestWorker(ctx.database);
    const id = await event(org.id, 'live');
    await until('the event to fail for good', async () => (await deliveryOf(id)).status === 'failed');
    const delivery = await deliveryOf(id);

    const resent = await post(`/api/console/deliveries/${delivery.id}/resend`);
    expect(resent.statusCode).toBe(200);
    expect(resent.json()).toMatchObject({ id: Number(delivery.id), webhookId: id, orgId: org.id, mode: 'live', status: 'pending' });
    const arrived = await r.waitFor((request) => request.id === id && request.answeredWith === 204);
    expect(arrived.verified).toBe(true);
    await until('delivered', async () => (await deliveryOf(id)).status === 'delivered');
    const audit = await auditRows(org.id, 'webhook.resent');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_kind: 'operator', actor_id: operator.personId, target: id, before: { status: 'failed' }, after: { type: 'webhook.test', mode: 'live' } });
    // The customer sees the same delivery, five attempts, in the portal's log.
    const log = await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries/${delivery.id}?mode=live` });
    expect(log.json()).toMatchObject({ status: 'delivered', attemptCount: 5 });
    await worker.stop();
    worker = undefined;
  });

  it('shows a last error with the body’s people’s data and any identity number, phone or email in it masked', async () => {
    const r = await receiver();
    const { org } = await portalOrg(ctx.database.db);
    await connectReceiver(ctx.database, r, org.id, 'test');
    const bvn = '22298765432';
    const phone = '08061234567';
    const id = await enqueueEvent(ctx.database.db, { orgId: org.id, mode: 'test', type: 'webhook.test', data: { bvn, phone, firstName: 'Adaeze' } });
    // A receiver that redirected to a link repeating the body (no worker runs: the row is set as the worker sets it).
    const error = `redirect to https://elsewhere.example/return?b=${bvn}&p=${phone}&by=ada.obi@example.com not followed`;
    await ctx.database.db.updateTable('webhook_deliveries').set({ status: 'failed', last_error: error, last_status_code: 302 }).where('message_id', '=', id).execute();
    await recordCircuitOpened(ctx.database.db, { url: r.url, probeAt: new Date(Date.now() + 60_000), failures: 4, lastStatusCode: 302, lastError: error });

    const listed = (await get(`/api/console/deliveries?status=failed&orgId=${org.id}`)).json().data;
    const endpoints = (await get('/api/console/deliveries/failing-endpoints')).json().data.filter((row: { orgId: string }) => row.orgId === org.id);
    expect(listed).toHaveLength(1);
    expect(endpoints).toHaveLength(1);
    for (const shown of [listed[0].lastError, endpoints[0].lastError] as string[]) {
      expect(shown).toMatch(/^redirect to https:\/\/elsewhere\.example\/return\?b=.+ not followed$/);
      for (const raw of [bvn, phone, 'ada.obi']) expect(shown).not.toContain(raw);
      expect(shown).toContain('@example.com');
    }
    // The list's own masking of the body's values, as the customer's log shows them.
    expect(listed[0].lastError).toContain(`b=${bvn.slice(0, 3)}`);
  });
});

/** Moves a verification and its link `days` into the past, as if made then. */
async function age(table: 'guarantor_verifications' | 'employment_verifications', id: number, days: number) {
  const createdAt = new Date(Date.now() - days * 24 * 60 * 60 * 1000);
  await ctx.database.db.updateTable(table).set({ created_at: createdAt } as never).where('id', '=', id).execute();
  await ctx.database.db
    .updateTable('respondent_links')
    .set({ expires_at: new Date(createdAt.getTime() + LINK_TTL_MS), created_at: createdAt } as never)
    .where('verification_id', '=', id)
    .where('kind', '=', table === 'guarantor_verifications' ? 'guarantor' : 'employer')
    .execute();
}

describe('respondent invitations', () => {
  it('lists pending and expired invitations per organization with masked addresses, and cannot resend without a mail server', async () => {
    const http = client(ctx.app);
    const org = await ctx.org({ riskLevel: 'LOW', name: 'Invites Ltd' });
    const other = await ctx.org({ riskLevel: 'LOW', name: 'Elsewhere Ltd' });
    const waiting = (await http.post('/v1/verifications/guarantors', org.testSecret, { ...GUARANTOR_BODY, reference: 'G-WAIT' })).json().data;
    const lapsed = (await http.post('/v1/verifications/employments', org.testSecret, { ...EMPLOYMENT_BODY, reference: 'E-LAPSED' })).json().data;
    const swept = (await http.post('/v1/verifications/employments', org.testSecret, { ...EMPLOYMENT_BODY, reference: 'E-SWEPT' })).json().data;
    const cancelled = (await http.post('/v1/verifications/guarantors', org.testSecret, { ...GUARANTOR_BODY, reference: 'G-CANCEL' })).json().data;
    const elsewhere = (await http.post('/v1/verifications/guarantors', other.testSecret, { ...GUARANTOR_BODY, reference: 'G-OTHER' })).json().data;
    expect((await http.del(`/v1/verifications/guarantors/${cancelled.id}`, org.testSecret)).statusCode).toBe(200);
    await age('employment_verifications', lapsed.id, 8);
    await age('employment_verifications', swept.id, 9);
    // The sweep ends both as NO_RESPONSE; before it runs, an expired one is listed all the same.
    const before = (await get(`/api/console/invitations?status=expired&orgId=${org.id}`)).json();
    expect(before.data.map((i: { reference: string }) => i.reference)).toEqual(['E-LAPSED', 'E-SWEPT']);
    expect(await expireUnansweredEmployments(ctx.database.db, new Date())).toBe(2);

    const pending = await get(`/api/console/invitations?orgId=${org.id}`);
    expect(pending.statusCode).toBe(200);
    expect(pending.json()).toMatchObject({ total: 1, mailConfigured: false });
    expect(pending.json().data).toEqual([
      {
        kind: 'guarantor',
        verificationId: waiting.id,
        reference: 'G-WAIT',
        orgId: org.id,
        orgName: 'Invites Ltd',
        mode: 'test',
        status: 'pending',
        recipient: 'b•••@example.com',
        createdAt: expect.any(String),
        sentAt: null,
        sendError: null,
        expiresAt: expect.any(String),
      },
    ]);
    const expired = (await get(`/api/console/invitations?status=expired&orgId=${org.id}`)).json();
    expect(expired.data.map((i: { reference: string; kind: string; recipient: string }) => [i.reference, i.kind, i.recipient])).toEqual([
      ['E-LAPSED', 'employment', 'h•••@kolanut.example.com'],
      ['E-SWEPT', 'employment', 'h•••@kolanut.example.com'],
    ]);
    const body = JSON.stringify([pending.json(), expired]);
    expect(body).not.toContain('babatunde@');
    expect(body).not.toContain('hr@kolanut');
    expect(body).not.toContain(GUARANTOR_BODY.phone);

    const counts = (await get('/api/console/invitations/counts')).json();
    expect(counts.data).toEqual(
      expect.arrayContaining([
        { orgId: org.id, orgName: 'Invites Ltd', mode: 'test', pending: 1, expired: 2 },
        { orgId: other.id, orgName: 'Elsewhere Ltd', mode: 'test', pending: 1, expired: 0 },
      ]),
    );
    expect(counts).toMatchObject({ expiredWindowDays: 30, mailConfigured: false });
    expect((await get(`/api/console/invitations?orgId=${other.id}`)).json().data.map((i: { verificationId: number }) => i.verificationId)).toEqual([elsewhere.id]);

    const noMail = await post(`/api/console/invitations/guarantor/${waiting.id}/resend`);
    expect(noMail.statusCode).toBe(409);
    expect(noMail.json().message).toMatch(/SMTP_URL/);
    expect((await post(`/api/console/invitations/employment/${lapsed.id}/resend`)).statusCode).toBe(409);
    expect((await post(`/api/console/invitations/guarantor/${cancelled.id}/resend`)).statusCode).toBe(404);
    expect(await auditRows(org.id, 'invitation.resent')).toEqual([]);
  });

  describe('with a mail server', () => {
    let smtp: { url: string; received: { to: string[] }[]; close(): Promise<void> };
    let mailing: TestContext;
    let ops: PortalUser;

    beforeAll(async () => {
      const received: { to: string[] }[] = [];
      const server = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        onData(stream, session, callback) {
          stream.on('data', () => {});
          stream.on('end', () => {
            received.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address) });
            callback();
          });
        },
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.server.address() as AddressInfo;
      smtp = { url: `smtp://127.0.0.1:${port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
      mailing = await buildTestContext({ config: { smtpUrl: smtp.url, mailFrom: 'Vouch <no-reply@vouch.test>' } });
      ops = await operatorUser(mailing.app, mailing.database.db);
    });
    afterAll(async () => {
      await mailing?.close();
      await smtp?.close();
    });

    it('sends a pending invitation again with the same link, audited with the operator', async () => {
      const org = await mailing.org({ riskLevel: 'LOW' });
      const record = (await client(mailing.app).post('/v1/verifications/guarantors', org.liveSecret, GUARANTOR_BODY)).json().data;
      await until('the first mail', async () => smtp.received.length === 1);
      const resend = await portal(mailing.app, ops, { method: 'POST', url: `/api/console/invitations/guarantor/${record.id}/resend` });
      expect(resend.statusCode).toBe(200);
      expect(resend.json()).toEqual({ sent: true, error: null });
      expect(smtp.received.map((m) => m.to)).toEqual([['babatunde@example.com'], ['babatunde@example.com']]);
      const listed = (await portal(mailing.app, ops, { method: 'GET', url: `/api/console/invitations?orgId=${org.id}` })).json();
      expect(listed).toMatchObject({ mailConfigured: true, data: [{ verificationId: record.id, sentAt: expect.any(String) }] });
      const audit = await mailing.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', '=', 'invitation.resent').execute();
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actor_kind: 'operator', actor_id: ops.personId, target: `guarantor ${record.id} (${record.reference})`, after: { sent: true, to: 'b•••@example.com', mode: 'live' } });
    });

    it('never mails a test-mode invitation: 409, nothing sent, nothing audited', async () => {
      const org = await mailing.org({ riskLevel: 'LOW' });
      const before = smtp.received.length;
      const record = (await client(mailing.app).post('/v1/verifications/guarantors', org.testSecret, GUARANTOR_BODY)).json().data;
      const resend = await portal(mailing.app, ops, { method: 'POST', url: `/api/console/invitations/guarantor/${record.id}/resend` });
      expect(resend.statusCode).toBe(409);
      expect(resend.json().message).toMatch(/sandbox outbox/);
      expect(smtp.received.length).toBe(before);
      const audit = await mailing.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', '=', 'invitation.resent').execute();
      expect(audit).toEqual([]);
    });
  });
});
