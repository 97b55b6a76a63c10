import { sql, type Kysely } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { DB, Mode, WebhookDeliveryStatus } from '../platform/db/schema.js';
import type { AttemptResult, ClaimedDelivery } from './delivery.js';
import { DEFAULT_WEBHOOK_SIGNING, type WebhookSigning } from './endpoints.js';
import { DELIVERY_CHANNEL } from './events.js';
import { RETRY_JITTER } from './schedule.js';
import type { EndpointPlan } from './traffic.js';

export { RETRY_SCHEDULE_MS } from './schedule.js';

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
  signing: WebhookSigning | null;
  traceparent: string | null;
  request_id: string | null;
}

export interface ClaimRequest {
  /** Deliveries to claim at most (the worker's free slots). */
  limit: number;
  /** Due deliveries to look at, oldest first, when only the reserved slots are left (at least `limit`). */
  window: number;
  leaseMs: number;
  /** The quota of a URL without a plan. */
  share: number;
  /**
   * While positive, the claim takes up to this many of the oldest due deliveries whatever their
   * URL (see EndpointTraffic.borrowable); at 0 only the URLs' quotas count.
   */
  borrow: number;
  plans: readonly EndpointPlan[];
}

export interface ClaimResult {
  deliveries: ClaimedDelivery[];
  /** Deliveries moved later for their URL's plan, attempt not counted. */
  deferred: number;
  /** Whether due deliveries may have been left behind (a URL's quota, the borrowing limit). */
  more: boolean;
}

/**
 * Leases due deliveries and counts the attempt. SKIP LOCKED keeps concurrent workers off each
 * other's rows; the lease (locked_until) keeps them off a row while it is being sent. The lease
 * is short and its worker renews it while the attempt is in flight (renewLeases), so it runs out
 * soon after its worker dies, and another worker sends the delivery again with the same id.
 *
 * While borrowing is still allowed (the worker has more than its reserved slots free), it
 * takes the oldest due deliveries, as many as borrowing allows, with the plain statement a
 * healthy backlog drains with (the cheapest, at thousands of deliveries a second). Of those, the
 * deliveries beyond the quota of a URL whose plan says `deferMs` (an open breaker, a slow URL)
 * are handed back at once: moved that much later and their attempt uncounted.
 *
 * Otherwise only the reserved slots are left, and they go to URLs within their quota: of the
 * `window` oldest due deliveries, each URL's are taken up to its quota (oldest first, `limit`
 * in all); those beyond the quota of a URL whose plan says `deferMs` move that much later
 * without counting an attempt, so the deliveries queued behind them come into the window; the
 * others are left due, untouched.
 *
 * Deliveries of an organization without an endpoint are always taken (their attempt fails at
 * once without a request).
 */
export async function claimDeliveries(db: Kysely<DB>, request: ClaimRequest): Promise<ClaimResult> {
  if (request.borrow <= 0) return claimFairly(db, request);
  const limit = Math.min(request.limit, request.borrow);
  const claimed = await claimOldest(db, limit, request.leaseMs);
  const more = claimed.length === limit && limit < request.limit;
  if (!request.plans.some((plan) => plan.deferMs !== null)) return { deliveries: claimed, deferred: 0, more };
  const plans = new Map(request.plans.map((plan) => [plan.url, plan]));
  const taken = new Map<string, number>();
  const deliveries: ClaimedDelivery[] = [];
  const handedBack: Array<{ id: number; attempt: number; defer_ms: number }> = [];
  for (const delivery of claimed) {
    const plan = delivery.url ? plans.get(delivery.url) : undefined;
    if (!plan || plan.deferMs === null) {
      deliveries.push(delivery);
      continue;
    }
    const count = taken.get(plan.url) ?? 0;
    if (count < plan.quota) {
      taken.set(plan.url, count + 1);
      deliveries.push(delivery);
    } else {
      handedBack.push({ id: delivery.id, attempt: delivery.attempt, defer_ms: plan.deferMs });
    }
  }
  if (handedBack.length > 0) {
    await sql`
      update webhook_deliveries d
         set attempts = d.attempts - 1, locked_until = null, next_attempt_at = now() + r.defer_ms * interval '1 millisecond'
        from json_to_recordset(${JSON.stringify(handedBack)}::json) as r(id bigint, attempt integer, defer_ms integer)
       where d.id = r.id and d.attempts = r.attempt and d.status = 'pending'`.execute(db);
  }
  return { deliveries, deferred: handedBack.length, more };
}

