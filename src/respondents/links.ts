import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { Scope } from '../platform/pagination.js';
import type { RespondentKind } from './tables.js';

/** How long a respondent's link works: a week gives a guarantor or an HR desk time to answer. */
export const LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** ID numbers the registry does not know before the link closes (typos are forgiven; probing is not). */
export const MAX_FAILED_ATTEMPTS = 3;

/** 32 random bytes, base64url: 43 characters. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export type TokenGenerator = () => string;

export const randomToken: TokenGenerator = () => randomBytes(32).toString('base64url');

/** Only this hash is stored: a database reader cannot answer for a respondent. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface RespondentLink {
  tokenHash: string;
  kind: RespondentKind;
  scope: Scope;
  verificationId: number;
  expiresAt: Date;
  usedAt: Date | null;
  failedAttempts: number;
}

export type LinkLookup =
  | { status: 'unknown' }
  | { status: 'used' | 'expired' | 'open'; link: RespondentLink };

export interface IssueLinkInput {
  kind: RespondentKind;
  scope: Scope;
  verificationId: number;
  now: Date;
}

/** Stores a new link for the verification and returns its token (the only time it exists in clear). */
export async function issueLink(trx: Transaction<DB>, input: IssueLinkInput, newToken: TokenGenerator = randomToken) {
  const token = newToken();
  const expiresAt = new Date(input.now.getTime() + LINK_TTL_MS);
  await trx
    .insertInto('respondent_links')
    .values({
      token_hash: hashToken(token),
      kind: input.kind,
      org_id: input.scope.orgId,
      mode: input.scope.mode,
      verification_id: input.verificationId,
      expires_at: expiresAt,
      created_at: input.now,
    })
    .execute();
  return { token, expiresAt };
}

export async function findLink(db: Kysely<DB>, token: string, now: Date): Promise<LinkLookup> {
  if (!TOKEN.test(token)) return { status: 'unknown' };
  const row = await db.selectFrom('respondent_links').selectAll().where('token_hash', '=', hashToken(token)).executeTakeFirst();
  if (!row) return { status: 'unknown' };
  const link: RespondentLink = {
    tokenHash: row.token_hash,
    kind: row.kind,
    scope: { orgId: row.org_id, mode: row.mode },
    verificationId: Number(row.verification_id),
    expiresAt: row.expires_at,
    usedAt: row.used_at,
    failedAttempts: row.failed_attempts,
  };
  if (row.used_at) return { status: 'used', link };
  if (row.expires_at.getTime() <= now.getTime()) return { status: 'expired', link };
  return { status: 'open', link };
}

/**
 * Marks the link used, in the transaction that records the answer. False when another answer
 * got there first or the link expired meanwhile: the caller rolls back and says so.
 */
export async function consumeLink(trx: Transaction<DB>, tokenHash: string, now: Date): Promise<boolean> {
  const row = await trx
    .updateTable('respondent_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('token_hash')
    .executeTakeFirst();
  return row !== undefined;
}

/** Closes every open link of a verification that was completed without its respondent (test helpers). */
export async function closeLinks(trx: Transaction<DB>, kind: RespondentKind, scope: Scope, verificationId: number, now: Date) {
  await trx
    .updateTable('respondent_links')
    .set({ used_at: now })
    .where('kind', '=', kind)
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('verification_id', '=', verificationId)
    .where('used_at', 'is', null)
    .execute();
}

/** Counts an ID number the registry did not know; returns the count so far. */
export async function recordFailedAttempt(db: Kysely<DB>, tokenHash: string): Promise<number> {
  const row = await db
    .updateTable('respondent_links')
    .set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1) }))
    .where('token_hash', '=', tokenHash)
    .returning('failed_attempts')
    .executeTakeFirstOrThrow();
  return row.failed_attempts;
}
