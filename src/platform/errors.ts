import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { newRequestId } from './request-context.js';
import { decodedPath, routedPath } from './routed-path.js';

/** The closed set of error codes a handler may throw, with their HTTP status. */
const STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_ERROR: 400,
  ACCESS_DENIED: 401,
  PAYMENT_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND_ERROR: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof STATUS;

/**
 * Body styles of the spec: A `{status: "error", code, message}` (workflow endpoints),
 * B `{statusCode, error, message}` (identity endpoints), C `{code, message}` (identity not-found).
 */
export type ErrorStyle = 'A' | 'B' | 'C';

/** One entry of a class-validator style message array (spec: invalid corporate registry type). */
export interface ConstraintViolation {
  target: Record<string, unknown>;
  value: unknown;
  property: string;
  children: ConstraintViolation[];
  constraints: Record<string, string>;
}

export class ApiError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: {
      style?: 'C';
      violations?: ConstraintViolation[];
      /** A deliberate 503 (every upstream down): answered in the family's style with this Retry-After. */
      retryAfterSeconds?: number;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = STATUS[code];
  }
}

const CODE_BY_STATUS: Record<number, ErrorCode> = Object.fromEntries(
  Object.entries(STATUS).map(([code, status]) => [status, code as ErrorCode]).reverse(),
);
CODE_BY_STATUS[400] = 'BAD_REQUEST';

/**
 * Identity endpoints (with the `/v1`-less biometrics alias) answer style B; everything else style
 * A. `path` is the routed path (src/platform/routed-path.ts), or a decoded request line.
 */
export function errorStyleFor(path: string): 'A' | 'B' {
  return /^\/(v1\/)?verifications\/identities(\/|\?|$)/.test(path) || /^\/identities(\/|\?|$)/.test(path) ? 'B' : 'A';
}

export function renderError(style: ErrorStyle, statusCode: number, code: ErrorCode, message: unknown) {
  switch (style) {
    case 'A':
      return { status: 'error', code, message };
    case 'B':
      return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message };
    case 'C':
      return { code, message };
  }
}

interface PgError {
  code?: string;
  constraint?: string;
}

/** Maps PostgreSQL errors to API errors in one place; undefined for anything else. */
export function mapDatabaseError(err: unknown): ApiError | undefined {
  const code = (err as PgError | undefined)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  switch (code) {
    case '23505':
      return new ApiError('CONFLICT', 'A record with the same unique value already exists');
    case '23503':
      return new ApiError('BAD_REQUEST', 'The request refers to a record that does not exist');
    case '22001':
      return new ApiError('BAD_REQUEST', 'A value in the request is longer than the field takes');
    case '22021':
    case '22P05':
      return new ApiError('BAD_REQUEST', 'A value in the request holds characters that cannot be stored');
    default:
      // Class 22 (data exception) is a value the database refused: the request's, never a failure of ours.
      return code.startsWith('22') ? new ApiError('BAD_REQUEST', 'A value in the request has the wrong format or is out of range') : undefined;
  }
}

function validationMessage(error: FastifyError): string {
  const parts = (error.validation ?? []).map((issue) => {
    const where = `${issue.instancePath ?? ''}`.replace(/^\//, '').replace(/\//g, '.');
    const missing = (issue.params as { missingProperty?: string } | undefined)?.missingProperty;
    if (issue.keyword === 'required' && missing) return `${where ? `${where}.` : ''}${missing} is required`;
    if (issue.keyword === 'additionalProperties') {
      const extra = (issue.params as { additionalProperty?: string }).additionalProperty;
      return `${where ? `${where}.` : ''}${extra} is not allowed`;
    }
    const context = error.validationContext === 'body' ? '' : `${error.validationContext ?? ''} `;
    const allowed = (issue.params as { allowedValues?: unknown[] } | undefined)?.allowedValues;
    // Name the values a field takes ("outcome must be one of verified, failed"), not "the allowed values".
    if (issue.keyword === 'enum' && Array.isArray(allowed)) return `${context}${where || 'value'} must be one of ${allowed.map(String).join(', ')}`.trim();
    return `${context}${where || 'value'} ${issue.message ?? 'is invalid'}`.trim();
  });
  return parts.length > 0 ? parts.join('; ') : 'The request is invalid';
}

function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  const mapped = mapDatabaseError(error);
  if (mapped) return mapped;
  if (error.validation) return new ApiError('VALIDATION_ERROR', validationMessage(error));
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = CODE_BY_STATUS[status] ?? 'BAD_REQUEST';
    const err = new ApiError(code, error.message);
    (err as { statusCode: number }).statusCode = status;
    return err;
  }
  return new ApiError('INTERNAL_SERVER_ERROR', 'Something went wrong on our side; the failure has been logged');
}

