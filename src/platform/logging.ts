import type { FastifyServerOptions } from 'fastify';
import type { DestinationStream, LoggerOptions } from 'pino';

const IDENTITY_PATH = /^(\/(?:v1\/)?verifications\/identities\/[a-z_-]+\/)([^/?]+)/i;
/** A respondent's link, wherever it appears: everything after `/respond/` is the token. */
const RESPONDENT_PATH = /(\/respond\/)[^?#\s"']*/gi;
const LONG_NUMBER = /\d{6,}/g;
/** Bearer-like values: link tokens (43 characters), file signatures (64 hex), credentials. IDs (UUIDs) are shorter. */
const LONG_TOKEN = /[A-Za-z0-9_-]{40,}/g;
const QUERY = /\?.*$/;
/** Record ids: kept whole so a request can be traced, though they may hold six digits in a row. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function redactValues(text: string): string {
  return text.replace(LONG_NUMBER, '[redacted]').replace(LONG_TOKEN, '[redacted]');
}

/** Removes from free text (error messages, stacks) what redactUrl removes from a URL's path. */
function redactText(text: string): string {
  const unlinked = text.replace(RESPONDENT_PATH, '$1[redacted]');
  let redacted = '';
  let from = 0;
  for (const uuid of unlinked.matchAll(UUID)) {
    redacted += redactValues(unlinked.slice(from, uuid.index)) + uuid[0];
    from = uuid.index + uuid[0].length;
  }
  return redacted + redactValues(unlinked.slice(from));
}

/**
 * URLs carry identity numbers and phones (`/identities/bvn/:ref`, `/nin_phone/:ref`) and bearer-like
 * tokens (`/respond/:token`, a file link's `?signature=`); the log keeps the route's shape and none
 * of them. Query strings are dropped whole for the same reason.
 */
export function redactUrl(url: string): string {
  return redactText(url.replace(QUERY, '?[redacted]').replace(IDENTITY_PATH, '$1[redacted]'));
}

interface SerializableError {
  type?: string;
  name?: string;
  message?: string;
  code?: string;
  stack?: string;
  statusCode?: number;
}

/** Database errors carry the offending values in `detail` and `parameters`: log neither; messages may quote a URL. */
function serializeError(err: SerializableError) {
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
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.photo', '*.bvn', '*.nin', '*.phone', '*.idNumber'],
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
