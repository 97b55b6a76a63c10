import type { FastifyServerOptions } from 'fastify';
import type { DestinationStream, LoggerOptions } from 'pino';

const IDENTITY_PATH = /^(\/(?:v1\/)?verifications\/identities\/[a-z_-]+\/)([^/?]+)/i;
const LONG_NUMBER = /\d{6,}/g;
const QUERY = /\?.*$/;

/**
 * URLs carry identity numbers and phones (`/identities/bvn/:ref`, `/nin_phone/:ref`); the log
 * keeps the route's shape and nothing of the number. Query strings are dropped for the same reason.
 */
export function redactUrl(url: string): string {
  return url.replace(QUERY, '?[redacted]').replace(IDENTITY_PATH, '$1[redacted]').replace(LONG_NUMBER, '[redacted]');
}

interface SerializableError {
  type?: string;
  name?: string;
  message?: string;
  code?: string;
  stack?: string;
  statusCode?: number;
}

/** Database errors carry the offending values in `detail` and `parameters`: log neither. */
function serializeError(err: SerializableError) {
  return {
    type: err.name ?? err.type,
    message: err.message?.replace(LONG_NUMBER, '[redacted]'),
    code: err.code,
    statusCode: err.statusCode,
    stack: err.stack?.replace(LONG_NUMBER, '[redacted]'),
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
