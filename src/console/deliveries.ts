import { sql, type Kysely } from 'kysely';
import type { DB, Mode, WebhookDeliveryStatus } from '../platform/db/schema.js';
import { redactText } from '../platform/logging.js';
import { endpointLabel } from '../platform/metrics.js';
import { maskedBodiesOf } from '../portal/webhooks/masking.js';

/** One organization's webhook queue in one mode: what waits, what retries, what failed for good. */
export interface BacklogRow {
  orgId: string;
  orgName: string;
  mode: Mode;
  /** Pending, not attempted yet (new, held by an open breaker, or resent). */
  waiting: number;
  /** Pending after at least one failed attempt (or one in flight now). */
  retrying: number;
  /** Failed for good: every retry used. Kept until retention removes them, or resent. */
  failed: number;
  /** When the oldest pending delivery was made; null when none is pending. */
  oldestPendingAt: string | null;
  /** The latest failure for good (when its last attempt was due); null when none. */
  lastFailedAt: string | null;
  /** The endpoint's origin (scheme, host, port: a path may carry the customer's token); null when no URL is set. */
  endpoint: string | null;
  /** Whether a worker holds this URL's deliveries (its circuit breaker is open). */
  circuitOpen: boolean;
}

/**
 * The webhook backlog: every organization and mode with pending or failed deliveries, the
 * oldest waiting first, then the most failed. Pending rows are few (the queue drains); failed
 * ones are read through the index of failed deliveries.
 */
export async function webhookBacklog(db: Kysely<DB>, filter: { orgId?: string | undefined; mode?: Mode | undefined } = {}): Promise<BacklogRow[]> {
  const { rows } = await sql<{
    org_id: string;
    org_name: string;
    mode: Mode;
    waiting: string;
    retrying: string;
    failed: string;
    oldest_pending: Date | null;
    last_failed: Date | null;
    url: string | null;
    circuit_open: boolean;
  }>`
    with queue as (
      select d.org_id, d.mode,
             count(*) filter (where d.status = 'pending' and d.attempts = 0) as waiting,
             count(*) filter (where d.status = 'pending' and d.attempts > 0) as retrying,
             count(*) filter (where d.status = 'failed') as failed,
             min(d.created_at) filter (where d.status = 'pending') as oldest_pending,
             max(d.next_attempt_at) filter (where d.status = 'failed') as last_failed
        from webhook_deliveries d
       where d.status in ('pending', 'failed')
         ${filter.orgId ? sql`and d.org_id = ${filter.orgId}` : sql``}
         ${filter.mode ? sql`and d.mode = ${filter.mode}` : sql``}
       group by d.org_id, d.mode
    )
    select q.*, o.name as org_name, e.url, (c.url is not null) as circuit_open
      from queue q
      join organizations o on o.id = q.org_id
      left join webhook_endpoints e on e.org_id = q.org_id and e.mode = q.mode
      left join webhook_circuits c on c.url = e.url
     order by q.oldest_pending nulls last, q.failed desc, o.name, q.mode`.execute(db);
  return rows.map((row) => ({
    orgId: row.org_id,
    orgName: row.org_name,
    mode: row.mode,
    waiting: Number(row.waiting),
    retrying: Number(row.retrying),
    failed: Number(row.failed),
    oldestPendingAt: row.oldest_pending ? new Date(row.oldest_pending).toISOString() : null,
    lastFailedAt: row.last_failed ? new Date(row.last_failed).toISOString() : null,
    endpoint: row.url ? endpointLabel(row.url) : null,
    circuitOpen: row.circuit_open,
  }));
}

/** An endpoint whose circuit breaker is open, with each organization and mode that uses its URL. */
export interface FailingEndpoint {
  orgId: string;
  orgName: string;
  mode: Mode;
  endpoint: string;
  openedAt: string;
  /** When the cool-down ends: the URL's next due delivery after it is the probe. */
  probeAt: string;
  failures: number;
  lastStatusCode: number | null;
  lastError: string | null;
  /** Its pending deliveries (held until the probe answers). */
  pending: number;
}