/** A path segment longer than this answers 414; Node refuses a request line past 16 KB before that. */
export const MAX_PARAM_LENGTH = 16 * 1024;

/** The longest piece of a request's path an error message repeats. */
const ECHOED_PATH = 200;

function echoPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  return path.length > ECHOED_PATH ? `${path.slice(0, ECHOED_PATH)}…` : path;
}

function sendError(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) {
  const apiError = toApiError(error);
  if (apiError.options.retryAfterSeconds !== undefined) void reply.header('retry-after', String(apiError.options.retryAfterSeconds));
  if (apiError.statusCode >= 500 && apiError.options.retryAfterSeconds === undefined) {
    request.log.error({ err: error }, 'request failed');
    // Unexpected failures answer style A everywhere, with the detail only in the log.
    return reply.status(apiError.statusCode).send({ ...renderError('A', apiError.statusCode, apiError.code, apiError.message), requestId: request.id });
  }
  const style: ErrorStyle = apiError.options.style ?? errorStyleFor(routedPath(request));
  const message = apiError.options.violations ?? apiError.message;
  // The id is in the body here for the answers no hook sees (frameworkErrors); elsewhere the
  // request context's onSend adds it after the route's schema has serialized the body.
  return reply.status(apiError.statusCode).send({ ...renderError(style, apiError.statusCode, apiError.code, message), requestId: request.id });
}

/**
 * Fastify's own routing failures (its `frameworkErrors` option), which happen before any route
 * or error handler is chosen: a path segment past MAX_PARAM_LENGTH, a path that is not valid
 * percent-encoding. They answer in the family's style like everything else, without echoing the path.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // No hook runs for these: the request's id goes on the answer here (the body takes it in sendError).
  void reply.header('x-request-id', request.id);
  switch (error.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return sendError(new ApiError('URI_TOO_LONG', `A segment of the URL path is longer than ${MAX_PARAM_LENGTH} characters`), request, reply);
    case 'FST_ERR_BAD_URL':
      return sendError(new ApiError('BAD_REQUEST', 'The URL path is not valid percent-encoding'), request, reply);
    default:
      return sendError(error, request, reply);
  }
}

const CLIENT_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    code: 'HEADERS_TOO_LARGE',
    message: 'The request line and headers are larger than the server accepts (16 KB); send long values in the body',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'REQUEST_TIMEOUT', message: 'The request was not received in time' },
};
const MALFORMED = { code: 'BAD_REQUEST', message: 'The request is not valid HTTP' } as const;

/**
 * Requests Node's HTTP parser refuses (a URL or headers past its 16 KB limit, malformed HTTP, a
 * timeout) never reach Fastify: this is its `clientErrorHandler`. The family is read from the
 * request line when the parser kept it, style A otherwise.
 */
export function clientErrorHandler(error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { code, message } = CLIENT_ERRORS[error.code] ?? MALFORMED;
  const status = STATUS[code];
  // Node hands over the bytes it was parsing as a Buffer (Fastify's type shows its JSON form).
  const raw: unknown = error.rawPacket;
  const requestLine = /^[A-Z]+ (\/\S*)/.exec(Buffer.isBuffer(raw) ? raw.toString('latin1', 0, 512) : '');
  const style = requestLine?.[1] ? errorStyleFor(decodedPath(requestLine[1])) : 'A';
  // Never parsed, so never given the caller's id: a new one, for the log line and the answer.
  const requestId = newRequestId();
  const body = JSON.stringify({ ...renderError(style, status, code, message), requestId });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** Answers an unmatched request that is not an API's (the web app's own paths); returns false to decline. */
export type NotFoundFallback = {
  accepts(request: FastifyRequest): boolean;
  answer(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
};

/** The one error path: every failure, thrown or from Fastify itself, leaves here in its family's style. */
export function registerErrorHandling(app: FastifyInstance, fallback?: NotFoundFallback): void {
  app.setErrorHandler(sendError);

  app.setNotFoundHandler((request, reply) => {
    if (fallback?.accepts(request)) return fallback.answer(request, reply);
    const style = errorStyleFor(routedPath(request));
    const message = `Route ${request.method} ${echoPath(request.url)} not found`;
    return reply.status(404).send(renderError(style, 404, 'NOT_FOUND_ERROR', message));
  });
}
