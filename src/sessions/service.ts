import type { PageViewer } from '../access-log/service.js';
import type { Kysely, Transaction } from 'kysely';
import { consentColumns } from '../consent/consent.js';
import { coversPrice, recordUsage } from '../platform/billing.js';
import { organizationScreening } from '../screening/organization-setting.js';
import type { DB, RiskLevel } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { nextSequence, type Page, type Scope } from '../platform/pagination.js';
import { SESSION_BILLABLES } from './billing.js';
import { checkCreateSession, type CreateSessionInput } from './input.js';
import { renderSession, type SessionRecord } from './render.js';
import { findSession, lockSession, lockSessionById, pageSessions, referenceTaken, SESSION_SEQUENCE } from './repository.js';
import { isOpen } from './states.js';
import { hashToken, randomClientSecret, randomSessionId, randomUrlToken, type TokenGenerator } from './tokens.js';
import { applySessionTransition } from './transition.js';
import type { SessionRow } from './tables.js';

/**
 * Verification sessions as the customer's backend sees them (POST/GET/list/DELETE
 * /v1/verifications/sessions) and the expiry sweep. The end user's side is in flow.ts.
 */

export interface SessionGenerators {
  sessionId: TokenGenerator;
  urlToken: TokenGenerator;
  clientSecret: TokenGenerator;
}

export const RANDOM_GENERATORS: SessionGenerators = { sessionId: randomSessionId, urlToken: randomUrlToken, clientSecret: randomClientSecret };

export const sessionNotFound = () => new ApiError('NOT_FOUND_ERROR', 'Verification session not found');

export function paymentRequired(): ApiError {
  return new ApiError('PAYMENT_REQUIRED', 'Insufficient balance: the wallet must hold the session price before a live session can be created');
}

function duplicate(reference: string): ApiError {
  return new ApiError('CONFLICT', `A verification session with reference "${reference}" already exists`);
}

