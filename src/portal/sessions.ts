import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { Role } from './tables.js';

/** The cookie that carries a portal session; httpOnly, SameSite=Lax, Secure behind https. */
export const SESSION_COOKIE = 'vouch_session';

/** A session lasts this long after sign-in, whatever the activity. */
export const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** `last_seen_at` is written at most this often per session, not on every request. */
const SEEN_RESOLUTION_MS = 60_000;

/** Hosts a plain-http public URL may name and still get a cookie without Secure: this machine only. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The session cookie's attributes: httpOnly, SameSite=Lax, and Secure unless the public URL is
 * plain http on this machine (a development setup). A plain-http URL of any other host still gets
 * Secure: the browser then keeps no session over http, rather than sending it in the clear.
 */
export function sessionCookie(publicUrl: string) {
  const url = new URL(publicUrl);
  const secure = !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  return { httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: SESSION_LIFETIME_MS / 1000 } as const;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** 32 random bytes, base64url: for session cookies and mailed single-use links. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export interface SessionPerson {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  totpEnabled: boolean;
  operator: boolean;
}

export interface LoadedSession {
  sessionId: string;
  pendingTotp: boolean;
  person: SessionPerson;
}

export interface NewSession {
  personId: string;
  pendingTotp?: boolean;
  userAgent?: string | undefined;
  ip?: string | undefined;
  now?: Date;
  /** Shorter than SESSION_LIFETIME_MS for a session that still owes its TOTP code. */
  lifetimeMs?: number;
}

/** Starts a session and returns the cookie's token; only its hash is stored. */
export async function createSession(db: Kysely<DB>, input: NewSession): Promise<{ id: string; token: string; expiresAt: Date }> {
  const token = newToken();
  const now = input.now ?? new Date();
  const expiresAt = new Date(now.getTime() + (input.lifetimeMs ?? SESSION_LIFETIME_MS));
  const id = randomUUID();
  await db
    .insertInto('portal_sessions')
    .values({
      id,
      person_id: input.personId,
      token_hash: hashToken(token),
      pending_totp: input.pendingTotp ?? false,
      user_agent: input.userAgent?.slice(0, 300) ?? null,
      ip: input.ip ?? null,
      created_at: now,
      last_seen_at: now,
      expires_at: expiresAt,
    })
    .execute();
  return { id, token, expiresAt };
}

/** The live session of a cookie token, or undefined when it is unknown, expired or revoked. */
export async function loadSession(db: Kysely<DB>, token: string): Promise<LoadedSession | undefined> {
  return (await loadSessionIn(db, token, undefined))?.session;
}

/**
 * The live session of a cookie token and the person's role in `orgId` (null when not a member), in
 * one query: the portal's lists, read on every page, check both (guard.ts requireMemberSession).
 */
export async function loadSessionIn(db: Kysely<DB>, token: string, orgId: string | undefined): Promise<{ session: LoadedSession; role: Role | null } | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const query = db
    .selectFrom('portal_sessions as s')
    .innerJoin('people as p', 'p.id', 's.person_id')
    .select([
      's.id as sessionId',
      's.pending_totp',
      's.last_seen_at',
      'p.id',
      'p.email',
      'p.name',
      'p.email_verified_at',
      'p.totp_enabled_at',
      'p.operator_role',
    ])
    .where('s.token_hash', '=', hashToken(token))
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', sql<Date>`now()`);
  const row = await (orgId === undefined
    ? query.select(sql<Role | null>`null`.as('role'))
    : query.leftJoin('memberships as m', (join) => join.onRef('m.person_id', '=', 'p.id').on('m.org_id', '=', orgId)).select('m.role as role')
  ).executeTakeFirst();
  if (!row) return undefined;
  if (Date.now() - row.last_seen_at.getTime() > SEEN_RESOLUTION_MS) {
    await db.updateTable('portal_sessions').set({ last_seen_at: sql<Date>`now()` }).where('id', '=', row.sessionId).execute();
  }
  return {
    session: {
      sessionId: row.sessionId,
      pendingTotp: row.pending_totp,
      person: {
        id: row.id,
        email: row.email,
        name: row.name,
        emailVerified: row.email_verified_at !== null,
        totpEnabled: row.totp_enabled_at !== null,
        operator: row.operator_role === 'operator',
      },
    },
    role: row.role ?? null,
  };
}

/** Ends one session of a person (sign-out, or "revoke" on the sessions page). */
export async function revokeSession(db: Kysely<DB>, personId: string, sessionId: string): Promise<boolean> {
  const result = await db
    .updateTable('portal_sessions')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .where('person_id', '=', personId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends every session of a person but one (after a password change or reset, all of them). */
export async function revokeOtherSessions(db: Kysely<DB>, personId: string, keepSessionId?: string): Promise<void> {
  let query = db
    .updateTable('portal_sessions')
    .set({ revoked_at: sql<Date>`now()` })
    .where('person_id', '=', personId)
    .where('revoked_at', 'is', null);
  if (keepSessionId) query = query.where('id', '!=', keepSessionId);
  await query.execute();
}
