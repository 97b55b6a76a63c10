import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import type { DB, Mode } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { getDelivery, listDeliveries, redeliver, redeliverFailed, type DeliveryView } from '../../webhooks/queue.js';
import { audit, type Actor } from '../audit.js';
import { cappedCount, COUNT_CAP } from '../verifications/counting.js';
import { ModeQuery, Nullable } from '../schemas.js';
import { maskedBodiesOf, maskEventBody, type MaskedBody } from './masking.js';

const Status = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]);

/** How deep the log pages: older deliveries stay readable with `vouch webhook deliveries` until retention removes them. */
export const MAX_LOG_OFFSET = COUNT_CAP;

export const DeliverySummary = Type.Object({
  id: Type.Integer(),
  webhookId: Type.String({ description: 'The webhook-id header, the same on every attempt and resend' }),
  type: Type.String({ description: 'The event type, e.g. address.completed or webhook.test' }),
  status: Status,
  attemptCount: Type.Integer({ description: 'Attempts so far, resends included' }),
  lastStatusCode: Nullable(Type.Integer()),
  lastError: Nullable(Type.String({ description: "The last attempt's error, the body's personal data masked in it as in the detail" })),
  nextAttemptAt: Nullable(Type.String({ format: 'date-time', description: 'While pending: when the next attempt is due' })),
  createdAt: Type.String({ format: 'date-time' }),
  deliveredAt: Nullable(Type.String({ format: 'date-time' })),
  sendable: Type.Boolean({
    description: 'False for an event that happened while no endpoint was set for the mode: it was recorded without its body, was not sent and cannot be resent',
  }),
});

const Attempt = Type.Object({
  attemptedAt: Type.String({ format: 'date-time' }),
  statusCode: Nullable(Type.Integer({ description: 'null when no answer came (refused, timed out, connection error)' })),
  durationMs: Type.Integer(),
  error: Nullable(Type.String()),
  responseExcerpt: Nullable(Type.String({ description: "The first 500 characters of the receiver's answer" })),
});

export const DeliveryDetail = Type.Object({
  ...DeliverySummary.properties,
  payload: Type.Unknown({
    description:
      'The event body as sent ({type, timestamp, data}), with identity-document numbers (BVN, NIN, vNIN, licence, voter card, TIN), phone numbers, birth dates, email and IP addresses masked and photos replaced by "[image not shown: N characters]", for every role; null when it was not kept (sendable false)',
  }),
  attempts: Type.Array(Attempt, { description: "Each attempt; the values masked in the body are masked in its error and the receiver's answer too, and images there are not shown" }),
});

/** What a detail view showed personal data of: the verification the event reports on (none for webhook.test). */
export interface ViewedRecord {
  kind: string;
  id: number;
}

export const DeliveryListQuery = Type.Object({
  mode: ModeQuery.properties.mode,
  status: Type.Optional(Status),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_LOG_OFFSET, default: 0, description: `Deliveries to skip; the log pages through the newest ${MAX_LOG_OFFSET}` }),
});

export const DeliveryPage = Type.Object({
  data: Type.Array(DeliverySummary),
  total: Type.Integer({ description: `How many deliveries match, counted up to ${COUNT_CAP}` }),
  totalCapped: Type.Boolean({ description: `True when more than ${COUNT_CAP} match (total is then ${COUNT_CAP})` }),
  limit: Type.Integer(),
  offset: Type.Integer(),
  retentionDays: Type.Integer({ description: 'Ended deliveries are removed this many days after they end (VOUCH_WEBHOOK_RETENTION_DAYS)' }),
});

interface Scope {
  orgId: string;
  mode: Mode;
}

/**
 * A delivery as the log lists it. Its last error is scrubbed as its attempts' errors are: a
 * receiver's redirect names its Location there, which may repeat the body's numbers.
 */
function summary(delivery: DeliveryView, masked: MaskedBody): Static<typeof DeliverySummary> {
  return {
    id: delivery.id,
    webhookId: delivery.webhookId,
    type: delivery.type,
    status: delivery.status,
    attemptCount: delivery.attemptCount,
    lastStatusCode: delivery.lastStatusCode,
    lastError: masked.scrub(delivery.lastError),
    nextAttemptAt: delivery.nextAttemptAt,
    createdAt: delivery.createdAt,
    deliveredAt: delivery.deliveredAt,
    sendable: delivery.sendable,
  };
}

/** What a delivery recorded without its body can repeat of it: nothing, but an image is still not shown. */
const BODILESS = maskEventBody(null);

/**
 * The masked bodies of the deliveries with a last error, the only text of a list row that can
 * repeat the body; the others' bodies are not read (each is decrypted).
 */
function maskingOf(db: Kysely<DB>, deliveries: readonly DeliveryView[]): Promise<Map<number, MaskedBody>> {
  return maskedBodiesOf(db, deliveries.filter((delivery) => delivery.lastError !== null && delivery.sendable).map((delivery) => delivery.id));
}

