import type { Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { Scope } from '../platform/pagination.js';
import { findSession } from './repository.js';
import type { AttemptRow, SessionRow } from './tables.js';

/**
 * Read-only queries for the portal's verifications explorer (src/portal/verifications/sessions.ts):
 * a session of the scope with its liveness attempts and their frames, and one frame's stored file.
 * Nothing here changes a session.
 */

export interface FrameEntry {
  attemptId: string;
  position: number;
  atMs: number;
  /** False once retention (or an erasure) deleted the file: only its hash is left. */
  stored: boolean;
  createdAt: Date;
}

export interface SessionSteps {
  row: SessionRow;
  attempts: AttemptRow[];
  frames: FrameEntry[];
}

/** A session of the scope by its public id, with its attempts (oldest first) and their frames (in order). */
export async function sessionWithSteps(db: Kysely<DB>, scope: Scope, publicId: string): Promise<SessionSteps | undefined> {
  const row = await findSession(db, scope, publicId);
  if (!row) return undefined;
  const attempts = await db.selectFrom('session_liveness_attempts').selectAll().where('session_id', '=', row.id).orderBy('number').execute();
  const frames =
    attempts.length === 0
      ? []
      : await db
          .selectFrom('session_frames')
          .select(['attempt_id', 'position', 'at_ms', 'file_id', 'created_at'])
          .where(
            'attempt_id',
            'in',
            attempts.map((attempt) => attempt.id),
          )
          .orderBy('attempt_id')
          .orderBy('position')
          .execute();
  return {
    row,
    attempts,
    frames: frames.map((frame) => ({ attemptId: frame.attempt_id, position: frame.position, atMs: frame.at_ms, stored: frame.file_id !== null, createdAt: frame.created_at })),
  };
}

/**
 * The stored file of one frame: attempt `number` of the scope's session `publicId`, at `position`.
 * Undefined when there is no such session, attempt or frame, or when its file was deleted.
 */
export async function frameFileOf(db: Kysely<DB>, scope: Scope, publicId: string, attemptNumber: number, position: number): Promise<{ sessionId: number; fileId: string } | undefined> {
  const row = await db
    .selectFrom('verification_sessions as s')
    .innerJoin('session_liveness_attempts as a', 'a.session_id', 's.id')
    .innerJoin('session_frames as f', 'f.attempt_id', 'a.id')
    .select(['s.id', 'f.file_id'])
    .where('s.org_id', '=', scope.orgId)
    .where('s.mode', '=', scope.mode)
    .where('s.public_id', '=', publicId)
    .where('a.number', '=', attemptNumber)
    .where('f.position', '=', position)
    .executeTakeFirst();
  return row?.file_id ? { sessionId: Number(row.id), fileId: row.file_id } : undefined;
}
