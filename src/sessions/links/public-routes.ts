import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { addressKey } from '../../platform/client-address.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { requestOrigin } from '../../platform/request-origin.js';
import { badRequestPage, errorPage, foreignFormPage, layout, LINK_STYLE_HASH, notFoundPage, startPage, tooManyPage, unavailablePage, type LinkPage } from './page.js';
import { linkByCode, startFromLink, statusOf } from './service.js';

/** Sessions one client address may start from one link in LINK_STARTS_WINDOW_MS. */
export const LINK_STARTS_PER_ADDRESS = 10;
export const LINK_STARTS_WINDOW_MS = 10 * 60_000;

export interface LinkPagesOptions {
  db: Kysely<DB>;
  publicUrl: string;
  /** Page views per minute per client address (VOUCH_RATE_LIMIT_PER_ADDRESS). */
  perAddress: number;
}

const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  // same-origin, not no-referrer: a browser sends `Origin: null` on a form post from a no-referrer
  // page, and the start is checked against its Origin. Nothing is sent to other sites.
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': `default-src 'none'; style-src ${LINK_STYLE_HASH}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
};

function send(reply: FastifyReply, page: LinkPage, testMode = false) {
  return reply.status(page.status).headers(HEADERS).send(layout(page, testMode));
}

/** The rate limiter's key for a link: never the code itself. */
function linkKey(code: string): string {
  return createHash('sha256').update(code).digest('base64url').slice(0, 16);
}

/**
 * A start must come from the link's own page: a browser's Origin (or Sec-Fetch-Site) naming
 * another site is refused, so a page elsewhere cannot spend the link's sessions through its
 * visitors' browsers. A client that sends neither (not a browser) is held by the limits alone.
 * The Origin is compared whole, scheme, host and port, as browsers tell origins apart: with
 * PUBLIC_URL's, or with the one this server is reached at (`https://host` is another site to a
 * server reached over http, and the other way round).
 */
function fromOwnPage(request: FastifyRequest, publicOrigin: string): boolean {
  if (request.headers['sec-fetch-site'] === 'same-origin') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return request.headers['sec-fetch-site'] === undefined;
  return origin === publicOrigin || origin === requestOrigin(request);
}

/**
 * `GET /l/<code>`: the link's page (HEAD and link previews create nothing); `POST /l/<code>`: the
 * page's button, which starts a session and answers 303 to its hosted url, or a page saying why
 * not. Everything answers HTML; request lines stay at warn, and the log redacts the code.
 */
export async function linkPages(app: FastifyInstance, { db, publicUrl, perAddress }: LinkPagesOptions): Promise<void> {
  const publicOrigin = new URL(publicUrl).origin;
  const views = app.rateLimit({ max: perAddress, keyGenerator: (request: FastifyRequest) => `link-page:${addressKey(request.ip)}` });
  const starts = app.rateLimit({
    max: LINK_STARTS_PER_ADDRESS,
    timeWindow: LINK_STARTS_WINDOW_MS,
    keyGenerator: (request: FastifyRequest) => `link-start:${addressKey(request.ip)}:${linkKey((request.params as { '*'?: string })['*'] ?? '')}`,
  });

  // The button's form body carries nothing; it is read and ignored.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 }, (_request, _body, done) => done(null, {}));

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (error instanceof ApiError && error.code === 'RATE_LIMITED') {
      const retry = error.options.retryAfterSeconds ?? 60;
      void reply.header('retry-after', String(retry));
      return send(reply, tooManyPage(retry));
    }
    if (status >= 500) {
      request.log.error({ err: error }, 'verification link page failed');
      return send(reply, errorPage());
    }
    return send(reply, status === 404 ? notFoundPage() : badRequestPage(status));
  });
  app.setNotFoundHandler((_request, reply) => send(reply, notFoundPage()));

  const options = { logLevel: 'warn' as const, schema: { hide: true } };
  type Params = { Params: { '*': string } };

  // Registered under the prefix /l. `/l` and `/l/` alone: no link.
  app.get('/', { ...options, onRequest: views }, async (_request, reply) => send(reply, notFoundPage()));

  // A wildcard, not `:code`: a path past the router's parameter limit is this page too, not JSON.
  app.get<Params>('/*', { ...options, onRequest: views }, async (request, reply) => {
    const code = request.params['*'];
    const found = await linkByCode(db, code);
    if (!found) return send(reply, notFoundPage());
    const { link, orgName } = found;
    const status = statusOf(link, new Date(), found.spend);
    if (!found.orgEnabled) return send(reply, unavailablePage({ kind: 'unavailable', reason: 'organization', link, orgName }), link.mode === 'test');
    if (status !== 'active') return send(reply, unavailablePage({ kind: 'unavailable', reason: status, link, orgName }), link.mode === 'test');
    return send(reply, startPage(link, orgName, `/l/${code}`), link.mode === 'test');
  });

  // One limiter per request (@fastify/rate-limit runs only the first a request meets): the starts'.
  app.post<Params>('/*', { ...options, onRequest: starts }, async (request, reply) => {
    if (!fromOwnPage(request, publicOrigin)) return send(reply, foreignFormPage());
    const outcome = await startFromLink(db, request.params['*'], { publicUrl });
    if (outcome.kind === 'started') return reply.status(303).headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).redirect(outcome.url, 303);
    return send(reply, unavailablePage(outcome), outcome.reason !== 'unknown' && outcome.link.mode === 'test');
  });
}
