import { once } from 'node:events';
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { addressKey } from './client-address.js';
import type { Database } from './db/database.js';
import { ApiError } from './errors.js';
import { PostgresRateLimitStore } from './rate-limit-store.js';
import { routedPath } from './routed-path.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a request whose credential was refused against its client's address; throws a 429 past the limit. */
    countRefusedCredential(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  }
}

export interface RateLimitSettings {
  /** Requests per minute per secret (organization and mode) unless the organization has its own. */
  perSecret: number;
  /** Requests per minute per client address on the routes without an API secret. */
  perAddress: number;
}

/**
 * Routes limited per client address, by their routed path (`/%61pi/...` is `/api/...`): the
 * portal's API and the respondents' pages (no API secret). An unmatched path under them counts too.
 */
function limitedByAddress(path: string): boolean {
  return path.startsWith('/api/') || path.startsWith('/respond/');
}

/**
 * The onRequest hook of a route family authenticated by a bearer credential (API secret, agent
 * credential): `authenticate` attaches the caller or throws. A request it refuses with a 401 is
 * counted against the client's address and, past the per-address limit, answered 429 instead, so
 * credentials cannot be guessed without limit. A request with a valid credential is limited per
 * secret (or not at all) and never held back by others' failures from the same address.
 */
export function authenticatedBy(authenticate: (request: FastifyRequest) => Promise<void>) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    try {
      await authenticate(request);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'ACCESS_DENIED') await request.server.countRefusedCredential(request, reply);
      throw err;
    }
  };
}

const REDIS_CONNECT_WAIT_MS = 2_000;

/** Resolves once Redis is ready or after `ms` (an unreachable Redis is logged by its error handler). */
async function waitForRedis(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([once(redis, 'ready'), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).catch(() => undefined);
  clearTimeout(timer);
}

/** The plugin makes its store with `new`: every limit here counts in the one store given. */
function sharedStore(shared: object): FastifyRateLimitStoreCtor {
  return class {
    constructor() {
      return shared;
    }
  } as unknown as FastifyRateLimitStoreCtor;
}

/**
 * Rate limits (docs/rate-limits.md) with @fastify/rate-limit: per secret on the API (after it has
 * authenticated; an organization may have its own limit, set by the operator), per client address
 * on the portal API and respondent pages, and per client address for requests whose API secret or
 * agent credential is missing or refused (see authenticatedBy). Answers 429 in the family's style
 * with Retry-After and the RateLimit-Limit/-Remaining/-Reset headers. Counts live in this process
 * on the embedded database (one process), in Redis when REDIS_URL is set, otherwise in PostgreSQL.
 */
export async function registerRateLimits(app: FastifyInstance, database: Database, config: Pick<Config, 'redisUrl' | 'rateLimits'>): Promise<void> {
  let store: FastifyRateLimitStoreCtor | undefined;
  if (config.redisUrl) {
    // Loaded here, not at the top: every `vouch` command loaded ioredis (0.45 MB of source) at its
    // start, for the server alone (docs/benchmarks.md, twenty-fourth session).
    // The bundle gives this import ioredis's named exports as Node does (scripts/build-server.ts).
    const { Redis: RedisClient } = await import('ioredis');
    const redis = new RedisClient(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    redis.on('error', (err: Error) => app.log.warn({ err: err.message }, 'rate-limit store (Redis) unreachable'));
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
    // Commands are not queued while it connects (a store that is down must not hold requests), so
    // a process would let its first requests through uncounted: wait for it, a little.
    await waitForRedis(redis, REDIS_CONNECT_WAIT_MS);
    // The plugin's own Redis store names each limit made with app.rateLimit() after a route it does
    // not have: its keys read `vouch-rate-limit:undefinedundefined-ip:…`. Every limit here has a key
    // of its own kind (secret:, ip:, verify:, …), so the store is the one store under one prefix, as
    // the PostgreSQL store is: `vouch-rate-limit:ip:192.0.2.1`.
    const { default: RedisStore } = await import('@fastify/rate-limit/store/RedisStore.js');
    const shared = new RedisStore(false, false, redis, 'vouch-rate-limit:');
    shared.child = () => shared;
    store = sharedStore(shared);
  } else if (database.kind === 'postgres') {
    // Claims go on a connection of their own: in the pool they would queue behind the queries of
    // the very requests waiting for them, and a burst on a busy machine would outlast the wait limit.
    const shared = new PostgresRateLimitStore(database.ownConnection(), (err) => app.log.warn({ err: err.message }, 'rate-limit counters unreachable: requests without quota let through'));
    app.addHook('onClose', () => shared.close());
    store = sharedStore(shared);
  }
  // Likewise: only the server registers rate limits.
  const { default: rateLimit } = await import('@fastify/rate-limit');
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    timeWindow: 60_000,
    ...(store ? { store } : {}),
    // A store that cannot be reached lets requests through rather than failing them all.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new ApiError('RATE_LIMITED', `Too many requests: at most ${context.max} a minute; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} s`, {
        retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });

  const { perSecret, perAddress } = config.rateLimits;
  const bySecret = app.rateLimit({
    max: (request: FastifyRequest) => request.auth.rateLimitPerMinute ?? perSecret,
    keyGenerator: (request: FastifyRequest) => `secret:${request.auth.orgId}:${request.auth.mode}`,
  });
  const byAddress = app.rateLimit({ max: perAddress, keyGenerator: (request: FastifyRequest) => `ip:${addressKey(request.ip)}` });
  const refusedByAddress = app.rateLimit({ max: perAddress, keyGenerator: (request: FastifyRequest) => `refused:${addressKey(request.ip)}` });
  app.decorate('countRefusedCredential', async (request: FastifyRequest, reply: FastifyReply) => {
    await refusedByAddress.call(app, request, reply);
  });
  // API routes authenticate in their onRequest hooks: the limit per secret runs just after, before
  // any validation or multipart reading.
  app.addHook('preValidation', (request, reply, done) => {
    if (!request.auth) return done();
    bySecret.call(app, request, reply).then(() => done(), done);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!limitedByAddress(routedPath(request))) return done();
    byAddress.call(app, request, reply).then(() => done(), done);
  });
}