async function summaries(db: Kysely<DB>, deliveries: readonly DeliveryView[]): Promise<Static<typeof DeliverySummary>[]> {
  const masking = await maskingOf(db, deliveries);
  return deliveries.map((delivery) => summary(delivery, masking.get(delivery.id) ?? BODILESS));
}

/** A page of the scope's log, newest first, with its (capped) count. */
export async function deliveryPage(
  db: Kysely<DB>,
  scope: Scope,
  query: Static<typeof DeliveryListQuery>,
  retentionDays: number,
): Promise<Static<typeof DeliveryPage>> {
  let matching = db.selectFrom('webhook_deliveries').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode);
  if (query.status) matching = matching.where('status', '=', query.status);
  const [rows, counted] = await Promise.all([
    listDeliveries(db, { ...scope, status: query.status, limit: query.limit, offset: query.offset }),
    cappedCount(db, matching.select('id')),
  ]);
  return { data: await summaries(db, rows), ...counted, limit: query.limit, offset: query.offset, retentionDays };
}

/** One delivery of the scope; another organization's or mode's id is 404, as is no delivery. */
async function findDelivery(db: Kysely<DB>, scope: Scope, rawId: string): Promise<DeliveryView> {
  const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : NaN;
  const delivery = Number.isSafeInteger(id) ? await getDelivery(db, id) : undefined;
  if (!delivery || delivery.orgId !== scope.orgId || delivery.mode !== scope.mode) {
    throw new ApiError('NOT_FOUND_ERROR', `No webhook delivery ${rawId.slice(0, 20)} in ${scope.mode} mode: check the mode switch`);
  }
  return delivery;
}

/**
 * One delivery of the scope with its body (personal data masked, photos withheld: masking.ts) and attempts,
 * and the verification whose data it shows, for the access log.
 */
export async function deliveryDetail(db: Kysely<DB>, scope: Scope, rawId: string): Promise<{ detail: Static<typeof DeliveryDetail>; viewed: ViewedRecord | undefined }> {
  const delivery = await findDelivery(db, scope, rawId);
  const row = await db.selectFrom('webhook_deliveries').select(['payload', 'resource_kind', 'resource_id']).where('id', '=', delivery.id).executeTakeFirstOrThrow();
  const masked = maskEventBody(row.payload);
  const detail = {
    ...summary(delivery, masked),
    payload: masked.body ?? null,
    attempts: delivery.attempts.map((attempt) => ({
      attemptedAt: attempt.attemptedAt,
      statusCode: attempt.statusCode,
      durationMs: attempt.latencyMs,
      error: masked.scrub(attempt.error),
      responseExcerpt: masked.scrub(attempt.responseExcerpt),
    })),
  };
  const viewed = row.payload !== null && row.resource_kind !== null && row.resource_id !== null ? { kind: row.resource_kind, id: Number(row.resource_id) } : undefined;
  return { detail, viewed };
}

/**
 * Sends one delivery of the scope again now (same webhook-id, fresh retry schedule), with the
 * audit row naming who asked, in one transaction: the customer's resend in the portal and the
 * operator's in the console are this one path. Returns the delivery as it is now.
 */
export async function resendDelivery(db: Kysely<DB>, scope: Scope, rawId: string, actor: Actor): Promise<Static<typeof DeliverySummary>> {
  const delivery = await findDelivery(db, scope, rawId);
  if (!delivery.sendable) {
    throw new ApiError('CONFLICT', `This ${delivery.type} event happened while no ${scope.mode} webhook URL was set: its body was not kept, so it cannot be sent. Read the record with GET instead`);
  }
  await db.transaction().execute(async (trx) => {
    await redeliver(trx, delivery.id);
    await audit(trx, { orgId: scope.orgId, actor, action: 'webhook.resent', target: delivery.webhookId, before: { status: delivery.status }, after: { type: delivery.type, mode: scope.mode, status: 'pending' } });
  });
  const [resent] = await summaries(db, [await findDelivery(db, scope, rawId)]);
  return resent!;
}

/**
 * Sends every failed delivery of the scope (an organization's endpoint of one mode) again, with
 * one audit row naming who asked and how many, in one transaction. Returns how many.
 */
export async function resendFailedDeliveries(db: Kysely<DB>, scope: Scope, actor: Actor): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const ids = await redeliverFailed(trx, scope);
    if (ids.length > 0) {
      await audit(trx, {
        orgId: scope.orgId,
        actor,
        action: 'webhook.resent_failed',
        target: `${scope.mode} webhook`,
        before: { failed: ids.length },
        after: { resent: ids.length, firstId: ids[0], lastId: ids.at(-1) },
      });
    }
    return ids.length;
  });
}
