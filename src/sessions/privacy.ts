import { sql, type Kysely } from 'kysely';
import type { FileStore } from '../files/store.js';
import { forgetSessionPrints, purgeExpiredPrints } from '../identities/liveness/print-store.js';
import type { DB } from '../platform/db/schema.js';
import { consentOf, type Consent } from '../consent/consent.js';
import { renderSession, type SessionRecord } from './render.js';
import { isOpen } from './states.js';
import type { SessionRow } from './tables.js';
import { FRAME_RETENTION_DAYS } from './view.js';

/**
 * Verification sessions' personal data under the data-protection rules (docs/data-protection.md,
 * docs/sessions.md "Data protection"), for the retention job and data-subject requests
 * (src/privacy): the frames (selfies) go after FRAME_RETENTION_DAYS (an organization's shorter
 * photo period wins), an ended session is anonymised after the organization's verification
 * period, and a person's sessions are found by their ID number or phone, exported and erased.
 */

const BATCH = 200;
const SCAN_BATCH = 500;

/** What anonymising leaves of a session's personal columns. */
const BLANK = {
  applicant: JSON.stringify({}),
  metadata: JSON.stringify({}),
  identity: null,
  id_number: null,
  user_consent: null,
  consent_reference: null,
  consent_obtained_at: null,
  consent_channel: null,
};

export interface SessionPrivacyCounts {
  sessions: number;
  frames: number;
  webhookDeliveries: number;
}

/** The stored frames of some sessions: file ids, for the store. */
async function framesOf(db: Kysely<DB>, sessionIds: readonly number[]): Promise<string[]> {
  if (sessionIds.length === 0) return [];
  const rows = await db
    .selectFrom('session_frames as f')
    .innerJoin('session_liveness_attempts as a', 'a.id', 'f.attempt_id')
    .select('f.file_id')
    .where('a.session_id', 'in', [...sessionIds])
    .where('f.file_id', 'is not', null)
    .execute();
  return rows.map((row) => row.file_id!);
}

async function deleteStored(store: FileStore, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 8) await Promise.all(ids.slice(i, i + 8).map((id) => store.delete(id)));
}

/**
 * Blanks the personal columns of the given sessions and of their liveness attempts and deletes
 * their frames (from the store first, then the rows: a crash between leaves rows whose files are
 * gone, which a second run deletes again), the frames' hashes, and the tokens and handoff codes.
 * With `erasure`, an open session ends cancelled (SUBJECT_ERASED, no webhook, no charge) and the
 * webhook deliveries about the sessions are deleted. Sessions already anonymised are skipped.
 */
export async function anonymiseSessions(db: Kysely<DB>, store: FileStore, ids: readonly number[], { now, erasure = false }: { now: Date; erasure?: boolean }): Promise<SessionPrivacyCounts> {
  const counts: SessionPrivacyCounts = { sessions: 0, frames: 0, webhookDeliveries: 0 };
  if (ids.length === 0) return counts;
  const frames = await framesOf(db, ids);
  await deleteStored(store, frames);
  await db.transaction().execute(async (trx) => {
    for (const id of ids) {
      const row = await trx.selectFrom('verification_sessions').select(['status', 'org_id', 'mode', 'public_id']).where('id', '=', id).where('anonymised_at', 'is', null).forUpdate().executeTakeFirst();
      if (!row) continue;
      // The liveness engine's perceptual prints of its frames (no image, but its frames' all the same).
      await forgetSessionPrints(trx, { orgId: row.org_id, mode: row.mode }, row.public_id);
      const end = erasure && isOpen(row.status) ? { status: 'cancelled' as const, cancelled_by: 'erasure' as const, cancelled_at: now, reasons: JSON.stringify(['CANCELLED']) } : {};
      await trx.updateTable('verification_sessions').set({ ...BLANK, ...end, anonymised_at: now }).where('id', '=', id).execute();
      counts.sessions += 1;
    }
    // The ID each attempt's face was compared with is the session's: blanked with it.
    await trx.updateTable('session_liveness_attempts').set({ id_number: null }).where('session_id', 'in', [...ids]).execute();
    const attempts = trx.selectFrom('session_liveness_attempts').select('id').where('session_id', 'in', [...ids]);
    await trx.deleteFrom('session_frames').where('attempt_id', 'in', attempts).execute();
    if (frames.length > 0) counts.frames = Number((await trx.deleteFrom('uploaded_files').where('id', 'in', frames).executeTakeFirst()).numDeletedRows);
    await trx.deleteFrom('session_tokens').where('session_id', 'in', [...ids]).execute();
    await trx.deleteFrom('session_handoffs').where('session_id', 'in', [...ids]).execute();
    if (erasure) {
      const gone = await trx.deleteFrom('webhook_deliveries').where('resource_kind', '=', 'session').where('resource_id', 'in', [...ids]).executeTakeFirst();
      counts.webhookDeliveries = Number(gone.numDeletedRows);
    }
  });
  return counts;
}

/** `<now> - <the organization's days, or the default> days`, for a row joined with its retention_settings as `r`. */
function cutoff(now: Date, column: 'photo_days' | 'verification_days', defaultDays: number, cap?: number) {
  const days = sql`coalesce(${sql.ref(`r.${column}`)}, ${defaultDays}::int)`;
  return sql`(${now}::timestamptz - make_interval(days => ${cap === undefined ? days : sql`least(${days}, ${cap}::int)`}))`;
}

/**
 * The retention job's part for sessions: frames older than their period are deleted (file and
 * row; the frame's hash stays with its attempt, to refuse a replay of it later), and sessions
 * that ended before the organization's verification period are anonymised. Idempotent, batched.
 */
