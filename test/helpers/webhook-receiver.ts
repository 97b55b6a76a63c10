import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../../src/platform/db/database.js';
import type { Mode } from '../../src/platform/db/schema.js';
import { setWebhookEndpoint, type WebhookEndpoint } from '../../src/webhooks/endpoints.js';
import type { DeliverySettings } from '../../src/webhooks/worker.js';
import { startWorker, type Worker } from '../../src/worker.js';
import { testConfig } from './app.js';

/** The body Vouch sends: `{type, timestamp, data}`; `data` is the record as its GET returns it. */
export interface WebhookBody {
  type: string;
  timestamp: string;
  // Tests read deep into the record (`body.data.status`); the shape depends on the event.
  data: Record<string, any>;
}

export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The `webhook-id` header (`msg_...`): the same on every retry and redelivery of one event. */
  id: string;
  /** The `webhook-timestamp` header (Unix seconds). */
  timestamp: string;
  /** The `webhook-signature` header: one or more space-separated `v1,<base64>` entries. */
  signature: string;
  rawBody: string;
  /** The parsed body; undefined when the body was not JSON. */
  body: WebhookBody | undefined;
  /** Whether the signature verified (standardwebhooks) with the receiver's current secret. */
  verified: boolean;
  /**
   * Whether `x-verifyme-signature` is the hex HMAC-SHA512 of the raw body keyed with the
   * receiver's current secret (the whole `whsec_...` string), as a VerifyMe receiver checks it.
   */
  verifymeVerified: boolean;
  /** The status code the receiver answered (or will answer; undefined for a hung request). */
  answeredWith: number | undefined;
  /** Date.now() when the request body had arrived. */
  receivedAt: number;
}

