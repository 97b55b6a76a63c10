import { sql, type Kysely } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { DB, Mode, WebhookDeliveryStatus } from '../platform/db/schema.js';
import type { AttemptResult, ClaimedDelivery } from './delivery.js';
import { DELIVERY_CHANNEL } from './events.js';

/**
 * Attempt n (1-based) that fails waits RETRY_SCHEDULE_MS[n - 1] (±20 % jitter) before the next;
 * a failure after the last entry is final. 12 attempts spread over about 71 hours.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 86_400_000,
];

interface ClaimRow {
  id: number;
  message_id: string;
  org_id: string;
  mode: Mode;
  attempts: number;
  body: string;
  url: string | null;
  secret: string | null;
  previous_secret: string | null;
}

/**
 * Leases up to `limit` due deliveries and counts the attempt. SKIP LOCKED keeps concurrent
 * workers off each other's rows; the lease (locked_until) keeps them off a row while it is being
 * sent, and runs out if its worker dies, so another worker sends it again with the same id.
 */
export async function claimDeliveries(db: Kysely<DB>, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimRow>`
    with claimed as (
      update webhook_deliveries d
         set locked_until = now() + ${leaseMs} * interval '1 millisecond', attempts = d.attempts + 1
       where d.id in (
         select id from webhook_deliveries
          where status = 'pending' and next_attempt_at <= now() and (locked_until is null or locked_until < now())
          order by next_attempt_at
          limit ${limit}
          for update skip locked)
      returning d.id, d.message_id, d.org_id, d.mode, d.attempts, d.payload::text as body
    )
    select c.*, e.url, e.secret,
           case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret
      from claimed c
      left join webhook_endpoints e on e.org_id = c.org_id and e.mode = c.mode`.execute(db);
  return rows.map((row) => ({
    id: Number(row.id),
    messageId: row.message_id,
    orgId: row.org_id,
    mode: row.mode,
    attempt: row.attempts,
    body: row.body,
    url: row.url,
    secrets: [row.secret, row.previous_secret].filter((secret): secret is string => !!secret),
  }));
}

/** Voids every lease: only for a database no other worker can be using. */
export async function releaseLeases(db: Kysely<DB>): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ locked_until: null }).where('status', '=', 'pending').where('locked_until', 'is not', null).execute();
}

/**
 * Writes a batch of attempt outcomes in one statement: the attempt log rows, and each delivery's
 * new state (delivered, failed for good, or pending until its next attempt). A result whose claim
 * is no longer current (its lease ran out and another worker took the row, or an operator asked
 * for a redelivery meanwhile) is logged but leaves the delivery alone.
 */
export async function recordResults(db: Kysely<DB>, results: readonly AttemptResult[], retrySchedule: readonly number[]): Promise<void> {
  if (results.length === 0) return;
  const rows = results.map((result) => {
    const { delivery } = result;
    const final = result.delivered || delivery.attempt > retrySchedule.length;
    const delayMs = final ? 0 : Math.round(jitter(retrySchedule[delivery.attempt - 1]!));
    return {
      id: delivery.id,
      attempt: delivery.attempt,
      status: result.delivered ? 'delivered' : final ? 'failed' : 'pending',
      status_code: result.statusCode,
      error: result.error,
      attempted_at: result.attemptedAt.toISOString(),
      finished_at: new Date(result.attemptedAt.getTime() + result.latencyMs).toISOString(),
      latency_ms: result.latencyMs,
      delay_ms: delayMs,
    };
  });
  await sql`
    with r as (
      select * from json_to_recordset(${JSON.stringify(rows)}::json)
        as r(id bigint, attempt integer, status text, status_code integer, error text,
             attempted_at timestamptz, finished_at timestamptz, latency_ms integer, delay_ms integer)
    ),
    logged as (
      insert into webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error)
      -- A delivery deleted meanwhile (with its organization) has nothing to log against.
      select r.id, r.attempted_at, r.status_code, r.latency_ms, r.error from r where exists (select 1 from webhook_deliveries x where x.id = r.id)
    )
    update webhook_deliveries d
       set status = r.status,
           locked_until = null,
           last_status_code = r.status_code,
           last_error = r.error,
           next_attempt_at = case when r.status = 'pending' then now() + r.delay_ms * interval '1 millisecond' else d.next_attempt_at end,
           delivered_at = case when r.status = 'delivered' then r.finished_at else d.delivered_at end
      from r
     where d.id = r.id and d.attempts = r.attempt and d.status = 'pending'`.execute(db);
}

