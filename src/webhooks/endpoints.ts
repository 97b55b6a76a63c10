import { randomBytes } from 'node:crypto';
import { sql, type ColumnType, type Kysely, type Transaction } from 'kysely';
import { checkOutboundUrl, OutboundUrlError } from '../platform/outbound.js';
import type { DB, Mode } from '../platform/db/schema.js';
import { DELIVERY_CHANNEL } from './events.js';

/** Whose endpoint: every read and write names the organization and the mode. */
export interface EndpointScope {
  orgId: string;
  mode: Mode;
}

/**
 * How deliveries are signed: `standard` (Standard Webhooks, `webhook-signature`), `verifyme`
 * (`x-verifyme-signature`, the hex HMAC-SHA512 of the raw body, for receivers written for
 * VerifyMe/QoreID) or `both`. See delivery.ts for the headers.
 */
export const WEBHOOK_SIGNINGS = ['standard', 'verifyme', 'both'] as const;
export type WebhookSigning = (typeof WEBHOOK_SIGNINGS)[number];
export const DEFAULT_WEBHOOK_SIGNING: WebhookSigning = 'standard';

declare module '../platform/db/schema.js' {
  interface WebhookEndpointsTable {
    /** Migration 0032; 'standard' for endpoints set before it. */
    signing: ColumnType<WebhookSigning, WebhookSigning | undefined, WebhookSigning>;
  }
}

/** After a rotation the previous secret keeps signing this long, so receivers can switch over. */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 60 * 60 * 1000;

/** A request about an endpoint that cannot be carried out; the message says why, for the operator. */
export class WebhookEndpointError extends Error {
  override name = 'WebhookEndpointError';
}

export interface EndpointOptions {
  /** VOUCH_ALLOW_PRIVATE_URLS: accept loopback and private targets (development, tests). */
  allowPrivateUrls: boolean;
  now?: () => Date;
  generateSecret?: () => string;
}

export interface SetEndpointOptions extends EndpointOptions {
  /** Runs inside the change's transaction with the endpoint before (undefined: none) and after (the portal's audit row). */
  within?: (trx: Transaction<DB>, change: { before: WebhookEndpoint | undefined; after: WebhookEndpoint }) => Promise<void>;
}

