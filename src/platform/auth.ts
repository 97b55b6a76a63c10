import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB, Mode, PayloadType, RiskLevel } from './db/schema.js';
import { ApiError } from './errors.js';
import { hashSecret, parseSecret } from './secrets.js';

export interface AuthContext {
  orgId: string;
  mode: Mode;
  riskLevel: RiskLevel;
  payloadType: PayloadType;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Resolves `Authorization: Bearer <secret>` to the organization and the mode, or throws 401/403. */
export async function authenticate(db: Kysely<DB>, header: string | undefined): Promise<AuthContext> {
  if (!header) throw new ApiError('ACCESS_DENIED', 'Missing Authorization header; send "Authorization: Bearer <secret>"');
  const secret = BEARER.exec(header)?.[1];
  if (!secret) throw new ApiError('ACCESS_DENIED', 'Malformed Authorization header; send "Authorization: Bearer <secret>"');
  const parsed = parseSecret(secret);
  if (!parsed) throw new ApiError('ACCESS_DENIED', 'Invalid API secret');
  const row = await db
    .selectFrom('api_secrets as s')
    .innerJoin('organizations as o', 'o.id', 's.org_id')
    .select(['o.id', 's.mode', 'o.risk_level', 'o.payload_type', 'o.enabled'])
    .where('s.secret_hash', '=', hashSecret(secret))
    .where('s.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row || row.mode !== parsed.mode) throw new ApiError('ACCESS_DENIED', 'Invalid API secret');
  if (row.mode === 'live' && !row.enabled) {
    throw new ApiError(
      'FORBIDDEN',
      'This account awaits API access: live requests work once an account manager enables it. Test secrets work meanwhile.',
    );
  }
  return { orgId: row.id, mode: row.mode, riskLevel: row.risk_level, payloadType: row.payload_type };
}

/** A preHandler that authenticates the request and attaches `request.auth`. */
export function requireAuth(db: Kysely<DB>) {
  return async (request: FastifyRequest): Promise<void> => {
    request.auth = await authenticate(db, request.headers.authorization);
  };
}
