import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { routedPath } from './routed-path.js';

/**
 * The web app (portal, console, field app): Vite's build in web/dist, served by the API process.
 * Unknown non-API paths answer its index.html so the app's own router shows them; the API
 * families keep their JSON 404s.
 */

/** web/dist, found from src/ (tsx) and from dist/ (the build) alike. */
export function webDistDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return path.join(dir, 'web', 'dist');
}

/** API families (and the app's own hashed assets): an unknown path there is a 404, never the app. */
const NOT_APP_PATHS = /^\/+(v1|api|docs|openapi\.json|respond|files|health|ready|identities|verifications\/identities|assets|verify\/api|v)(\/|\?|$)/;

/**
 * Whether a request that matched no route belongs to the web app (answer index.html) rather than
 * to an API; judged on the path as the router reads it (`/%61pi/...` is the API's).
 */
export function isWebAppPath(request: FastifyRequest): boolean {
  return (request.method === 'GET' || request.method === 'HEAD') && !NOT_APP_PATHS.test(routedPath(request));
}

export type WebAppFallback = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/** Serves web/dist's files (pre-compressed when the client accepts it) and returns the SPA fallback. */
export async function registerWebApp(app: FastifyInstance, root = webDistDir()): Promise<WebAppFallback> {
  const indexFile = path.join(root, 'index.html');
  if (!existsSync(indexFile)) {
    return async (_request, reply) =>
      reply
        .status(503)
        .type('text/html; charset=utf-8')
        .send('<!doctype html><title>Vouch</title><p>The web app is not built: run <code>npm run build</code>, then reload.</p>');
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    // Only files that exist get routes; everything else reaches the not-found handler below.
    wildcard: false,
    preCompressed: true,
    index: false,
    setHeaders(reply, filePath) {
      const hashed = filePath.includes(`${path.sep}assets${path.sep}`);
      reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  const index = await readFile(indexFile);
  return async (_request, reply) => reply.status(200).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);
}