export interface WebhookEndpoint {
  url: string;
  secret: string;
  signing: WebhookSigning;
  /** Set for 24 hours after a rotation: until then deliveries are signed with both secrets. */
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Standard Webhooks signing key: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** What a developer whose receiver runs on their own machine or network is told (issue 52). */
export const PRIVATE_URL_HINT =
  '; for a receiver on this machine or a private network while developing, set VOUCH_ALLOW_PRIVATE_URLS=1 where Vouch runs (the server, which sends the events, as well as the CLI)';

/** Checks a webhook URL as `setWebhookEndpoint` does; resolves to its normalised form. */
export async function validateWebhookUrl(raw: string, allowPrivateUrls: boolean): Promise<string> {
  try {
    return (await checkOutboundUrl(raw, allowPrivateUrls)).toString();
  } catch (err) {
    if (err instanceof OutboundUrlError) throw new WebhookEndpointError(`webhook URL ${err.message}${err.privateAddress ? PRIVATE_URL_HINT : ''}`);
    throw err;
  }
}

function checkOrgId(orgId: string): void {
  if (!UUID.test(orgId)) throw new WebhookEndpointError(`no organization ${orgId}`);
}

/**
 * Sets the endpoint URL. The first set makes a secret; a later set keeps the secret (changing
 * where events go is not a reason to make every receiver reconfigure) unless `rotate` asks for a
 * new one. `signing` changes how deliveries are signed; without it a new endpoint signs the
 * Standard Webhooks way and an existing one keeps its choice. Pending deliveries of the scope become due at once: a customer who just set or fixed
 * the endpoint should not wait out a backoff that was aimed at the old one.
 */
export async function setWebhookEndpoint(
  db: Kysely<DB>,
  scope: EndpointScope,
  input: { url: string; rotate?: boolean; signing?: WebhookSigning },
  options: SetEndpointOptions,
): Promise<WebhookEndpoint> {
  checkOrgId(scope.orgId);
  const url = await validateWebhookUrl(input.url, options.allowPrivateUrls);
  const now = (options.now ?? (() => new Date()))();
  const secret = (options.generateSecret ?? generateWebhookSecret)();
  const expires = new Date(now.getTime() + PREVIOUS_SECRET_VALIDITY_MS);
  try {
    return await db.transaction().execute(async (trx) => {
      const before = options.within
        ? await trx.selectFrom('webhook_endpoints').selectAll().where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).forUpdate().executeTakeFirst()
        : undefined;
      const row = await trx
        .insertInto('webhook_endpoints')
        .values({ org_id: scope.orgId, mode: scope.mode, url, secret, signing: input.signing ?? DEFAULT_WEBHOOK_SIGNING, created_at: now, updated_at: now })
        .onConflict((oc) =>
          oc.columns(['org_id', 'mode']).doUpdateSet((eb) => ({
            url: eb.ref('excluded.url'),
            updated_at: now,
            ...(input.signing ? { signing: input.signing } : {}),
            ...(input.rotate
              ? { secret: eb.ref('excluded.secret'), previous_secret: eb.ref('webhook_endpoints.secret'), previous_secret_expires_at: expires }
              : {}),
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      await makePendingDue(trx, scope);
      const after = toEndpoint(row);
      await options.within?.(trx, { before: before && toEndpoint(before), after });
      return after;
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23503') throw new WebhookEndpointError(`no organization ${scope.orgId}`);
    throw err;
  }
}

export async function getWebhookEndpoint(db: Kysely<DB>, scope: EndpointScope): Promise<WebhookEndpoint | undefined> {
  checkOrgId(scope.orgId);
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .executeTakeFirst();
  return row && toEndpoint(row);
}

/**
 * Changes how an existing endpoint's deliveries are signed; the next attempt of every delivery
 * (retries too) is signed the new way. `within` runs in the change's transaction (the audit row).
 */
export async function setWebhookSigning(
  db: Kysely<DB>,
  scope: EndpointScope,
  signing: WebhookSigning,
  options: Pick<SetEndpointOptions, 'within' | 'now'> = {},
): Promise<WebhookEndpoint> {
  checkOrgId(scope.orgId);
  const now = (options.now ?? (() => new Date()))();
  return db.transaction().execute(async (trx) => {
    const before = await trx.selectFrom('webhook_endpoints').selectAll().where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).forUpdate().executeTakeFirst();
    if (!before) throw new WebhookEndpointError(`organization ${scope.orgId} has no ${scope.mode} webhook endpoint`);
    const row = await trx
      .updateTable('webhook_endpoints')
      .set({ signing, updated_at: now })
      .where('org_id', '=', scope.orgId)
      .where('mode', '=', scope.mode)
      .returningAll()
      .executeTakeFirstOrThrow();
    const after = toEndpoint(row);
    await options.within?.(trx, { before: toEndpoint(before), after });
    return after;
  });
}

/**
 * Makes a new secret; the current one becomes the previous secret and keeps signing for 24 hours.
 * Only one previous secret is kept: rotating twice within 24 hours retires the oldest at once.
 */
export async function rotateWebhookSecret(
  db: Kysely<DB>,
  scope: EndpointScope,
  options: Omit<EndpointOptions, 'allowPrivateUrls'> = {},
): Promise<WebhookEndpoint> {
  checkOrgId(scope.orgId);
  const now = (options.now ?? (() => new Date()))();
  const secret = (options.generateSecret ?? generateWebhookSecret)();
  const row = await db
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      secret,
      previous_secret: eb.ref('secret'),
      previous_secret_expires_at: new Date(now.getTime() + PREVIOUS_SECRET_VALIDITY_MS),
      updated_at: now,
    }))
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new WebhookEndpointError(`organization ${scope.orgId} has no ${scope.mode} webhook endpoint`);
  return toEndpoint(row);
}

async function makePendingDue(db: Kysely<DB>, scope: EndpointScope): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: sql<Date>`now()` })
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '>', sql<Date>`now()`)
    .execute();
  await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
}

function toEndpoint(row: {
  url: string;
  secret: string;
  signing: WebhookSigning;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}): WebhookEndpoint {
  return {
    url: row.url,
    secret: row.secret,
    signing: row.signing,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
