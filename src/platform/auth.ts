import type { FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB, Mode, PayloadType, RiskLevel } from './db/schema.js';
import { ApiError } from './errors.js';
import { authenticatedBy } from './rate-limit.js';
import { hashSecret, parseSecret } from './secrets.js';

export interface AuthContext {
  orgId: string;
  mode: Mode;
  riskLevel: RiskLevel;
  payloadType: PayloadType;
  /** The organization's own requests per minute per secret; null: the server's default. */
  rateLimitPerMinute: number | null;
  /** The organization requires consent on lookups and workflow creations (0021). */
  consentRequired: boolean;
  /** The API secret used (api_secrets.id), for the access log; null when the portal acts for the organization. */
  secretId: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Every API request authenticates, so verified secrets are remembered briefly instead of being
 * looked up each time. Account changes made in this process clear the cache at once; another
 * process (the CLI, another API instance) sees a rotated secret or a new risk level within the
 * TTL. Only valid secrets are cached, so unknown ones cannot fill it.
 */
const CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 10_000;
const cache = new Map<string, { context: AuthContext; expires: number }>();

/** Forgets every cached secret; account changes call it so they take effect at once in this process. */
export function invalidateAuthCache(): void {
  cache.clear();
}

function cached(hash: string, now: number): AuthContext | undefined {
  const entry = cache.get(hash);
  if (!entry) return undefined;
  if (entry.expires > now) return entry.context;
  cache.delete(hash);
  return undefined;
}

function remember(hash: string, context: AuthContext, now: number): void {
  if (cache.size >= CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(hash, { context, expires: now + CACHE_TTL_MS });
}

/**
 * Records when a secret was last used, for the portal. Runs on cache misses only (at most once per
 * secret per cache lifetime) and at most once a minute per secret in the database, off the
 * request's path: a lost update only makes "last used" a little older.
 */
function noteUse(db: Kysely<DB>, secretId: string): void {
  db.updateTable('api_secrets')
    .set({ last_used_at: sql<Date>`now()` })
    .where('id', '=', secretId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
    .execute()
    .catch(() => undefined);
}

/**
 * The secret a request carries, as clients in the wild send it: `Authorization: Bearer <secret>`
 * (the documented form), the header named `Authentication` as some of the spec's tables call it,
 * and one of our secrets (`sk_test_…`/`sk_live_…`) without the scheme. `Authorization` decides
 * when both headers are sent. Undefined when there is no header; null when it holds nothing we read.
 */
export function presentedSecret(headers: FastifyRequest['headers']): string | null | undefined {
  const raw = headers.authorization ?? headers.authentication;
  const header = Array.isArray(raw) ? raw[0] : raw;
  if (!header) return undefined;
  const bearer = BEARER.exec(header)?.[1];
  if (bearer) return bearer;
  const bare = header.trim();
  return parseSecret(bare) ? bare : null;
}

/** Resolves the request's API secret (see presentedSecret) to the organization and the mode, or throws 401/403. */
export async function authenticate(db: Kysely<DB>, headers: FastifyRequest['headers']): Promise<AuthContext> {
  const secret = presentedSecret(headers);
  if (secret === undefined) throw new ApiError('ACCESS_DENIED', 'Missing Authorization header; send "Authorization: Bearer <secret>"');
  if (secret === null) throw new ApiError('ACCESS_DENIED', 'Malformed Authorization header; send "Authorization: Bearer <secret>"');
  const parsed = parseSecret(secret);
  if (!parsed) throw new ApiError('ACCESS_DENIED', 'Invalid API secret');
  const hash = hashSecret(secret);
  const now = Date.now();
  const hit = cached(hash, now);
  if (hit) return hit;
  const row = await db
    .selectFrom('api_secrets as s')
    .innerJoin('organizations as o', 'o.id', 's.org_id')
    .select(['s.id as secretId', 'o.id', 's.mode', 'o.risk_level', 'o.payload_type', 'o.enabled', 'o.rate_limit_per_minute', 'o.consent_required'])
    .where('s.secret_hash', '=', hash)
    .where((eb) => eb.or([eb('s.revoked_at', 'is', null), eb('s.revoked_at', '>', sql<Date>`now()`)]))
    .executeTakeFirst();
  if (!row || row.mode !== parsed.mode) throw new ApiError('ACCESS_DENIED', 'Invalid API secret');
  if (row.mode === 'live' && !row.enabled) {
    throw new ApiError(
      'FORBIDDEN',
      'This account awaits API access: live requests work once an account manager enables it. Test secrets work meanwhile.',
    );
  }
  const context = { orgId: row.id, mode: row.mode, riskLevel: row.risk_level, payloadType: row.payload_type, rateLimitPerMinute: row.rate_limit_per_minute, consentRequired: row.consent_required, secretId: row.secretId };
  remember(hash, context, now);
  noteUse(db, row.secretId);
  return context;
}

/** A hook that authenticates the request and attaches `request.auth`; a refused secret counts against the client's address. */
export function requireAuth(db: Kysely<DB>) {
  return authenticatedBy(async (request: FastifyRequest) => {
    request.auth = await authenticate(db, request.headers);
  });
}