async function claimOldest(db: Kysely<DB>, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
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
      returning d.id, d.message_id, d.org_id, d.mode, d.attempts, d.payload::text as body, d.traceparent, d.request_id
    )
    select c.*, e.url, e.secret, e.signing,
           case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret
      from claimed c
      left join webhook_endpoints e on e.org_id = c.org_id and e.mode = c.mode`.execute(db);
  return rows.map(toClaimed);
}

async function claimFairly(db: Kysely<DB>, request: ClaimRequest): Promise<ClaimResult> {
  // One row at least: with nothing claimed, it carries only the counts (the claim's columns null).
  const { rows } = await sql<Omit<ClaimRow, 'id'> & { id: number | null; seen: number; deferred: number }>`
    with seen as (
      select d.id, d.next_attempt_at, e.url
        from webhook_deliveries d
        left join webhook_endpoints e on e.org_id = d.org_id and e.mode = d.mode
       where d.status = 'pending' and d.next_attempt_at <= now() and (d.locked_until is null or d.locked_until < now())
       order by d.next_attempt_at
       limit ${request.window}
       for update of d skip locked
    ),
    graded as (
      select s.id, s.next_attempt_at, p.defer_ms,
             case
               when s.url is null or row_number() over (partition by s.url order by s.next_attempt_at, s.id) <= coalesce(p.quota, ${request.share}) then 'take'
               when p.defer_ms is not null then 'defer'
               else 'leave'
             end as fate
        from seen s
        left join json_to_recordset(${JSON.stringify(request.plans.map(toPlanRow))}::json)
          as p(url text, quota integer, defer_ms integer) on p.url = s.url
    ),
    picked as (
      select id from graded where fate = 'take' order by next_attempt_at, id limit ${request.limit}
    ),
    deferred as (
      update webhook_deliveries d
         set next_attempt_at = now() + g.defer_ms * interval '1 millisecond'
        from graded g
       where d.id = g.id and g.fate = 'defer'
      returning d.id
    ),
    claimed as (
      update webhook_deliveries d
         set locked_until = now() + ${request.leaseMs} * interval '1 millisecond', attempts = d.attempts + 1
       where d.id in (select id from picked)
      returning d.id, d.message_id, d.org_id, d.mode, d.attempts, d.payload::text as body, d.traceparent, d.request_id
    )
    select (select count(*) from seen)::integer as seen, (select count(*) from deferred)::integer as deferred,
           c.*, e.url, e.secret, e.signing,
           case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret
      from (select 1) as always
      left join claimed c on true
      left join webhook_endpoints e on e.org_id = c.org_id and e.mode = c.mode`.execute(db);
  const deliveries = rows.filter((row): row is typeof row & ClaimRow => row.id !== null).map(toClaimed);
  const seen = rows[0]?.seen ?? 0;
  const deferred = rows[0]?.deferred ?? 0;
  return { deliveries, deferred, more: seen > deliveries.length + deferred };
}

function toClaimed(row: ClaimRow): ClaimedDelivery {
  return {
    id: Number(row.id),
    messageId: row.message_id,
    orgId: row.org_id,
    mode: row.mode,
    attempt: row.attempts,
    body: row.body,
    url: row.url,
    secrets: [row.secret, row.previous_secret].filter((secret): secret is string => !!secret),
    signing: row.signing ?? DEFAULT_WEBHOOK_SIGNING,
    traceparent: row.traceparent,
    requestId: row.request_id,
  };
}

function toPlanRow(plan: EndpointPlan) {
  return { url: plan.url, quota: plan.quota, defer_ms: plan.deferMs };
}

/**
 * After an endpoint's breaker closes: its pending deliveries due within `heldForMs` (the ones the
 * breaker held, and retries that were waiting out the outage) become due now. Returns how many.
 */
export async function resumeEndpoint(db: Kysely<DB>, url: string, heldForMs: number): Promise<number> {
  const { rows } = await sql<{ resumed: number }>`
    with resumed as (
      update webhook_deliveries d
         set next_attempt_at = now()
        from webhook_endpoints e
       where e.url = ${url} and d.org_id = e.org_id and d.mode = e.mode and d.status = 'pending'
         and d.next_attempt_at > now() and d.next_attempt_at <= now() + ${Math.ceil(heldForMs)} * interval '1 millisecond'
      returning 1
    )
    select count(*)::integer as resumed from resumed`.execute(db);
  const resumed = rows[0]?.resumed ?? 0;
  if (resumed > 0) await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
  return resumed;
}

/**
 * Extends the leases of deliveries whose attempts are still in flight (or whose outcomes are not
 * written yet) by `leaseMs` from now. Only a claim that is still current is extended: a delivery
 * an operator redelivered meanwhile (attempt count reset) or that another worker took lets its
 * lease run out. Returns how many leases were extended.
 */
export async function renewLeases(db: Kysely<DB>, held: ReadonlyArray<{ id: number; attempt: number }>, leaseMs: number): Promise<number> {
  if (held.length === 0) return 0;
  const { rows } = await sql<{ renewed: number }>`
    with renewed as (
      update webhook_deliveries d
         set locked_until = now() + ${leaseMs} * interval '1 millisecond'
        from json_to_recordset(${JSON.stringify(held)}::json) as r(id bigint, attempt integer)
       where d.id = r.id and d.attempts = r.attempt and d.status = 'pending'
      returning 1
    )
    select count(*)::integer as renewed from renewed`.execute(db);
  return rows[0]?.renewed ?? 0;
}

/** Voids every lease: only for a database no other worker can be using. */
export async function releaseLeases(db: Kysely<DB>): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ locked_until: null }).where('status', '=', 'pending').where('locked_until', 'is not', null).execute();
}

/**
 * Writes a batch of attempt outcomes in one statement: the attempt log rows, and each delivery's
 * new state (delivered, failed for good, or pending until its next attempt). A result whose claim
 * is no longer current (its lease ran out and another worker took the row, or an operator asked
 * for a redelivery meanwhile) is logged but leaves the delivery alone. A handed-back attempt (cut
 * off by its worker's stop) is logged, uncounted, and its delivery due now; the workers are woken.
 */
export async function recordResults(db: Kysely<DB>, results: readonly AttemptResult[], retrySchedule: readonly number[]): Promise<void> {
  if (results.length === 0) return;
  const rows = results.map((result) => {
    const { delivery } = result;
    const handedBack = result.handedBack === true;
    const final = !handedBack && (result.delivered || delivery.attempt > retrySchedule.length);
    const delayMs = final || handedBack ? 0 : Math.round(jitter(retrySchedule[delivery.attempt - 1]!));
    return {
      id: delivery.id,
      attempt: delivery.attempt,
      status: result.delivered ? 'delivered' : final ? 'failed' : 'pending',
      status_code: result.statusCode,
      error: result.error,
      response_excerpt: result.responseExcerpt,
      attempted_at: result.attemptedAt.toISOString(),
      finished_at: new Date(result.attemptedAt.getTime() + result.latencyMs).toISOString(),
      latency_ms: result.latencyMs,
      delay_ms: delayMs,
      handed_back: handedBack,
    };
  });
  await sql`
    with r as (
      select * from json_to_recordset(${JSON.stringify(rows)}::json)
        as r(id bigint, attempt integer, status text, status_code integer, error text, response_excerpt text,
             attempted_at timestamptz, finished_at timestamptz, latency_ms integer, delay_ms integer, handed_back boolean)
    ),
    logged as (
      insert into webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
      -- A delivery deleted meanwhile (with its organization) has nothing to log against.
      select r.id, r.attempted_at, r.status_code, r.latency_ms, r.error, r.response_excerpt from r where exists (select 1 from webhook_deliveries x where x.id = r.id)
    )
    update webhook_deliveries d
       set status = r.status,
           attempts = case when r.handed_back then d.attempts - 1 else d.attempts end,
           locked_until = null,
           last_status_code = r.status_code,
           last_error = r.error,
           next_attempt_at = case when r.status = 'pending' then now() + r.delay_ms * interval '1 millisecond' else d.next_attempt_at end,
           delivered_at = case when r.status = 'delivered' then r.finished_at else d.delivered_at end
      from r
     where d.id = r.id and d.attempts = r.attempt and d.status = 'pending'`.execute(db);
  if (rows.some((row) => row.handed_back)) await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
}

function jitter(ms: number): number {
  return ms * (1 - RETRY_JITTER + Math.random() * 2 * RETRY_JITTER);
}

export interface AttemptView {
  attemptedAt: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** The start of the receiver's answer (500 characters at most); null without one. */
  responseExcerpt: string | null;
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
  /** False for an event recorded while its scope had no endpoint: its body was not kept, so it cannot be sent. */
  sendable: boolean;
  attempts: AttemptView[];
}

/** A resend of a delivery recorded without its body (no endpoint when the event happened). */
export class UnsendableDeliveryError extends Error {
  override name = 'UnsendableDeliveryError';
  constructor(id: number) {
    super(`webhook delivery ${id} cannot be sent: no endpoint was set when its event happened, so its body was not kept (read the record with GET instead)`);
  }
}

export interface DeliveryFilter {
  orgId: string;
  /** Both modes when absent. */
  mode?: Mode;
  status?: WebhookDeliveryStatus;
  /** Newest first, at most this many. */
  limit: number;
  /** Newest first, after skipping this many (0 when absent). */
  offset?: number;
}

export async function listDeliveries(db: Kysely<DB>, filter: DeliveryFilter): Promise<DeliveryView[]> {
  let query = withAttempts(db).where('d.org_id', '=', filter.orgId);
  if (filter.mode) query = query.where('d.mode', '=', filter.mode);
  if (filter.status) query = query.where('d.status', '=', filter.status);
  const rows = await query.orderBy('d.id', 'desc').limit(filter.limit).offset(filter.offset ?? 0).execute();
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
 * is sent again when the lease runs out (its worker stops renewing a claim that is no longer
 * current, so within the lease, 5 s by default), never twice at once. Undefined when there
 * is no such delivery; UnsendableDeliveryError for one recorded without its body.
 */
export async function redeliver(db: Kysely<DB>, id: number): Promise<DeliveryView | undefined> {
  const updated = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: sql<Date>`now()`, delivered_at: null })
    .where('id', '=', id)
    .where('payload', 'is not', null)
    .returning('id')
    .executeTakeFirst();
  if (!updated) {
    const bodiless = await db.selectFrom('webhook_deliveries').select('id').where('id', '=', id).executeTakeFirst();
    if (bodiless) throw new UnsendableDeliveryError(id);
    return undefined;
  }
  await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
  return getDelivery(db, id);
}

/**
 * Sends every failed delivery of an organization's mode again, as `redeliver` does one: pending
 * now, fresh retry schedule, same webhook-ids. Those recorded without a body stay as they are.
 * Returns the ids resent, oldest first.
 */
export async function redeliverFailed(db: Kysely<DB>, scope: { orgId: string; mode: Mode }): Promise<number[]> {
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: sql<Date>`now()`, delivered_at: null })
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('status', '=', 'failed')
    .where('payload', 'is not', null)
    .returning('id')
    .execute();
  if (rows.length > 0) await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
  return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
}

/**
 * Deliveries with their attempt logs, in one statement so the two agree (a worker may be writing
 * both). Not the body: a list would decrypt every one for nothing.
 */
function withAttempts(db: Kysely<DB>) {
  return db
    .selectFrom('webhook_deliveries as d')
    .select(['d.id', 'd.message_id', 'd.org_id', 'd.mode', 'd.event_type', 'd.status', 'd.next_attempt_at', 'd.last_status_code', 'd.last_error', 'd.created_at', 'd.delivered_at'])
    .select(sql<boolean>`d.payload is not null`.as('sendable'))
    .select((eb) =>
      jsonArrayFrom(
        eb
          .selectFrom('webhook_attempts as a')
          .select(['a.attempted_at', 'a.status_code', 'a.latency_ms', 'a.error', 'a.response_excerpt'])
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
    responseExcerpt: attempt.response_excerpt,
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
    sendable: row.sendable,
    attempts,
  };
}