export async function applySessionRetention(
  db: Kysely<DB>,
  store: FileStore,
  { now, verificationDays, batchSize = BATCH, shouldStop }: { now: Date; /** The default verification period (the retention job's). */ verificationDays: number; batchSize?: number; shouldStop?: () => boolean },
): Promise<SessionPrivacyCounts> {
  const counts: SessionPrivacyCounts = { sessions: 0, frames: 0, webhookDeliveries: 0 };
  const stopped = () => shouldStop?.() === true;
  // The engine's frame prints carry their frames' expiry.
  await purgeExpiredPrints(db, now);
  for (;;) {
    const { rows } = await sql<{ file_id: string }>`
      select f.file_id from session_frames f join uploaded_files u on u.id = f.file_id
        left join retention_settings r on r.org_id = u.org_id
       where f.file_id is not null and f.created_at < ${cutoff(now, 'photo_days', FRAME_RETENTION_DAYS, FRAME_RETENTION_DAYS)}
       order by f.created_at limit ${batchSize}`.execute(db);
    const ids = rows.map((row) => row.file_id);
    if (ids.length > 0) {
      await deleteStored(store, ids);
      counts.frames += Number((await db.deleteFrom('uploaded_files').where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
    }
    if (ids.length < batchSize || stopped()) break;
  }
  for (;;) {
    const { rows } = await sql<{ id: number }>`
      select s.id from verification_sessions s left join retention_settings r on r.org_id = s.org_id
       where s.anonymised_at is null and s.status in ('verified', 'failed', 'expired', 'cancelled')
         and coalesce(s.completed_at, s.cancelled_at, s.expired_at) < ${cutoff(now, 'verification_days', verificationDays)}
       order by coalesce(s.completed_at, s.cancelled_at, s.expired_at) limit ${batchSize}`.execute(db);
    const ids = rows.map((row) => Number(row.id));
    const done = await anonymiseSessions(db, store, ids, { now });
    counts.sessions += done.sessions;
    counts.frames += done.frames;
    if (ids.length < batchSize || stopped()) break;
  }
  return counts;
}

/** A session that names the person looked for. */
export interface SessionHit {
  id: number;
  publicId: string;
  orgId: string;
  mode: string;
  reference: string;
  consent: Consent | null;
  record: SessionRecord;
}

export interface SessionSubjectFindings {
  sessions: SessionHit[];
  frames: { id: string; verification: string; contentType: string; size: number; sha256: string; createdAt: Date }[];
  webhookDeliveries: { id: number; orgId: string; mode: string; eventType: string; status: string; createdAt: Date; payload: unknown }[];
}

/**
 * The sessions whose prefilled applicant, ID found or identity record names the person
 * (`matches`: the subject request's identifier matcher), within one organization or all, with
 * their frames and webhook deliveries. The personal columns are encrypted with random IVs, so the
 * sessions are read in batches and compared in memory, as the other verifications are.
 */
export async function findSessionSubjects(db: Kysely<DB>, matches: (value: unknown) => boolean, scope: { orgId?: string | undefined }): Promise<SessionSubjectFindings> {
  const found: SessionSubjectFindings = { sessions: [], frames: [], webhookDeliveries: [] };
  let last = 0;
  for (;;) {
    let query = db.selectFrom('verification_sessions').selectAll().where('id', '>', last).where('anonymised_at', 'is', null).orderBy('id').limit(SCAN_BATCH);
    if (scope.orgId) query = query.where('org_id', '=', scope.orgId);
    const rows: SessionRow[] = await query.execute();
    for (const row of rows) {
      const named = { applicant: row.applicant, identity: row.identity, found: row.id_type && row.id_number ? { idType: row.id_type, idNumber: row.id_number } : null };
      if (!matches(named)) continue;
      found.sessions.push({ id: Number(row.id), publicId: row.public_id, orgId: row.org_id, mode: row.mode, reference: row.reference, consent: consentOf(row), record: renderSession(row) });
    }
    if (rows.length < SCAN_BATCH) break;
    last = Number(rows[rows.length - 1]!.id);
  }
  const ids = found.sessions.map((hit) => hit.id);
  if (ids.length === 0) return found;
  const frames = await db
    .selectFrom('session_frames as f')
    .innerJoin('session_liveness_attempts as a', 'a.id', 'f.attempt_id')
    .innerJoin('uploaded_files as u', 'u.id', 'f.file_id')
    .select(['u.id', 'u.content_type', 'u.size', 'u.sha256', 'u.created_at', 'a.session_id'])
    .where('a.session_id', 'in', ids)
    .orderBy('a.session_id')
    .orderBy('f.attempt_id')
    .orderBy('f.position')
    .execute();
  const publicIds = new Map(found.sessions.map((hit) => [hit.id, hit.publicId]));
  for (const frame of frames) {
    found.frames.push({ id: frame.id, verification: `session/${publicIds.get(Number(frame.session_id))}`, contentType: frame.content_type, size: frame.size, sha256: frame.sha256, createdAt: frame.created_at });
  }
  const deliveries = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'org_id', 'mode', 'event_type', 'status', 'created_at', 'payload'])
    .where('resource_kind', '=', 'session')
    .where('resource_id', 'in', ids)
    .orderBy('id')
    .execute();
  for (const d of deliveries) found.webhookDeliveries.push({ id: Number(d.id), orgId: d.org_id, mode: d.mode, eventType: d.event_type, status: d.status, createdAt: d.created_at, payload: d.payload });
  return found;
}
