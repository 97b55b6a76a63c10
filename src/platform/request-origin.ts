import type { FastifyRequest } from 'fastify';

/**
 * The origin a request reached this server at, as a browser writes it in `Origin`: the scheme and
 * host as Fastify reads them (the socket's scheme and the Host header, or X-Forwarded-Proto and
 * X-Forwarded-Host from a proxy VOUCH_TRUST_PROXY trusts). Compared whole with an Origin header:
 * `https://host` is another site to a server reached over http, and the other way round.
 * Undefined for a scheme other than http(s): such a URL writes its origin `null`, which is what a
 * browser sends from a sandboxed page.
 */
export function requestOrigin(request: FastifyRequest): string | undefined {
  if (request.protocol !== 'http' && request.protocol !== 'https') return undefined;
  try {
    return new URL(`${request.protocol}://${request.host}`).origin;
  } catch {
    return undefined;
  }
}
