import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { Webhook } from 'standardwebhooks';
import { checkOutboundUrl, guardedLookup } from '../platform/outbound.js';
import type { Mode } from '../platform/db/schema.js';
import { childTraceparent, storedTrace } from '../platform/request-context.js';
import type { WebhookSigning } from './endpoints.js';

/** An attempt's trace headers: the causing request's trace, continued with a span of the attempt's own. */
function traceHeaders(delivery: ClaimedDelivery): Record<string, string> {
  const trace = storedTrace(delivery.traceparent);
  return {
    ...(trace ? { traceparent: childTraceparent(trace) } : {}),
    ...(delivery.requestId ? { 'x-vouch-request-id': delivery.requestId } : {}),
  };
}

/** One delivery claimed by a worker, with what it takes to send it. */
export interface ClaimedDelivery {
  id: number;
  messageId: string;
  orgId: string;
  mode: Mode;
  /** The attempt this claim is (1 for the first); with `id`, it identifies the claim. */
  attempt: number;
  /** The JSON body exactly as enqueued. */
  body: string;
  /** The scope's endpoint; null while the organization has set none. */
  url: string | null;
  /** The secrets to sign with: the current one, and the previous one during its 24 hours. */
  secrets: string[];
  /** The endpoint's choice of signature headers; 'standard' when absent. */
  signing?: WebhookSigning;
  /** The trace of the request that caused the event (W3C traceparent), continued by each attempt. */
  traceparent?: string | null;
  /** That request's id, sent as `X-Vouch-Request-Id`. */
  requestId?: string | null;
}

export interface AttemptResult {
  delivery: ClaimedDelivery;
  attemptedAt: Date;
  latencyMs: number;
  statusCode: number | null;
  error: string | null;
  /** The start of the receiver's answer (RESPONSE_EXCERPT_CHARS at most); null without one. */
  responseExcerpt: string | null;
  delivered: boolean;
  /**
   * Cut off by its worker's stop (the grace was over): logged, but not counted as an attempt, and
   * due again at once, for another worker or the next start. Whether the receiver had it is not
   * known, so it is sent again (at least once).
   */
  handedBack?: boolean;
}

export const DELIVERY_TIMEOUT_MS = 10_000;

/** How much of a receiver's answer the attempt log keeps, for the portal's delivery log. */
export const RESPONSE_EXCERPT_CHARS = 500;
/** Bytes read for the excerpt: enough for RESPONSE_EXCERPT_CHARS characters of any UTF-8. */
const EXCERPT_BYTES = RESPONSE_EXCERPT_CHARS * 4;

/** The `webhook-signature` header: one `v1,<base64>` per secret, space-separated (standardwebhooks accepts any). */
export function signatureHeader(signers: readonly Webhook[], messageId: string, timestamp: Date, body: string): string {
  return signers.map((signer) => signer.sign(messageId, timestamp, body)).join(' ');
}

/**
 * The `x-verifyme-signature` header: the hex HMAC-SHA512 of the raw body, keyed with the whole
 * secret string (`whsec_...`) as UTF-8, which is what a receiver written for VerifyMe does with
 * the secret pasted into its settings. No id or timestamp is signed: that scheme has none.
 */
export function verifymeSignature(secret: string, body: string): string {
  return createHmac('sha512', secret).update(body, 'utf8').digest('hex');
}

/**
 * The signature headers of one attempt, as the endpoint's `signing` asks. `webhook-id` and
 * `webhook-timestamp` are sent whatever the choice (receivers deduplicate on the id). The
 * VerifyMe header carries the current secret's signature only, since its receivers compare one
 * value; during the 24 hours after a rotation `x-verifyme-signature-previous` carries the old
 * secret's, for receivers that want to accept either while they switch.
 */
export function signatureHeaders(
  delivery: Pick<ClaimedDelivery, 'messageId' | 'body' | 'secrets' | 'signing'>,
  signer: (secret: string) => Webhook,
  timestamp: Date,
): Record<string, string> {
  const headers: Record<string, string> = {
    'webhook-id': delivery.messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
  };
  const signing = delivery.signing ?? 'standard';
  if (signing !== 'verifyme') {
    headers['webhook-signature'] = signatureHeader(delivery.secrets.map(signer), delivery.messageId, timestamp, delivery.body);
  }
  if (signing !== 'standard') {
    const [current, previous] = delivery.secrets;
    if (current) headers['x-verifyme-signature'] = verifymeSignature(current, delivery.body);
    if (previous) headers['x-verifyme-signature-previous'] = verifymeSignature(previous, delivery.body);
  }
  return headers;
}

type Target = { url: URL; secure: boolean } | { refused: string };

