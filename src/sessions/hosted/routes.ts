import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { isFileId, type FileStore } from '../../files/store.js';
import type { DB } from '../../platform/db/schema.js';
import { findLogo } from '../../portal/branding/service.js';
import { sessionByTokenHash } from '../repository.js';
import { CLIENT_SECRET_PREFIX, hashToken, isTokenShaped } from '../tokens.js';
import { applyAllowedOrigins, framingFor, type Framing } from './embedding.js';

/**
 * The hosted verification flow's pages: `GET /verify/:token` (the session's `url`, or its client
 * secret inside the web SDK's window) answers the flow's page shell, the same for every token —
 * the page asks the end-user API under /verify/api for the session — with a strict CSP, no
 * caching, no referrer and no framing except the SDK's; `GET /verify/assets/*` the flow's hashed
 * scripts and styles; `GET /sdk/v1/vouch.js` the web SDK. Built by web/verify/build.mjs.
 */

export interface HostedFlowOptions {
  db: Kysely<DB>;
  /** Where organizations' logos are (the file store). */
  store: FileStore;
  /** Origins (besides Vouch's own) organizations' logos may load from: the S3 store's. */
  imageOrigins?: string[];
  /** web/verify/dist by default. */
  root?: string;
}

/** web/verify/dist, found from src/ (tsx) and from dist/ (the build) alike. */
export function hostedFlowDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return path.join(dir, 'web', 'verify', 'dist');
}

function contentSecurity(frameAncestors: string, imageOrigins: string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${imageOrigins.map((origin) => ` ${origin}`).join('')}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
}

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  // The token is in the address: never cached, never sent on as a referrer.
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  // The camera for this page (and the SDK's frame, which must also allow it); nothing else.
  'permissions-policy': 'camera=(self), microphone=(), geolocation=(), payment=(), usb=()',
};

const REFUSED_PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Cannot be shown here</title>
<p>This verification cannot be shown inside this website. Open the verification link directly instead.</p></html>`;

const NOT_BUILT_PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Vouch</title><p>The verification page is not built: run <code>npm run build</code>, then reload.</p></html>`;

/**
 * The shell told that its frame's origin is not among the organization's allowed ones: the page
 * then shows that, tells the SDK (onError ORIGIN_NOT_ALLOWED) and never loads the session.
 */
function refusedShell(shell: Buffer): string {
  return shell.toString('utf8').replace('<main id="app">', '<main id="app" data-refused="origin">');
}

/** The allowed origins of the organization whose session a client secret opens; none for an unknown token. */
async function allowedOriginsFor(db: Kysely<DB>, token: string): Promise<string[]> {
  if (!token.startsWith(CLIENT_SECRET_PREFIX) || !isTokenShaped(token)) return [];
  const found = await sessionByTokenHash(db, hashToken(token));
  if (!found) return [];
  const row = await db.selectFrom('organization_branding').select('allowed_origins').where('org_id', '=', found.row.org_id).executeTakeFirst();
  return row?.allowed_origins ?? [];
}

function sendPage(reply: FastifyReply, status: number, body: string | Buffer, framing: Framing, imageOrigins: string[]) {
  const embedded = framing.kind === 'embed' || framing.kind === 'not_allowed';
  if (embedded) reply.removeHeader('x-frame-options');
  return reply
    .status(status)
    .headers({
      ...PAGE_HEADERS,
      'content-security-policy': contentSecurity(embedded ? framing.origin : "'none'", imageOrigins),
      ...(embedded ? {} : { 'x-frame-options': 'DENY' }),
    })
    .send(body);
}

export async function hostedFlowRoutes(app: FastifyInstance, { db, store, imageOrigins = [], root = hostedFlowDir() }: HostedFlowOptions): Promise<void> {
  const shellFile = path.join(root, 'index.html');
  const shell = existsSync(shellFile) ? await readFile(shellFile) : null;
  // Token in the path: request lines are logged only at warn and above, like the respondents' links.
  const quiet = { logLevel: 'warn' as const, schema: { hide: true } };

  app.get<{ Params: { token: string }; Querystring: Record<string, unknown> }>('/verify/:token', quiet, async (request, reply) => {
    let framing = framingFor(request.params.token, request.query);
    if (framing.kind === 'refused') return sendPage(reply, 400, REFUSED_PAGE, framing, imageOrigins);
    if (framing.kind === 'embed') framing = applyAllowedOrigins(framing, await allowedOriginsFor(db, request.params.token));
    if (!shell) return sendPage(reply, 503, NOT_BUILT_PAGE, framing, imageOrigins);
    if (framing.kind === 'not_allowed') return sendPage(reply, 403, refusedShell(shell), framing, imageOrigins);
    return sendPage(reply, 200, shell, framing, imageOrigins);
  });

  // Organizations' logos (set in the portal): by the file's random id, only while it is some
  // organization's logo, so no other stored file can be read here. The id changes with every upload.
  app.get<{ Params: { id: string } }>('/verify/logos/:id', { schema: { hide: true } }, async (request, reply) => {
    const logo = isFileId(request.params.id) ? await findLogo(db, store, request.params.id) : undefined;
    if (!logo) return reply.status(404).type('application/json; charset=utf-8').send({ status: 'error', message: 'Not found', code: 'NOT_FOUND_ERROR' });
    return reply
      .headers({
        'content-type': logo.contentType,
        'cache-control': 'public, max-age=86400, immutable',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; sandbox",
        'cross-origin-resource-policy': 'same-origin',
      })
      .send(logo.bytes);
  });

  const notFound = async (_request: unknown, reply: FastifyReply) =>
    reply.status(404).type('application/json; charset=utf-8').send({ status: 'error', message: 'Not found', code: 'NOT_FOUND_ERROR' });
  // Exact files get routes below; any other path under these prefixes is a 404, never the web app.
  app.get('/verify/assets/*', { schema: { hide: true } }, notFound);
  // The end-user API's prefix without a token is not a page whose token is "api".
  app.get('/verify/api', { schema: { hide: true } }, notFound);
  app.get('/sdk/*', { schema: { hide: true } }, notFound);
  if (!shell) return;

  await app.register(fastifyStatic, {
    root: path.join(root, 'assets'),
    prefix: '/verify/assets/',
    decorateReply: false,
    wildcard: false,
    preCompressed: true,
    index: false,
    setHeaders(reply) {
      reply.header('cache-control', 'public, max-age=31536000, immutable');
    },
  });
  await app.register(fastifyStatic, {
    root: path.join(root, 'sdk'),
    prefix: '/sdk/v1/',
    decorateReply: false,
    wildcard: false,
    preCompressed: true,
    index: false,
    setHeaders(reply) {
      // Loaded by other sites' pages: readable cross-origin, and fixes reach them within minutes.
      reply.header('cache-control', 'public, max-age=300');
      reply.header('cross-origin-resource-policy', 'cross-origin');
      reply.header('access-control-allow-origin', '*');
    },
  });
}
