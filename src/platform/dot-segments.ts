import type { IncomingMessage } from 'node:http';

/** A segment that is `.` or `..`, written plainly or percent-encoded (`%2e`), as browsers read it. */
const DOT = /^(?:\.|%2e)$/i;
const DOT_DOT = /^(?:\.|%2e){2}$/i;
const HAS_DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=\/|$)/i;

/**
 * Fastify's `rewriteUrl`: resolves `.` and `..` path segments (RFC 3986, 5.2.4) before routing,
 * as browsers and curl do on their side. The router matches paths literally, so `/./api/me`
 * matched no route and fell to the web app's HTML; now it reaches `/api/me`. `..` never climbs
 * above the root, and an encoded slash (`%2F`) stays a segment's content.
 */
export function resolveDotSegments(request: IncomingMessage): string {
  const url = request.url ?? '/';
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  if (!HAS_DOT_SEGMENT.test(path)) return url;
  const output: string[] = [];
  const segments = path.split('/').slice(1);
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (DOT.test(segment)) {
      if (last) output.push('');
    } else if (DOT_DOT.test(segment)) {
      output.pop();
      if (last) output.push('');
    } else {
      output.push(segment);
    }
  });
  return `/${output.join('/')}${end === -1 ? '' : url.slice(end)}`;
}
