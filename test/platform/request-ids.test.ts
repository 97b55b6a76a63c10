import http from 'node:http';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedOrganization } from '../../src/accounts/service.js';
import { loadConfig } from '../../src/config.js';
import { addSource, removeSource } from '../../src/identities/upstreams/store.js';
import { logDestination } from '../../src/platform/logging.js';
import { childTraceparent, requestIdFor, storedTrace, traceFor } from '../../src/platform/request-context.js';
import type { Worker } from '../../src/worker.js';
import { ADDRESS_BODY } from '../agents/fixtures.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { TEST_ENCRYPTION_KEY } from '../helpers/database.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Every answer carries X-Request-Id, every error body its `requestId` (each style), the log its
 * `requestId`; a W3C traceparent goes on to upstream providers and to the webhooks a request
 * causes (docs/tracing.md). Over real sockets.
 */

/** The applicant fields an account at risk level LOW must send with a lookup. */
const APPLICANT = JSON.stringify({ firstname: 'Adaeze', lastname: 'Okonkwo' });
const GENERATED = /^req_[0-9a-f]{24}$/;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

let t: TestContext;
let base: string;
let org: CreatedOrganization;

beforeAll(async () => {
  t = await buildTestContext({ upstreams: { reloadIntervalMs: 60_000, healthWriteIntervalMs: 0 } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  org = await t.org({ riskLevel: 'LOW' });
});
afterAll(async () => {
  await t?.close();
});

const call = (path: string, init: RequestInit & { secret?: string } = {}) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { ...(init.secret ? bearer(init.secret) : {}), ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string> | undefined) },
  });

describe('request ids', () => {
  it('answers every request with a new id, different each time, and no id in a success body', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const response = await call('/health');
      const id = response.headers.get('x-request-id')!;
      expect(id).toMatch(GENERATED);
      ids.add(id);
      expect(await response.json()).toEqual({ status: 'ok' });
    }
    expect(ids.size).toBe(20);
    const listed = await call('/v1/verifications/addresses', { secret: org.testSecret });
    expect(listed.status).toBe(200);
    expect(await listed.json()).not.toHaveProperty('requestId');
  });

  it("keeps a caller's safe id and replaces an unsafe one", async () => {
    const kept = await call('/health', { headers: { 'x-request-id': 'lender-7f3a:retry.2_A-b' } });
    expect(kept.headers.get('x-request-id')).toBe('lender-7f3a:retry.2_A-b');
    for (const unsafe of ['has space', '<script>', 'x'.repeat(101), '-leading-dash', 'é', '']) {
      const response = await call('/health', { headers: { 'x-request-id': unsafe } });
      expect(response.headers.get('x-request-id'), unsafe).toMatch(GENERATED);
    }
  });

  it('puts the id in every error body, in the style of its family, equal to the header', async () => {
    const cases: [string, RequestInit & { secret?: string }, number, Record<string, unknown>][] = [
      // Style A: a workflow endpoint's validation error and unknown id, and no credentials.
      ['/v1/verifications/addresses', { method: 'POST', secret: org.testSecret, body: JSON.stringify({ ...ADDRESS_BODY, street: '' }) }, 400, { status: 'error', code: 'VALIDATION_ERROR' }],
      ['/v1/verifications/addresses/999999', { secret: org.testSecret }, 404, { status: 'error', code: 'NOT_FOUND_ERROR' }],
      ['/v1/verifications/addresses', {}, 401, { status: 'error', code: 'ACCESS_DENIED' }],
      // Style B: an identity lookup without credentials; style C: a number the sandbox does not hold.
      ['/v1/verifications/identities/bvn/22345678901', { method: 'POST', body: '{}' }, 401, { statusCode: 401, error: 'Unauthorized' }],
      ['/v1/verifications/identities/nin/99999999999', { method: 'POST', secret: org.testSecret, body: APPLICANT }, 404, { code: 'NOT_FOUND_ERROR' }],
      // The router's own: an unknown route, and a path that is not valid percent-encoding.
      ['/v1/no-such-thing', {}, 404, { status: 'error', code: 'NOT_FOUND_ERROR' }],
      ['/v1/verifications/addresses/%E0%A4%A', { secret: org.testSecret }, 400, { status: 'error', code: 'BAD_REQUEST' }],
    ];
    for (const [path, init, status, shape] of cases) {
      const response = await call(path, init);
      const body = (await response.json()) as Record<string, unknown>;
      expect(response.status, `${path}: ${JSON.stringify(body)}`).toBe(status);
      expect(body, path).toMatchObject(shape);
      expect(typeof body.requestId === "string" && GENERATED.test(body.requestId), `${path}: ${JSON.stringify(body)}`).toBe(true);
      expect(body.requestId, path).toBe(response.headers.get('x-request-id'));
    }
    const own = await call('/v1/verifications/addresses/999999', { secret: org.testSecret, headers: { 'x-request-id': 'mine-1' } });
    expect(await own.json()).toMatchObject({ code: 'NOT_FOUND_ERROR', requestId: 'mine-1' });
  });

  it('gives an id to what the HTTP parser refuses before any route', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(new URL(base).port ? Number(new URL(base).port) : 80, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.write('GET /v1/verifications/addresses HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    });
    const header = /x-request-id: (\S+)/i.exec(raw)?.[1];
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
    expect(header).toMatch(GENERATED);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 'error', code: 'BAD_REQUEST', requestId: header });
  });

  it("gives a replayed error answer the replaying request's id", async () => {
    const send = () => call('/v1/verifications/addresses', { method: 'POST', secret: org.testSecret, headers: { 'idempotency-key': 'req-id-replay-1' }, body: JSON.stringify({ ...ADDRESS_BODY, street: '' }) });
    const first = await send();
    const again = await send();
    expect([first.status, again.status]).toEqual([400, 400]);
    const [a, b] = [(await first.json()) as { requestId: string; message: string }, (await again.json()) as { requestId: string; message: string }];
    expect(b.message).toBe(a.message);
    expect(a.requestId).toBe(first.headers.get('x-request-id'));
    expect(b.requestId).toBe(again.headers.get('x-request-id'));
    expect(b.requestId).not.toBe(a.requestId);
  });

  it('names the request in its log lines', async () => {
    t.logs.length = 0;
    const response = await call('/v1/verifications/addresses/424242', { secret: org.testSecret, headers: { 'x-request-id': 'log-me-1' } });
    expect(response.status).toBe(404);
    const lines = t.logs.map((line) => JSON.parse(line) as { requestId?: string; msg: string });
    const mine = lines.filter((line) => line.requestId === 'log-me-1');
    expect(mine.map((line) => line.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
  });
});

