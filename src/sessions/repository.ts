import type { PageViewer } from '../access-log/service.js';
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { pageBySequence, type Page, type Scope } from '../platform/pagination.js';
import { SESSION_ID } from './tokens.js';
import type { SessionRow, VerificationSessionsTable } from './tables.js';

/** The `sequences` kind that numbers an organization's sessions per mode (the list). */
export const SESSION_SEQUENCE = 'session';

/** A session of the scope by its public id; another organization's or mode's is not there. */
export async function findSession(db: Kysely<DB>, scope: Scope, publicId: string): Promise<SessionRow | undefined> {
  if (!SESSION_ID.test(publicId)) return undefined;
  return db
    .selectFrom('verification_sessions')
    .selectAll()
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('public_id', '=', publicId)
    .executeTakeFirst();
}

/** The same, locked until the transaction ends: every change of a session starts here. */
export async function lockSession(trx: Transaction<DB>, scope: Scope, publicId: string): Promise<SessionRow | undefined> {
  if (!SESSION_ID.test(publicId)) return undefined;
  return trx
    .selectFrom('verification_sessions')
    .selectAll()
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('public_id', '=', publicId)
    .forUpdate()
    .executeTakeFirst();
}

/** A session by internal id, locked (the end-user API, whose token already named it; the sweep). */
export async function lockSessionById(trx: Transaction<DB>, id: number, options: { skipLocked?: boolean } = {}): Promise<SessionRow | undefined> {
  let query = trx.selectFrom('verification_sessions').selectAll().where('id', '=', id).forUpdate();
  if (options.skipLocked) query = query.skipLocked();
  return query.executeTakeFirst();
}

export async function findSessionById(db: Kysely<DB>, id: number): Promise<SessionRow | undefined> {
  return db.selectFrom('verification_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateSession(trx: Kysely<DB>, id: number, patch: Updateable<VerificationSessionsTable>): Promise<SessionRow> {
  return trx.updateTable('verification_sessions').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function referenceTaken(db: Kysely<DB>, scope: Scope, reference: string): Promise<boolean> {
  const row = await db
    .selectFrom('verification_sessions')
    .select('id')
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('reference', '=', reference)
    .executeTakeFirst();
  return row !== undefined;
}

/** A page of the scope's sessions, newest first; with a `viewer`, logged (by public id) in the statement that reads it. */
export async function pageSessions(db: Kysely<DB>, scope: Scope, page: Page, viewer?: PageViewer): Promise<{ rows: SessionRow[]; total: number }> {
  return pageBySequence<SessionRow>(db, { table: 'verification_sessions', kind: SESSION_SEQUENCE, loggedId: 'public_id' }, scope, page, viewer);
}

/** The session a token (already hashed) opens, and which kind of token it is. */
export async function sessionByTokenHash(db: Kysely<DB>, tokenHash: string): Promise<{ row: SessionRow; kind: string } | undefined> {
  const token = await db.selectFrom('session_tokens').select(['session_id', 'kind']).where('token_hash', '=', tokenHash).executeTakeFirst();
  if (!token) return undefined;
  const row = await findSessionById(db, Number(token.session_id));
  return row ? { row, kind: token.kind } : undefined;
}