export interface WebhookReceiverOptions {
  /** The endpoint secret (`whsec_...`) to verify signatures with; settable later with `setSecret`. */
  secret?: string;
  /** Answers each request this long after its body arrived (a receiver that does some work first). */
  answerDelayMs?: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:PORT/webhook`: loopback, so the app needs VOUCH_ALLOW_PRIVATE_URLS (testConfig has it). */
  url: string;
  /** Every request so far, in arrival order (failed and hung ones too). */
  requests: ReceivedWebhook[];
  /** Requests answered 2xx: what the worker should count as delivered. */
  delivered(): ReceivedWebhook[];
  setSecret(secret: string | undefined): void;
  /** Verifies a received request with any secret (e.g. the one before a rotation). */
  verify(request: ReceivedWebhook, secret: string): boolean;
  /** Checks a VerifyMe-style signature header (`x-verifyme-signature` unless named) with any secret. */
  verifyVerifyme(request: Pick<ReceivedWebhook, 'rawBody' | 'headers'>, secret: string, header?: string): boolean;
  /** Answers the next `count` requests with `status` (default 500) instead of 204. */
  failNext(count: number, status?: number): void;
  /** Never answers the next `count` requests (the worker's timeout must fire); `close()` drops them. */
  hangNext(count: number): void;
  /** Answers the next `count` requests with a redirect to `location` (which a worker must not follow). */
  redirectNext(count: number, location: string, status?: number): void;
  /** The first request (already received or still to come) matching `predicate`; rejects after `timeoutMs`. */
  waitFor(predicate: (request: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook>;
  /** Resolves once `count` requests matching `predicate` (default: any) have arrived. */
  waitForCount(count: number, timeoutMs?: number, predicate?: (request: ReceivedWebhook) => boolean): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

type Plan = { kind: 'fail'; status: number } | { kind: 'hang' } | { kind: 'redirect'; status: number; location: string };

/**
 * A real HTTP server on 127.0.0.1 that plays a customer's webhook endpoint: it records every
 * request, verifies its Standard Webhooks signature, and can be told to fail, hang or redirect.
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  let secret = options.secret;
  const requests: ReceivedWebhook[] = [];
  const plans: Plan[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();

  const verify = (request: Pick<ReceivedWebhook, 'rawBody' | 'headers'>, key: string): boolean => {
    try {
      new Webhook(key).verify(request.rawBody, request.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };

  const verifyVerifyme = (request: Pick<ReceivedWebhook, 'rawBody' | 'headers'>, key: string, name = 'x-verifyme-signature'): boolean => {
    const given = request.headers[name];
    if (typeof given !== 'string') return false;
    const expected = createHmac('sha512', key).update(request.rawBody, 'utf8').digest('hex');
    return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const header = (name: string) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(', ') : (value ?? '');
      };
      let body: WebhookBody | undefined;
      try {
        body = JSON.parse(rawBody) as WebhookBody;
      } catch {
        body = undefined;
      }
      const plan = plans.shift();
      const answeredWith = plan?.kind === 'hang' ? undefined : plan ? plan.status : 204;
      const received: ReceivedWebhook = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        id: header('webhook-id'),
        timestamp: header('webhook-timestamp'),
        signature: header('webhook-signature'),
        rawBody,
        body,
        verified: secret ? verify({ rawBody, headers: req.headers }, secret) : false,
        verifymeVerified: secret ? verifyVerifyme({ rawBody, headers: req.headers }, secret) : false,
        answeredWith,
        receivedAt: Date.now(),
      };
      requests.push(received);
      for (const wake of [...waiters]) wake();
      if (plan?.kind === 'hang') return;
      const answer = () => {
        if (plan?.kind === 'redirect') res.writeHead(plan.status, { location: plan.location }).end();
        else res.writeHead(answeredWith ?? 204).end();
      };
      if (options.answerDelayMs) setTimeout(answer, options.answerDelayMs);
      else answer();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const waitForCount = (
    count: number,
    timeoutMs = 10_000,
    predicate: (request: ReceivedWebhook) => boolean = () => true,
  ): Promise<ReceivedWebhook[]> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const matching = requests.filter(predicate);
        if (matching.length < count) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(matching.slice(0, count));
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`webhook receiver: ${requests.filter(predicate).length} of ${count} expected requests within ${timeoutMs} ms (${requests.length} received in all)`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  return {
    url: `http://127.0.0.1:${port}/webhook`,
    requests,
    delivered: () => requests.filter((request) => request.answeredWith !== undefined && request.answeredWith < 300),
    setSecret: (value) => {
      secret = value;
    },
    verify,
    verifyVerifyme,
    failNext: (count, status = 500) => {
      for (let i = 0; i < count; i++) plans.push({ kind: 'fail', status });
    },
    hangNext: (count) => {
      for (let i = 0; i < count; i++) plans.push({ kind: 'hang' });
    },
    redirectNext: (count, location, status = 302) => {
      for (let i = 0; i < count; i++) plans.push({ kind: 'redirect', status, location });
    },
    waitFor: async (predicate, timeoutMs) => (await waitForCount(1, timeoutMs, predicate))[0]!,
    waitForCount,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Retries in milliseconds instead of hours: three retries, then failed. */
export const FAST_RETRY_SCHEDULE: readonly number[] = [50, 100, 200];

/**
 * Runs the real worker (webhook deliveries) on a test database, private URLs allowed, with a
 * fast retry schedule and poll; `overrides` change any delivery setting. Stop it in afterAll/afterEach.
 */
export function startTestWorker(database: Database, overrides: Partial<DeliverySettings> = {}): Promise<Worker> {
  return startWorker({
    database,
    config: testConfig({ allowPrivateUrls: true }),
    logger: pino({ level: 'silent' }),
    webhooks: { retrySchedule: FAST_RETRY_SCHEDULE, pollIntervalMs: 50, timeoutMs: 2_000, leaseMs: 5_000, stopGraceMs: 200, ...overrides },
  });
}

/** Points an organization's endpoint of `mode` at `receiver` and tells the receiver the new secret. */
export async function connectReceiver(database: Database, receiver: WebhookReceiver, orgId: string, mode: Mode): Promise<WebhookEndpoint> {
  const endpoint = await setWebhookEndpoint(database.db, { orgId, mode }, { url: receiver.url }, { allowPrivateUrls: true });
  receiver.setSecret(endpoint.secret);
  return endpoint;
}