describe('W3C trace context', () => {
  it('reads a valid traceparent and refuses invalid ones', () => {
    expect(traceFor(TRACEPARENT)).toMatchObject({ traceId: TRACE_ID, parentSpanId: CALLER_SPAN, flags: '01' });
    expect(traceFor(TRACEPARENT).spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(traceFor(TRACEPARENT).spanId).not.toBe(CALLER_SPAN);
    // A later version is read as version 00 allows, extra fields and all.
    expect(traceFor(`01-${TRACE_ID}-${CALLER_SPAN}-00-extra`)).toMatchObject({ traceId: TRACE_ID, flags: '00' });
    for (const bad of [
      `ff-${TRACE_ID}-${CALLER_SPAN}-01`,
      `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`,
      `00-${TRACE_ID}-${'0'.repeat(16)}-01`,
      `00-${TRACE_ID.toUpperCase()}-${CALLER_SPAN}-01`,
      `00-${TRACE_ID}-${CALLER_SPAN}-01-extra`,
      'garbage',
    ]) {
      const trace = traceFor(bad);
      expect(trace.traceId, bad).not.toBe(TRACE_ID);
      expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(trace.parentSpanId).toBeUndefined();
    }
    const child = childTraceparent({ traceId: TRACE_ID, flags: '01' });
    expect(storedTrace(child)).toEqual({ traceId: TRACE_ID, flags: '01' });
    expect(requestIdFor(['a', 'b'])).toMatch(GENERATED);
  });

  it('sends the trace and the request id on to an upstream provider', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const provider = http.createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"down"}');
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const { port } = provider.address() as net.AddressInfo;
    try {
      await addSource(t.database.db, TEST_ENCRYPTION_KEY, { name: 'traced', kind: 'verifyme', url: `http://127.0.0.1:${port}`, secret: 'sk_live_upstreamsecret000000', timeoutMs: 5_000 });
      await t.app.upstreamRouter!.catchUp();
      const response = await call('/v1/verifications/identities/bvn/22345678901', { method: 'POST', secret: org.liveSecret, body: APPLICANT, headers: { traceparent: TRACEPARENT, 'x-request-id': 'upstream-call-1' } });
      await response.arrayBuffer();
      expect(seen.length).toBeGreaterThan(0);
      for (const headers of seen) {
        const sent = storedTrace(headers.traceparent as string);
        expect(sent, String(headers.traceparent)).toEqual({ traceId: TRACE_ID, flags: '01' });
        expect(headers.traceparent).not.toContain(CALLER_SPAN);
        expect(headers['x-request-id']).toBe('upstream-call-1');
      }
    } finally {
      await removeSource(t.database.db, 'traced');
      await t.app.upstreamRouter!.catchUp();
      await new Promise<void>((resolve) => provider.close(() => resolve()));
    }
  });

  describe('webhooks', () => {
    let receiver: WebhookReceiver;
    let worker: Worker;
    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      worker = await startTestWorker(t.database);
    });
    afterAll(async () => {
      await worker?.stop();
      await receiver?.close();
    });

    it('carry the trace of the request that caused them, and its id', async () => {
      const hooked = await t.org({ riskLevel: 'LOW' });
      await connectReceiver(t.database, receiver, hooked.id, 'test');
      const created = await call('/v1/verifications/addresses', { method: 'POST', secret: hooked.testSecret, body: JSON.stringify(ADDRESS_BODY) });
      expect(created.status).toBe(201);
      const { data } = (await created.json()) as { data: { id: number } };
      const cancelled = await call(`/v1/verifications/addresses/${data.id}`, { method: 'DELETE', secret: hooked.testSecret, headers: { traceparent: TRACEPARENT } });
      expect(cancelled.status).toBe(200);
      const requestId = cancelled.headers.get('x-request-id');
      const hook = await receiver.waitFor((request) => request.body?.type === 'address.cancelled');
      expect(storedTrace(hook.headers.traceparent as string)).toEqual({ traceId: TRACE_ID, flags: '01' });
      expect(hook.headers.traceparent).not.toContain(CALLER_SPAN);
      expect(hook.headers['x-vouch-request-id']).toBe(requestId);
    });
  });
});