export interface SenderOptions {
  allowPrivateUrls: boolean;
  timeoutMs: number;
  /** Sockets kept open per receiver host, as many as deliveries in flight. */
  maxSockets: number;
}

/**
 * Sends deliveries over keep-alive agents. Host names are resolved by the guarded lookup, which
 * refuses private addresses at connect time (DNS rebinding); IP-literal hosts skip DNS, so they
 * are checked here. Redirects are not followed: a 3xx is a failed attempt.
 */
export class WebhookSender {
  private readonly signers = new Map<string, Webhook>();
  private readonly targets = new Map<string, Target>();
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly lookup: ReturnType<typeof guardedLookup>;

  constructor(private readonly options: SenderOptions) {
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, maxFreeSockets: options.maxSockets, scheduling: 'lifo' as const };
    this.httpAgent = new http.Agent(agentOptions);
    this.httpsAgent = new https.Agent(agentOptions);
    this.lookup = guardedLookup(options.allowPrivateUrls);
  }

  private signer(secret: string): Webhook {
    let signer = this.signers.get(secret);
    if (!signer) {
      if (this.signers.size > 10_000) this.signers.clear();
      signer = new Webhook(secret);
      this.signers.set(secret, signer);
    }
    return signer;
  }

  /**
   * The parsed URL, or why it is refused. Only IP-literal hosts are checked here (names are
   * checked by the lookup at connect time), and that check needs no DNS, so it is cached.
   */
  private async target(raw: string): Promise<Target> {
    let target = this.targets.get(raw);
    if (!target) {
      try {
        const url = new URL(raw);
        if (net.isIP(url.hostname.replace(/^\[|\]$/g, ''))) await checkOutboundUrl(raw, this.options.allowPrivateUrls);
        target = { url, secure: url.protocol === 'https:' };
      } catch (err) {
        target = { refused: `refused: webhook URL ${(err as Error).message}` };
      }
      if (this.targets.size > 10_000) this.targets.clear();
      this.targets.set(raw, target);
    }
    return target;
  }

  async send(delivery: ClaimedDelivery, now: () => Date = () => new Date()): Promise<AttemptResult> {
    const attemptedAt = now();
    const started = performance.now();
    const outcome = (statusCode: number | null, error: string | null, responseExcerpt: string | null = null): AttemptResult => ({
      delivery,
      attemptedAt,
      latencyMs: Math.round(performance.now() - started),
      statusCode,
      error,
      responseExcerpt,
      delivered: statusCode !== null && statusCode >= 200 && statusCode < 300,
    });
    if (!delivery.url) return outcome(null, 'no webhook endpoint is set for this organization and mode');
    const target = await this.target(delivery.url);
    if ('refused' in target) return outcome(null, target.refused);
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(delivery.body),
      'user-agent': 'Vouch-Webhooks/1',
      ...signatureHeaders(delivery, (secret) => this.signer(secret), attemptedAt),
      ...traceHeaders(delivery),
    };
    const { url, secure } = target;
    return new Promise((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (statusCode: number | null, error: string | null, excerpt: string | null = null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome(statusCode, error, excerpt));
      };
      const onResponse = (response: http.IncomingMessage) => {
        const status = response.statusCode ?? 0;
        // Drain (and bound) the body so the socket can be reused; only its start is kept.
        let received = 0;
        const head: Buffer[] = [];
        response.on('data', (chunk: Buffer) => {
          if (received < EXCERPT_BYTES) head.push(chunk.subarray(0, EXCERPT_BYTES - received));
          received += chunk.length;
          if (received > 64 * 1024) response.destroy();
        });
        response.on('error', () => {});
        response.on('close', () => {
          const text = Buffer.concat(head).toString('utf8').slice(0, RESPONSE_EXCERPT_CHARS);
          const excerpt = text.trim() ? text : null;
          if (status >= 300 && status < 400) finish(status, `redirect to ${response.headers.location ?? '(no location)'} not followed`, excerpt);
          else if (status < 200 || status >= 300) finish(status, `HTTP ${status}`, excerpt);
          else finish(status, null, excerpt);
        });
      };
      try {
        const options = { method: 'POST', headers, agent: secure ? this.httpsAgent : this.httpAgent, lookup: this.lookup };
        const request = secure ? https.request(url, options, onResponse) : http.request(url, options, onResponse);
        timer = setTimeout(() => request.destroy(new Error(`no response within ${this.options.timeoutMs / 1000} s`)), this.options.timeoutMs);
        request.on('error', (err: NodeJS.ErrnoException) => finish(null, err.code === 'EPRIVATE' ? `refused: ${err.message}` : err.message));
        request.end(delivery.body);
      } catch (err) {
        // A request Node refuses to build (a header it rejects) is a failed attempt, not a crash.
        finish(null, (err as Error).message);
      }
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
