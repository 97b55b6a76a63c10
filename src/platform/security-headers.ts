import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's response headers, computed once. Our directives are static (no per-request nonces), so
 * every answer carries the same headers: running helmet's middleware on a recording response at
 * start gives them all. (@fastify/helmet rebuilds the middleware from its options on every
 * request, ~60 µs of CPU per answer under load.)
 */
export function securityHeaders(options: Readonly<HelmetOptions>): [string, string][] {
  const headers = new Map<string, [string, string]>();
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.set(name.toLowerCase(), [name, Array.isArray(value) ? value.join(', ') : String(value)]);
    },
    removeHeader(name: string) {
      headers.delete(name.toLowerCase());
    },
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return [...headers.values()];
}

/**
 * Sets the security headers on every answer, before any route or error handler runs. They go in
 * Fastify's own header store, which it hands to `writeHead` whole: one header set on the raw
 * response instead makes Node add every other header of the answer one `setHeader` at a time
 * (~100 µs of CPU per `/v1` list under load, docs/benchmarks.md).
 */
export function registerSecurityHeaders(app: FastifyInstance, options: Readonly<HelmetOptions>): void {
  const headers = Object.fromEntries(securityHeaders(options).map(([name, value]) => [name.toLowerCase(), value]));
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}
