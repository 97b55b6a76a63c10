import { CLIENT_SECRET_PREFIX } from '../tokens.js';

/**
 * Who may frame the hosted flow. Only the web SDK's case: the session's client secret (never the
 * shareable url token), `embed=1`, and `origin` naming the page's exact origin, which becomes the
 * page's only CSP frame-ancestor and the only origin its messages are posted to. Everything else
 * is framed by nobody. docs/sdk.md explains the trade-off (the secret is the capability; any page
 * that holds it may name itself).
 */

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** A host that can appear in a CSP source expression as it is: letters, digits, dots, hyphens, or an IPv6 literal. */
const PLAIN_HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/;

/**
 * `not_allowed`: a well-formed SDK request from an origin outside the organization's allowed list.
 * That origin may frame only a page that says so (and tells the SDK why); never the flow.
 */
export type Framing = { kind: 'none' } | { kind: 'embed'; origin: string } | { kind: 'refused'; reason: string } | { kind: 'not_allowed'; origin: string };

/**
 * An origin a page may embed the flow from: `https://host[:port]` exactly as browsers serialise it
 * (no path, no trailing slash), or plain http on this machine (a developer's localhost).
 */
export function embeddableOrigin(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.origin !== value || !PLAIN_HOST.test(url.hostname)) return null;
  if (url.protocol === 'https:') return url.origin;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return url.origin;
  return null;
}

export function framingFor(token: string, query: { embed?: unknown; origin?: unknown }): Framing {
  if (query.embed === undefined) return { kind: 'none' };
  if (query.embed !== '1') return { kind: 'refused', reason: 'embed must be 1' };
  if (!token.startsWith(CLIENT_SECRET_PREFIX)) return { kind: 'refused', reason: 'only a client secret opens the flow inside another page' };
  const origin = typeof query.origin === 'string' ? embeddableOrigin(query.origin) : null;
  if (!origin) return { kind: 'refused', reason: 'origin must be the embedding page\'s https origin' };
  return { kind: 'embed', origin };
}

/**
 * The organization's allow-list (set in the portal, docs/sdk.md "Allowed origins") applied to an
 * SDK request: an empty list keeps the rule above (the origin the SDK names), a non-empty one
 * admits only the origins it holds, exactly.
 */
export function applyAllowedOrigins(framing: Framing, allowed: readonly string[]): Framing {
  if (framing.kind !== 'embed' || allowed.length === 0 || allowed.includes(framing.origin)) return framing;
  return { kind: 'not_allowed', origin: framing.origin };
}
