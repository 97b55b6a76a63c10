import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { FILE_URL_TTL_SECONDS } from '../files/urls.js';
import type { DB, Mode } from '../platform/db/schema.js';
import { currentRequest, traceparentOf } from '../platform/request-context.js';
import { MAX_RETRY_SPAN_MS } from './schedule.js';

/** Event types sent to customers' webhook endpoints. */
export type WebhookEventType =
  | 'address.completed'
  | 'address.cancelled'
  | 'business.completed'
  | 'business.cancelled'
  | 'guarantor.completed'
  | 'guarantor.cancelled'
  | 'employment.completed'
  | 'employment.cancelled'
  | 'session.completed'
  | 'session.expired'
  | 'screening.match'
  | 'screening.monitoring_ended'
  // Sent from the portal's "Send test event" button.
  | 'webhook.test';

export interface WebhookEvent {
  orgId: string;
  mode: Mode;
  type: WebhookEventType;
  /** The record exactly as its GET endpoint returns it (`data` of the success envelope). */
  data: unknown;
  /** The verification reported on, when its public id is not its number (sessions: `ses_...`). */
  resource?: { kind: string; id: number };
}

/**
 * Photo links in a webhook body are signed for this long from the event: the whole retry
 * schedule at its longest jitter (about 85 hours) plus the day a link from the API gets, so even
 * the last retry carries links the receiver has a day to fetch (about 4.6 days in all).
 */
export const WEBHOOK_FILE_URL_TTL_SECONDS = Math.ceil(MAX_RETRY_SPAN_MS / 1000) + FILE_URL_TTL_SECONDS;

/** The channel a worker LISTENs on to pick up new deliveries without waiting for its poll. */
export const DELIVERY_CHANNEL = 'vouch_webhook_deliveries';

/** The verification an event reports on ("address.completed" with record id 7 -> address 7), for the portal's detail page. */
function resourceOf(event: WebhookEvent): { resource_kind: string; resource_id: number } | Record<string, never> {
  if (event.resource) return { resource_kind: event.resource.kind, resource_id: event.resource.id };
  const id = (event.data as { id?: unknown } | null | undefined)?.id;
  if (event.type === 'webhook.test' || typeof id !== 'number') return {};
  return { resource_kind: event.type.slice(0, event.type.indexOf('.')), resource_id: id };
}

/** The error an event recorded without an endpoint carries: it was never sent, and cannot be. */
export const NO_ENDPOINT_ERROR = 'not sent: no webhook endpoint was set for this mode when the event happened (its body was not kept)';

/**
 * Queues a webhook delivery. Call it with the transaction that changes the verification's state
 * (outbox): the event exists if and only if the change committed, and the NOTIFY is sent at
 * commit.
 *
 * An event of a scope (organization and mode) without an endpoint has nowhere to go, and its body
 * is the verification record, personal data: it is recorded without the body, `failed` with
 * NO_ENDPOINT_ERROR and no attempt, so the log shows it happened, and it is never sent (setting an
 * endpoint later does not send it: the record is read with GET). Retention removes it like any
 * ended delivery.
 */
export async function enqueueEvent(db: Kysely<DB>, event: WebhookEvent, now: Date = new Date()): Promise<string> {
  const messageId = `msg_${randomUUID().replace(/-/g, '')}`;
  const endpoint = await db.selectFrom('webhook_endpoints').select('org_id').where('org_id', '=', event.orgId).where('mode', '=', event.mode).executeTakeFirst();
  const delivery = endpoint
    ? { payload: JSON.stringify({ type: event.type, timestamp: now.toISOString(), data: event.data }) }
    : { payload: null, status: 'failed' as const, last_error: NO_ENDPOINT_ERROR };
  const request = currentRequest();
  await db
    .insertInto('webhook_deliveries')
    .values({
      message_id: messageId,
      ...(request ? { traceparent: traceparentOf(request.trace), request_id: request.requestId } : {}),
      org_id: event.orgId,
      mode: event.mode,
      event_type: event.type,
      ...delivery,
      ...resourceOf(event),
    })
    .execute();
  if (endpoint) await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
  return messageId;
}
