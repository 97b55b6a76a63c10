import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { DestinationStream, LoggerOptions } from 'pino';
import pinoPretty from 'pino-pretty';

/**
 * A lookup's identity number or phone (`…/verifications/identities/:type/:ref`), wherever the path
 * puts it: the router also takes `//v1/…` and `/v1//…` (a base URL ending in `/`), and any prefix
 * a proxy adds. Matched after runs of slashes are read as one (redactUrl).
 */
const IDENTITY_PATH = /(\/verifications\/identities\/[^/?]+\/)([^/?]+)/gi;
/** Runs of slashes, which the router reads as one (`ignoreDuplicateSlashes`). */
const SLASHES = /\/{2,}/g;
/** A respondent's link, wherever it appears: everything after `/respond/` is the token. */
const RESPONDENT_PATH = /(\/respond\/)[^?#\s"']*/gi;
/** A verification session's handoff short link: the 10-character code is a capability too. */
const HANDOFF_PATH = /(\/v\/)[^/?#\s"']+/gi;
/** A verification link's code (/l/<code>): public by design, but one code must not lead to others. */
const LINK_PATH = /(\/l\/)[^/?#\s"']+/gi;
const LONG_NUMBER = /\d{6,}/g;
/** Bearer-like values: link tokens (43 characters), file signatures (64 hex), credentials. IDs (UUIDs) are shorter. */
const LONG_TOKEN = /[A-Za-z0-9_-]{40,}/g;
const QUERY = /\?.*$/;
/**
 * Record ids: kept whole so a request can be traced, though they may hold six digits in a row:
 * UUIDs, and verification sessions' and liveness attempts' random hex ids (`ses_`, `att_`).
 */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\bses_[0-9a-f]{20}\b|\batt_[0-9a-f]{24}\b/gi;

/**
 * An email address: its local part names a person; the domain is kept for the operator. The local
 * part stops at a URL's separators (`/ ? & = #`), so an address in a query string takes only itself.
 */
const EMAIL = /[^\s<>()[\]"',;:@/?&=#]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/g;

function redactValues(text: string): string {
  return text.replace(LONG_NUMBER, '[redacted]').replace(LONG_TOKEN, '[redacted]');
}

/**
 * Removes from free text (error messages, stacks) what redactUrl removes from a URL's path, and
 * the local part of email addresses (a mail server's refusal quotes the recipient).
 */
export function redactText(text: string): string {
  const unlinked = text.replace(EMAIL, '[redacted]@$1').replace(IDENTITY_PATH, '$1[redacted]').replace(RESPONDENT_PATH, '$1[redacted]').replace(HANDOFF_PATH, '$1[redacted]').replace(LINK_PATH, '$1[redacted]');
  let redacted = '';
  let from = 0;
  for (const uuid of unlinked.matchAll(UUID)) {
    redacted += redactValues(unlinked.slice(from, uuid.index)) + uuid[0];
    from = uuid.index + uuid[0].length;
  }
  return redacted + redactValues(unlinked.slice(from));
}

/** A percent-encoded unreserved character (RFC 3986 2.3): the same URL as the character itself. */
const ENCODED_UNRESERVED = /%(3[0-9]|4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]|2D|2E|5F|7E)/gi;

/**
 * URLs carry identity numbers and phones (`/identities/bvn/:ref`, `/nin_phone/:ref`) and bearer-like
 * tokens (`/respond/:token`, a file link's `?signature=`); the log keeps the route's shape and none
 * of them. Query strings are dropped whole for the same reason. Encoded unreserved characters are
 * decoded first (the router reads `%32` as `2` and `%76` as `v`), so an encoded number or path is
 * redacted like a plain one, and runs of slashes are read as one, as the router reads them.
 */
export function redactUrl(url: string): string {
  const plain = url
    .replace(QUERY, '?[redacted]')
    .replace(ENCODED_UNRESERVED, (encoded) => String.fromCharCode(parseInt(encoded.slice(1), 16)))
    .replace(SLASHES, '/');
  return redactText(plain);
}

interface SerializableError {
  type?: string;
  name?: string;
  message?: string;
  code?: string;
  stack?: string;
  statusCode?: number;
}

/**
 * Database errors carry the offending values in `detail` and `parameters`: log neither; messages may
 * quote a URL. A string (`{ err: err.message }`) is logged as the message it is.
 */
function serializeError(err: SerializableError | string) {
  if (typeof err === 'string') return { message: redactText(err) };
  return {
    type: err.name ?? err.type,
    message: err.message === undefined ? undefined : redactText(err.message),
    code: err.code,
    statusCode: err.statusCode,
    stack: err.stack === undefined ? undefined : redactText(err.stack),
  };
}

export function loggerOptions(level: string, stream?: DestinationStream): FastifyServerOptions['logger'] {
  const options: LoggerOptions & { stream?: DestinationStream } = {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.authentication', 'req.headers.cookie', '*.photo', '*.bvn', '*.nin', '*.phone', '*.idNumber'],
      censor: '[redacted]',
    },
    serializers: {
      req: (req: { method: string; url: string; ip?: string; id?: string }) => ({
        id: req.id,
        method: req.method,
        url: redactUrl(req.url),
        remoteAddress: req.ip,
      }),
      err: serializeError,
    },
  };
  if (stream) options.stream = stream;
  return options as FastifyServerOptions['logger'];
}

/**
 * Standard output and error as a long-running process (`vouch serve`, `vouch worker`) uses them.
 * Log lines go to `process.stdout`, not to pino's default destination: that one writes from the
 * thread pool and, at exit, flushes synchronously, retrying a failed write every 100 ms for ever,
 * so a server whose log reader had gone (EPIPE) never exited after SIGTERM (issue 19, item 10),
 * and one whose reader stopped reading blocked `process.exit` on the stuck write. Node's stream
 * writes a pipe from the event loop without blocking and never at exit: a reader that went away
 * costs the lines it did not read, never the process. Errors on either stream are ignored for the
 * same reason: there is nowhere left to report them.
 */
export function processOutput(): { stream: DestinationStream; drain(timeoutMs: number): Promise<void> } {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.listenerCount('error') === 0) stream.on('error', () => {});
  }
  return {
    stream: process.stdout,
    /** Waits until what was written has gone out (or the stream has failed), at most `timeoutMs`. */
    drain: (timeoutMs) =>
      new Promise((resolve) => {
        const out = process.stdout;
        if (out.writableLength === 0 || out.destroyed) return resolve();
        const finish = () => {
          clearTimeout(timer);
          out.off('drain', finish);
          out.off('close', finish);
          resolve();
        };
        const timer = setTimeout(finish, timeoutMs);
        out.once('drain', finish);
        out.once('close', finish);
      }),
  };
}

