import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/**
 * Every request's id and trace (docs/tracing.md): the id answers in `X-Request-Id` and in every
 * error body, and names the request in the log; the W3C trace context (`traceparent`) goes on to
 * the upstream providers it calls and the webhooks it causes.
 */

/**
 * A caller's own `X-Request-Id` is kept when it is this: letters, digits and `. _ : -`, at most
 * 100 characters, starting with a letter or digit. Anything else (a newline, markup, a long
 * value) is replaced, so the id can go into logs, headers and bodies as it is.
 */
const SAFE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

/** A new id: `req_` and 96 random bits, unique across processes without coordination. */
export function newRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

/** The id a request goes by: the caller's when it is safe to repeat, else a new one. */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : newRequestId();
}

export interface TraceContext {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** This request's span: 16 lowercase hex digits, not all zero. */
  spanId: string;
  /** The caller's span, when a valid `traceparent` came in. */
  parentSpanId?: string;
  /** Trace flags (bit 0: sampled), two hex digits. */
  flags: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZEROS = /^0+$/;

function randomHex(bytes: number): string {
  for (;;) {
    const hex = randomBytes(bytes).toString('hex');
    if (!ZEROS.test(hex)) return hex;
  }
}

/**
 * A request's trace: its caller's trace (W3C Trace Context, version 00, or a later version read
 * as 00 allows) with a new span of its own, or a new trace when the header is absent or invalid.
 */
export function traceFor(header: string | string[] | undefined): TraceContext {
  const match = typeof header === 'string' ? TRACEPARENT.exec(header.trim()) : null;
  if (match) {
    const [, version, traceId, parentSpanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
    const valid = version !== 'ff' && !(version === '00' && rest !== undefined) && !ZEROS.test(traceId) && !ZEROS.test(parentSpanId);
    if (valid) return { traceId, spanId: randomHex(8), parentSpanId, flags };
  }
  return { traceId: randomHex(16), spanId: randomHex(8), flags: '01' };
}

/** A trace's span as a W3C `traceparent` header (version 00). */
export function traceparentOf(trace: Pick<TraceContext, 'traceId' | 'spanId' | 'flags'>): string {
  return `00-${trace.traceId}-${trace.spanId}-${trace.flags}`;
}

/** The `traceparent` of a call made within `trace`: the same trace, a new span (the call's). */
export function childTraceparent(trace: Pick<TraceContext, 'traceId' | 'flags'>): string {
  return traceparentOf({ ...trace, spanId: randomHex(8) });
}

/** The parts of a stored `traceparent` a later call continues, or undefined if it is not one. */
export function storedTrace(traceparent: string | null | undefined): Pick<TraceContext, 'traceId' | 'flags'> | undefined {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  return match ? { traceId: match[2]!, flags: match[4]! } : undefined;
}

export interface RequestContext {
  requestId: string;
  trace: TraceContext;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** The request this code runs for, if it runs for one (not a background task's own work). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}

/** Runs `work` as if for a request (tests, and background work carried on for one). */
export function withRequestContext<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}

/**
 * Headers an outbound call made for the current request carries: its trace, continued
 * (`traceparent`), and the request's id. Empty outside a request.
 */
export function outboundTraceHeaders(): Record<string, string> {
  const context = storage.getStore();
  return context ? { traceparent: childTraceparent(context.trace), 'x-request-id': context.requestId } : {};
}

/** Fastify's `genReqId`: the request's id as `request.id`, and so in every log line about it. */
export function genReqId(request: { headers: Record<string, string | string[] | undefined> }): string {
  return requestIdFor(request.headers['x-request-id']);
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/** Adds the request's id to an error's JSON body; any other payload is returned as it was. */
function withRequestId(payload: unknown, requestId: string): unknown {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return payload;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return payload;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return payload;
  // A kept answer (an idempotent replay) holds the first request's id: this answer is this request's.
  if ((body as { requestId?: unknown }).requestId === requestId) return payload;
  return JSON.stringify({ ...body, requestId });
}

/**
 * The request id and trace on every request: the first onRequest hook opens the context the rest
 * of the request runs in; every answer carries `X-Request-Id`, and every error body (any style,
 * 4xx and 5xx, JSON) a `requestId` field. Register it first; its onSend after the hooks that
 * keep answers (idempotency), so a kept answer takes the id of the request that replays it.
 */
export function registerRequestContext(app: FastifyInstance): { registerErrorBodies(): void } {
  app.addHook('onRequest', (request, reply, done) => {
    const trace = traceFor(request.headers.traceparent);
    void reply.header('x-request-id', request.id);
    storage.run({ requestId: request.id, trace }, done);
  });
  return {
    registerErrorBodies() {
      app.addHook('onSend', (request, reply, payload, done) => {
        if (!reply.hasHeader('x-request-id')) void reply.header('x-request-id', request.id);
        const type = reply.getHeader('content-type');
        if (reply.statusCode < 400 || typeof type !== 'string' || !JSON_TYPE.test(type)) return done(null, payload);
        done(null, withRequestId(payload, request.id));
      });
    },
  };
}