describe('log lines people read', () => {
  it('logs health checks and metrics scrapes at debug, and everything else (their errors too) at info', async () => {
    t.logs.length = 0;
    for (const path of ['/health', '/ready']) expect((await call(path)).status).toBe(200);
    const api = await call('/v1/verifications/addresses', { secret: org.testSecret });
    expect(api.status).toBe(200);
    const refused = await call('/metrics');
    expect(refused.status).toBeGreaterThanOrEqual(400);
    const lines = t.logs.map((line) => JSON.parse(line) as { level: number; msg: string; req?: { url: string }; requestId?: string });
    const urls = (id: string | null) => lines.filter((line) => line.requestId === id).map((line) => line.msg);
    const byUrl = (url: string) => lines.filter((line) => line.req?.url === url);
    expect(byUrl('/health')).toEqual([]);
    expect(byUrl('/ready')).toEqual([]);
    expect(byUrl('/v1/verifications/addresses')).toHaveLength(1);
    expect(urls(api.headers.get('x-request-id'))).toEqual(['incoming request', 'request completed']);
    // A scrape refused (no token) is not routine: its outcome is logged at info (its arrival,
    // before the outcome was known, at debug).
    expect(urls(refused.headers.get('x-request-id'))).toEqual(['request completed']);
  });

  it('prints one readable line per entry with LOG_FORMAT=pretty, and JSON lines otherwise', async () => {
    const chunks: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
    const pretty = pino({ level: 'info' }, logDestination('pretty', sink));
    pretty.info({ requestId: 'req_0123456789abcdef01234567' }, 'incoming request');
    await expect.poll(() => chunks.join('')).toMatch(/INFO.*incoming request.*req_0123456789abcdef01234567/);
    expect(chunks.join('')).not.toMatch(/^\{/);
    expect(logDestination('json', sink)).toBe(sink);
    // auto: pretty only on a terminal.
    expect(logDestination('auto', sink)).toBe(sink);
    expect(logDestination('auto', Object.assign(new PassThrough(), { isTTY: true }))).not.toBe(sink);
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT.*json, pretty or auto/);
    expect(loadConfig({}).logFormat).toBe('auto');
  });
});