/** The hosted page of a token: where the end user goes. */
export function hostedUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/verify/${token}`;
}

/** The organization's default redirect (set in the portal: docs/sessions.md, "Branding"), for a session created without one. */
async function defaultRedirectUrl(db: Kysely<DB>, orgId: string): Promise<string | null> {
  const row = await db.selectFrom('organization_branding').select('default_redirect_url').where('org_id', '=', orgId).executeTakeFirst();
  return row?.default_redirect_url ?? null;
}

export interface Caller extends Scope {
  riskLevel: RiskLevel;
  consentRequired: boolean;
}

/**
 * Creates a session and its two tokens (only their hashes are stored; the answer is the one time
 * they exist in clear). A live wallet that cannot cover the session price now is refused with 402
 * and a usage row (nothing is charged at creation; the price is charged with the session's first
 * ID lookup, src/sessions/payment.ts).
 */
export async function createSession(
  db: Kysely<DB>,
  caller: Caller,
  input: CreateSessionInput,
  options: { publicUrl: string; now?: Date; generators?: SessionGenerators; inTransaction?: (trx: Transaction<DB>, record: SessionRecord) => Promise<void> },
): Promise<SessionRecord> {
  const now = options.now ?? new Date();
  const scope: Scope = { orgId: caller.orgId, mode: caller.mode };
  const checked = checkCreateSession(input, { riskLevel: caller.riskLevel, consentRequired: caller.consentRequired, now });
  // Screening: as the session asks, else as the organization asks of every session (off by default).
  const screening = checked.screening ?? (await organizationScreening(db, scope.orgId)).sessions;
  if (!(await coversPrice(db, { ...scope, billable: SESSION_BILLABLES.session }))) {
    await recordUsage(db, { ...scope, billable: SESSION_BILLABLES.session, subject: 'create' }, 'insufficient_funds');
    throw paymentRequired();
  }
  const generators = options.generators ?? RANDOM_GENERATORS;
  const urlToken = generators.urlToken();
  const clientSecret = generators.clientSecret();
  return db.transaction().execute(async (trx) => {
    if (await referenceTaken(trx, scope, checked.reference)) throw duplicate(checked.reference);
    const redirectUrl = checked.redirectUrl ?? (await defaultRedirectUrl(trx, scope.orgId));
    const seq = await nextSequence(trx, scope, SESSION_SEQUENCE);
    let row: SessionRow;
    try {
      row = await trx
        .insertInto('verification_sessions')
        .values({
          public_id: generators.sessionId(),
          org_id: scope.orgId,
          mode: scope.mode,
          seq,
          reference: checked.reference,
          id_types: JSON.stringify(checked.idTypes),
          applicant: JSON.stringify(checked.applicant),
          metadata: JSON.stringify(checked.metadata),
          check_liveness: checked.liveness,
          check_face_match: checked.faceMatch,
          check_screening: screening,
          redirect_url: redirectUrl,
          ...consentColumns(checked.consent),
          created_at: now,
          expires_at: new Date(now.getTime() + checked.expiresInMinutes * 60_000),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw duplicate(checked.reference);
      throw err;
    }
    await trx
      .insertInto('session_tokens')
      .values([
        { token_hash: hashToken(urlToken), session_id: Number(row.id), kind: 'url', created_at: now },
        { token_hash: hashToken(clientSecret), session_id: Number(row.id), kind: 'client_secret', created_at: now },
      ])
      .execute();
    const record = renderSession(row, { url: hostedUrl(options.publicUrl, urlToken), clientSecret });
    await options.inTransaction?.(trx, record);
    return record;
  });
}

export async function getSession(db: Kysely<DB>, scope: Scope, publicId: string): Promise<SessionRecord> {
  const row = await findSession(db, scope, publicId);
  if (!row) throw sessionNotFound();
  return renderSession(row);
}

/** A page of the scope's sessions; with a `viewer`, its sessions are logged as shown to them (src/access-log). */
export async function listSessions(db: Kysely<DB>, scope: Scope, page: Page, viewer?: PageViewer): Promise<{ records: SessionRecord[]; total: number }> {
  const { rows, total } = await pageSessions(db, scope, page, viewer);
  return { records: rows.map((row) => renderSession(row)), total };
}

function alreadyEnded(row: SessionRow): ApiError {
  return new ApiError('CONFLICT', `This verification session has already ended (${row.status}) and cannot be cancelled`);
}

/**
 * The customer's DELETE (and the portal's Cancel session): an open session ends cancelled (no
 * webhook; nothing more is charged: a session that looked an ID up paid then); 409 once it has ended. `inTransaction` runs in
 * the cancellation's own transaction (the portal's audit row), with the row as it was before.
 */
export async function cancelSession(
  db: Kysely<DB>,
  scope: Scope,
  publicId: string,
  options: { now?: Date; inTransaction?: (trx: Transaction<DB>, before: SessionRow) => Promise<void> } = {},
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await lockSession(trx, scope, publicId);
    if (!row) throw sessionNotFound();
    if (!isOpen(row.status)) throw alreadyEnded(row);
    await applySessionTransition(trx, row, { to: 'cancelled', reasons: ['CANCELLED'], cancelledBy: 'customer', now: options.now ?? new Date() });
    await options.inTransaction?.(trx, row);
  });
}

/**
 * Ends, as expired, up to `batch` open sessions past their expiry; returns how many. Rows another
 * worker holds are skipped. session.expired is sent; one whose ID was found before sessions paid at their lookup is charged.
 */
export async function expireDueSessions(db: Kysely<DB>, now: Date, batch = 100): Promise<number> {
  const due = await db
    .selectFrom('verification_sessions')
    .select('id')
    .where('status', 'in', ['created', 'in_progress'])
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(batch)
    .execute();
  let done = 0;
  for (const candidate of due) {
    const ended = await db.transaction().execute(async (trx) => {
      const row = await lockSessionById(trx, Number(candidate.id), { skipLocked: true });
      if (!row || !isOpen(row.status) || row.expires_at > now) return false;
      await applySessionTransition(trx, row, { to: 'expired', reasons: ['EXPIRED'], now });
      return true;
    });
    if (ended) done++;
  }
  // Handoff codes past their 15 minutes are of no use to anyone.
  await db.deleteFrom('session_handoffs').where('expires_at', '<=', now).execute();
  return done;
}