/** Routes polled by machines (health checks, Prometheus): their successful requests log at debug. */
const POLLED_ROUTES = new Set(['/health', '/ready', '/metrics']);
/** The web app's files (hashed assets, icons, the manifest): routes of their own, one per file. */
const STATIC_FILE = /^\/assets\/|\.(?:js|mjs|css|map|svg|png|ico|webp|jpg|woff2?|webmanifest|txt)$/;

/** Whether a request is one of the many nobody reads at info: a poll or a static file, answered without error. */
function isRoutine(request: FastifyRequest, reply?: FastifyReply): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (reply && reply.statusCode >= 400) return false;
  const route = request.routeOptions.url;
  return route !== undefined && (POLLED_ROUTES.has(route) || STATIC_FILE.test(route));
}

/**
 * Fastify's request log lines, with the request's id labelled `requestId` (src/platform/request-context.ts)
 * and routine requests (health checks, metrics scrapes, the web app's files) at debug instead of
 * info, so a terminal at info shows the requests people and integrations make. Errors stay at
 * their level whatever the route.
 */
export class VouchLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'requestId' });
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (!isRoutine(request)) return super.incomingRequest(request, reply, metadata);
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (error || !isRoutine(request, reply)) return super.requestCompleted(error, request, reply, metadata);
    reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/**
 * Where log lines go in the format asked for: JSON lines as they are, or (`pretty`, and `auto` on a
 * terminal) one readable line each, coloured on a terminal, written to the same stream. Redaction
 * happens before either.
 */
export function logDestination(format: 'json' | 'pretty' | 'auto', stream: DestinationStream & { isTTY?: boolean }): DestinationStream {
  const pretty = format === 'pretty' || (format === 'auto' && stream.isTTY === true);
  if (!pretty) return stream;
  return pinoPretty({
    destination: stream as NodeJS.WritableStream,
    colorize: stream.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
    sync: true,
  });
}
