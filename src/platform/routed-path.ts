import type { FastifyRequest } from 'fastify';

/**
 * The path a request was routed by: what every decision about which area of the app a request
 * belongs to is made on (the portal API's CSRF check and per-address limit, the error style, the
 * web app's fallback). The raw URL (`request.url`) is what the client wrote, and the router
 * decodes it before matching: `/%61pi/console/...` reaches the `/api/console/...` routes, so a
 * test on the raw URL can be walked around. A matched request answers its route's pattern
 * (`/api/console/funding-requests/:id/confirm`), an unmatched one the path as the router reads it.
 */
export function routedPath(request: FastifyRequest): string {
  return request.routeOptions.url ?? decodedPath(request.url);
}

/**
 * A raw request target's path as the router reads it: up to the first `?`, `;` or `#`, with its
 * percent-encoding decoded except for the characters that separate (`%2F` stays a segment's
 * content, as it does for the router). A path that is not valid percent-encoding is returned as
 * it is (the router refuses it with a 400).
 */
export function decodedPath(url: string): string {
  const path = /^[^?;#]*/.exec(url)![0];
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}
