import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FormFields, PageResult } from './handler.js';
import { layout, STYLE_HASH } from './html.js';
import { findLink, type RespondentLink } from './links.js';
import { badRequestPage, errorPage, expiredLinkPage, notFoundPage, unknownLinkPage, usedLinkPage } from './pages.js';
import type { Respondents } from './service.js';

export interface RespondentPagesOptions {
  respondents: Respondents;
}

const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  // The token is in the URL: no caching, no referrer to anything the page links to, no framing.
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
};

/** `testModeOf`: the asking organization's name when the link is a test-mode one (the page says so at the top). */
function send(reply: FastifyReply, page: PageResult, testModeOf?: string) {
  return reply.status(page.status).headers(HEADERS).send(layout(page.title, page.body, testModeOf));
}

/**
 * Whether a request Fastify's router refused before any route ran (a path that is not valid
 * percent-encoding) was for a respondent's page: a person who opened a mangled link gets the page
 * saying so, not the API's JSON. Read on the raw path, as nothing was routed.
 */
export function isRespondentPath(url: string): boolean {
  return /^\/+respond(?:[/?#]|$)/i.test(url);
}

/** The respondents' "could not read" page, for the app's framework error handler. */
export function sendBadRequestPage(reply: FastifyReply, status = 400) {
  return send(reply, badRequestPage(status));
}

/** First value of each field; names like `__proto__` stay plain data. */
function parseForm(body: string): FormFields {
  const fields: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(body)) if (!(name in fields)) fields[name] = value;
  return fields;
}

function formOf(body: unknown): FormFields {
  if (typeof body !== 'object' || body === null) return Object.create(null);
  const fields: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') fields[name] = value;
  return fields;
}

/**
 * The pages respondents open from their message: `GET /respond/:token` shows the form and
 * `POST /respond/:token` (a plain HTML form, no JavaScript) records the answer. The token is the
 * only credential, which also makes the form safe against cross-site requests. Everything here
 * answers HTML, errors included; request logs stay at warn so tokens never reach the log.
 */
export async function respondentPages(app: FastifyInstance, { respondents }: RespondentPagesOptions): Promise<void> {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 32 * 1024 }, (_request, body, done) => {
    done(null, parseForm(body as string));
  });

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'respondent page failed');
      return send(reply, errorPage());
    }
    return send(reply, badRequestPage(status === 404 ? 400 : status));
  });
  app.setNotFoundHandler((_request, reply) => send(reply, notFoundPage()));

  const options = { logLevel: 'warn' as const, schema: { hide: true } };

  // A wildcard, not `:token`: a parameter past Fastify's length limit would be a JSON 414, not a page.
  const testModeOf = async (link: RespondentLink) => (link.scope.mode === 'test' ? respondents.organizationName(link.scope.orgId) : undefined);

  const open = async (request: FastifyRequest<{ Params: { '*': string } }>) => {
    const lookup = await findLink(respondents.db, request.params['*'], respondents.now());
    if (lookup.status === 'unknown') return { page: unknownLinkPage() };
    const testMode = await testModeOf(lookup.link);
    if (lookup.status === 'used') return { page: usedLinkPage(), testMode };
    if (lookup.status === 'expired') return { page: expiredLinkPage(lookup.link.expiresAt), testMode };
    const handler = respondents.handler(lookup.link.kind);
    if (!handler) throw new Error(`no respondent handler for ${lookup.link.kind}`);
    return { link: lookup.link, handler, testMode };
  };

  // `/respond/` without a token: the router reads it as `/respond` (trailing slashes are ignored),
  // which the wildcard does not match; the same page, and kept out of the request log as links are.
  app.get('/', options, async (_request, reply) => send(reply, notFoundPage()));

  app.get<{ Params: { '*': string } }>('/*', options, async (request, reply) => {
    const found = await open(request);
    if ('page' in found) return send(reply, found.page!, found.testMode);
    return send(reply, await found.handler.show(found.link), found.testMode);
  });

  app.post<{ Params: { '*': string } }>('/*', options, async (request, reply) => {
    const found = await open(request);
    if ('page' in found) return send(reply, found.page!, found.testMode);
    return send(reply, await found.handler.submit(found.link, formOf(request.body)), found.testMode);
  });
}
