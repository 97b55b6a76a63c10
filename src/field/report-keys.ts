import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Photo } from '../agents/report.js';
import type { FieldTaskKind } from '../agents/tables.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { IDEMPOTENCY_HEADER } from '../platform/idempotency.js';
import './tables.js';

/**
 * Exactly-once visit reports from the field app. The phone makes a key for each report it files
 * (and keeps it with the report while it waits for a connection); the first report accepted under
 * a key is stored with its answer in the report's own transaction, so a resend — the phone did not
 * hear the answer, or came back online twice — gets that answer again and files, charges and
 * notifies nothing. The same key with another report (other fields, photos or task) is 422.
 * Keys are the agent's own; the platform's Idempotency-Key store (per organization, 24 hours) does
 * not fit a phone that may stay offline for days, so these live until `KEEP_DAYS` after use.
 */

export const KEEP_DAYS = 90;

const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key; required: a report without one could be filed twice. */
export function reportKeyOf(request: FastifyRequest): string {
  const raw = request.headers[IDEMPOTENCY_HEADER];
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (values.length === 0) throw new ApiError('BAD_REQUEST', 'Send an Idempotency-Key header (a new UUID for each report) so that a resent report is filed once');
  if (values.length !== 1 || !KEY_FORMAT.test(values[0]!)) {
    throw new ApiError('BAD_REQUEST', 'Idempotency-Key must be one value of 1 to 255 printable characters without spaces, such as a UUID');
  }
  return values[0]!;
}

/** What makes two reports the same: the task, the fields (in any order) and each photo's bytes. */
export function reportFingerprint(kind: FieldTaskKind, id: string, fields: Record<string, unknown>, photos: readonly Photo[]): string {
  const hash = createHash('sha256').update(`${kind}/${Number(id)}\n`);
  for (const name of Object.keys(fields).sort()) hash.update(JSON.stringify([name, fields[name]])).update('\n');
  for (const photo of photos) hash.update(createHash('sha256').update(photo.bytes).digest()).update('\n');
  return hash.digest('base64url');
}

export interface ReportKeyRow {
  fingerprint: string;
  response: unknown;
}

export async function findReportKey(db: Kysely<DB>, agentId: string, key: string): Promise<ReportKeyRow | undefined> {
  return db.selectFrom('field_report_keys').select(['fingerprint', 'response']).where('agent_id', '=', agentId).where('key', '=', key).executeTakeFirst();
}

/** The earlier answer to send again, or 422 when the key was used for another report. */
export function replayOf<T>(row: ReportKeyRow, fingerprint: string): T {
  if (row.fingerprint !== fingerprint) {
    throw new ApiError('UNPROCESSABLE', 'This Idempotency-Key was already used for a different report; a new report needs a new key');
  }
  return row.response as T;
}

/**
 * Keeps the key with the answer, inside the report's transaction (a concurrent report with the
 * same key fails its insert, rolls back, and is answered from this row); forgets the agent's keys
 * older than KEEP_DAYS on the way.
 */
export async function saveReportKey(
  trx: Transaction<DB>,
  entry: { agentId: string; key: string; fingerprint: string; kind: FieldTaskKind; verificationId: number; response: unknown },
): Promise<void> {
  await trx
    .deleteFrom('field_report_keys')
    .where('agent_id', '=', entry.agentId)
    .where('created_at', '<', sql<Date>`now() - ${`${KEEP_DAYS} days`}::interval`)
    .execute();
  await trx
    .insertInto('field_report_keys')
    .values({
      agent_id: entry.agentId,
      key: entry.key,
      fingerprint: entry.fingerprint,
      kind: entry.kind,
      verification_id: entry.verificationId,
      response: JSON.stringify(entry.response),
    })
    .execute();
}