/** ±20 %, so deliveries that failed together (a receiver outage) do not all come back together. */
function jitter(ms: number): number {
  return ms * (0.8 + Math.random() * 0.4);
}

export interface AttemptView {
  attemptedAt: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

/** A delivery as operators see it, with its attempt log (oldest first). */
export interface DeliveryView {
  id: number;
  /** The `webhook-id` header, the same on every attempt. */
  webhookId: string;
  orgId: string;
  mode: Mode;
  type: string;
  status: WebhookDeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  attempts: AttemptView[];
}

export interface DeliveryFilter {
  orgId: string;
  /** Both modes when absent. */
  mode?: Mode;
  status?: WebhookDeliveryStatus;
  /** Newest first, at most this many. */
  limit: number;
}

export async function listDeliveries(db: Kysely<DB>, filter: DeliveryFilter): Promise<DeliveryView[]> {
  let query = withAttempts(db).where('d.org_id', '=', filter.orgId);
  if (filter.mode) query = query.where('d.mode', '=', filter.mode);
  if (filter.status) query = query.where('d.status', '=', filter.status);
  const rows = await query.orderBy('d.id', 'desc').limit(filter.limit).execute();
  return rows.map(toView);
}

export async function getDelivery(db: Kysely<DB>, id: number): Promise<DeliveryView | undefined> {
  const row = await withAttempts(db).where('d.id', '=', id).executeTakeFirst();
  return row && toView(row);
}

/**
 * Sends a delivery again, whatever its state: pending now, with a fresh retry schedule and the
 * same webhook-id. The attempt log keeps every earlier attempt. A delivery being attempted right
 * now keeps its lease: that attempt is logged but no longer decides the state, and the delivery
 * is sent again when the lease runs out (at most 30 s), never twice at once.
 */
export async function redeliver(db: Kysely<DB>, id: number): Promise<DeliveryView | undefined> {
  const updated = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: sql<Date>`now()`, delivered_at: null })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  if (!updated) return undefined;
  await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
  return getDelivery(db, id);
}

/** Deliveries with their attempt logs, in one statement so the two agree (a worker may be writing both). */
function withAttempts(db: Kysely<DB>) {
  return db
    .selectFrom('webhook_deliveries as d')
    .selectAll('d')
    .select((eb) =>
      jsonArrayFrom(
        eb
          .selectFrom('webhook_attempts as a')
          .select(['a.attempted_at', 'a.status_code', 'a.latency_ms', 'a.error'])
          .whereRef('a.delivery_id', '=', 'd.id')
          .orderBy('a.id'),
      ).as('log'),
    );
}

type DeliveryRow = Awaited<ReturnType<ReturnType<typeof withAttempts>['executeTakeFirstOrThrow']>>;

function toView(row: DeliveryRow): DeliveryView {
  const attempts = row.log.map((attempt) => ({
    // Inside JSON a timestamp arrives as text; normalise it like every other time here.
    attemptedAt: new Date(attempt.attempted_at).toISOString(),
    statusCode: attempt.status_code,
    latencyMs: attempt.latency_ms,
    error: attempt.error,
  }));
  return {
    id: Number(row.id),
    webhookId: row.message_id,
    orgId: row.org_id,
    mode: row.mode,
    type: row.event_type,
    status: row.status,
    attemptCount: attempts.length,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
    deliveredAt: row.delivered_at?.toISOString() ?? null,
    attempts,
  };
}