/** Endpoints with an open circuit breaker (webhook_circuits, written by the workers), longest open first. */
export async function failingEndpoints(db: Kysely<DB>): Promise<FailingEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_circuits as c')
    .innerJoin('webhook_endpoints as e', 'e.url', 'c.url')
    .innerJoin('organizations as o', 'o.id', 'e.org_id')
    .select([
      'e.org_id',
      'o.name',
      'e.mode',
      'c.url',
      'c.opened_at',
      'c.probe_at',
      'c.failures',
      'c.last_status_code',
      'c.last_error',
      sql<string>`(select count(*) from webhook_deliveries d where d.org_id = e.org_id and d.mode = e.mode and d.status = 'pending')`.as('pending'),
    ])
    .orderBy('c.opened_at')
    .orderBy('o.name')
    .execute();
  return rows.map((row) => ({
    orgId: row.org_id,
    orgName: row.name,
    mode: row.mode,
    endpoint: endpointLabel(row.url),
    openedAt: row.opened_at.toISOString(),
    probeAt: row.probe_at.toISOString(),
    failures: row.failures,
    lastStatusCode: row.last_status_code,
    // No body to hand: identity numbers, phones and emails are removed by shape, as in the server's log.
    lastError: row.last_error === null ? null : redactText(row.last_error),
    pending: Number(row.pending),
  }));
}

export interface ConsoleDelivery {
  id: number;
  webhookId: string;
  orgId: string;
  orgName: string;
  mode: Mode;
  type: string;
  status: WebhookDeliveryStatus;
  /** Attempts so far, resends included (as the portal's log counts them). */
  attemptCount: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

/** Deliveries of every organization (or one) in a status, newest first: what an operator resends. */
export async function listConsoleDeliveries(
  db: Kysely<DB>,
  filter: { status: 'pending' | 'failed'; orgId?: string | undefined; mode?: Mode | undefined; limit: number; offset: number },
): Promise<{ rows: ConsoleDelivery[]; total: number }> {
  let query = db.selectFrom('webhook_deliveries as d').where('d.status', '=', filter.status);
  if (filter.orgId) query = query.where('d.org_id', '=', filter.orgId);
  if (filter.mode) query = query.where('d.mode', '=', filter.mode);
  const [rows, count] = await Promise.all([
    query
      .innerJoin('organizations as o', 'o.id', 'd.org_id')
      .select(['d.id', 'd.message_id', 'd.org_id', 'o.name', 'd.mode', 'd.event_type', 'd.status', 'd.last_status_code', 'd.last_error', 'd.next_attempt_at', 'd.created_at'])
      .select(sql<string>`(select count(*) from webhook_attempts a where a.delivery_id = d.id)`.as('attempt_count'))
      .orderBy('d.id', 'desc')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  // A receiver's redirect names its Location in the error, which may repeat the body's people's
  // data: scrubbed as the portal's delivery log scrubs it (the body's values), then by shape.
  const masking = await maskedBodiesOf(
    db,
    rows.filter((row) => row.last_error !== null).map((row) => Number(row.id)),
  );
  const scrubbed = (id: number, error: string | null) => (error === null ? null : redactText(masking.get(id)?.scrub(error) ?? error));
  return {
    total: Number(count.n),
    rows: rows.map((row) => ({
      id: Number(row.id),
      webhookId: row.message_id,
      orgId: row.org_id,
      orgName: row.name,
      mode: row.mode,
      type: row.event_type,
      status: row.status,
      attemptCount: Number(row.attempt_count),
      lastStatusCode: row.last_status_code,
      lastError: scrubbed(Number(row.id), row.last_error),
      nextAttemptAt: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
      createdAt: row.created_at.toISOString(),
    })),
  };
}

/** Which organization and mode a delivery belongs to (the scope the shared resend checks), if it exists. */
export async function deliveryScope(db: Kysely<DB>, rawId: string): Promise<{ orgId: string; mode: Mode } | undefined> {
  if (!/^\d{1,15}$/.test(rawId)) return undefined;
  return db.selectFrom('webhook_deliveries').select(['org_id as orgId', 'mode']).where('id', '=', Number(rawId)).executeTakeFirst();
}
