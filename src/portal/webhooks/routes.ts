import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { logSessionAccess } from '../../access-log/service.js';
import type { Mode } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { DEFAULT_WEBHOOK_SIGNING, getWebhookEndpoint, rotateWebhookSecret, setWebhookEndpoint, WebhookEndpointError, type WebhookEndpoint } from '../../webhooks/endpoints.js';
import { enqueueEvent } from '../../webhooks/events.js';
import { audit, type Actor } from '../audit.js';
import { modeOf, requireMember, requireSession } from '../guard.js';
import type { PortalOptions } from '../plugin.js';
import { ModeQuery, Nullable, OrgParams, PORTAL_TAG, portalErrors, sessionSecurity } from '../schemas.js';
import { DeliveryDetail, DeliveryListQuery, DeliveryPage, DeliverySummary, deliveryDetail, deliveryPage, resendDelivery } from './deliveries.js';

const tags = [PORTAL_TAG];

/** How an endpoint's deliveries are signed; the portal and the console change it (docs/webhooks.md). */
export const WebhookSigning = Type.Union([Type.Literal('standard'), Type.Literal('verifyme'), Type.Literal('both')], {
  description:
    'standard: Standard Webhooks (webhook-signature); verifyme: x-verifyme-signature, the hex HMAC-SHA512 of the raw body keyed with the whole whsec_ secret, for receivers written for VerifyMe/QoreID; both: every header of the two',
});

const Endpoint = Type.Object({
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  url: Nullable(Type.String({ description: 'Where the events of this mode go; null until set' })),
  signing: Nullable(WebhookSigning),
  secretHint: Nullable(Type.String({ description: 'whsec_… and the last four characters of the signing secret' })),
  createdAt: Nullable(Type.String({ format: 'date-time' })),
  updatedAt: Nullable(Type.String({ format: 'date-time' })),
  previousSecretExpiresAt: Nullable(Type.String({ format: 'date-time', description: 'After a rotation: until then the old secret signs too' })),
});

const DeliveryParams = Type.Object({ orgId: Type.String(), deliveryId: Type.String({ maxLength: 20 }) });

function secretHint(secret: string): string {
  return `whsec_…${secret.slice(-4)}`;
}

function endpointView(mode: Mode, endpoint: WebhookEndpoint | undefined, now = new Date()) {
  return {
    mode,
    url: endpoint?.url ?? null,
    signing: endpoint?.signing ?? null,
    secretHint: endpoint ? secretHint(endpoint.secret) : null,
    createdAt: endpoint?.createdAt.toISOString() ?? null,
    updatedAt: endpoint?.updatedAt.toISOString() ?? null,
    previousSecretExpiresAt: endpoint?.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now ? endpoint.previousSecretExpiresAt.toISOString() : null,
  };
}

/** Webhook settings per mode (`?mode=test|live`, test when absent), the delivery log and resends. */
export async function webhookRoutes(parent: FastifyInstance, { db, config }: PortalOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  // Guards run as preValidation: who may call is answered before the input is judged.
  const signedIn = requireSession(db);
  const member = (personId: string): Actor => ({ kind: 'member', personId });

  async function existingEndpoint(orgId: string, mode: Mode): Promise<WebhookEndpoint> {
    const endpoint = await getWebhookEndpoint(db, { orgId, mode });
    if (!endpoint) throw new ApiError('NOT_FOUND_ERROR', `No ${mode} webhook URL is set: set one first (its signing secret is made with it)`);
    return endpoint;
  }

  app.get(
    '/orgs/:orgId/webhooks',
    {
      preValidation: [signedIn, requireMember(db, 'webhooks.read')],
      schema: {
        tags,
        operationId: 'portalGetWebhook',
        summary: "The mode's webhook endpoint: URL, secret hint and times (url null when none is set)",
        security: sessionSecurity,
        params: OrgParams,
        querystring: ModeQuery,
        response: { 200: Endpoint, ...portalErrors(400, 401, 404) },
      },
    },
    async (request) => {
      const mode = modeOf(request.query);
      return endpointView(mode, await getWebhookEndpoint(db, { orgId: request.member.orgId, mode }));
    },
  );

  app.put(
    '/orgs/:orgId/webhooks',
    {
      preValidation: [signedIn, requireMember(db, 'webhooks.manage')],
      schema: {
        tags,
        operationId: 'portalSetWebhook',
        summary: "Set the mode's endpoint URL (http or https, a public address) and how it is signed; the first set makes the signing secret, later ones keep it",
        description: 'Without `signing` a new endpoint signs the Standard Webhooks way and an existing one keeps its choice. Audited: the URL before and after, and a change of signing in a row of its own.',
        security: sessionSecurity,
        params: OrgParams,
        querystring: ModeQuery,
        body: Type.Object({ url: Type.String({ maxLength: 2048 }), signing: Type.Optional(WebhookSigning) }),
        response: { 200: Endpoint, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const mode = modeOf(request.query);
      const { orgId } = request.member;
      const actor = member(request.portal.person.id);
      try {
        const endpoint = await setWebhookEndpoint(
          db,
          { orgId, mode },
          { url: request.body.url, signing: request.body.signing },
          {
            allowPrivateUrls: config.allowPrivateUrls,
            within: async (trx, { before, after }) => {
              const target = `${mode} webhook`;
              await audit(trx, { orgId, actor, action: 'webhook.url_set', target, before: { url: before?.url ?? null }, after: { url: after.url } });
              // A new endpoint's default is no change of signing.
              if (before ? before.signing !== after.signing : after.signing !== DEFAULT_WEBHOOK_SIGNING) {
                await audit(trx, { orgId, actor, action: 'webhook.signing_set', target, before: { signing: before?.signing ?? null }, after: { signing: after.signing } });
              }
            },
          },
        );
        return endpointView(mode, endpoint);
      } catch (err) {
        // The CLI's own words ("webhook URL must use http or https"), naming the field of this body.
        if (err instanceof WebhookEndpointError) throw new ApiError('VALIDATION_ERROR', err.message.replace(/^webhook URL/, 'url'));
        throw err;
      }
    },
  );

  app.post(
    '/orgs/:orgId/webhooks/secret/reveal',
    {
      preValidation: [signedIn, requireMember(db, 'webhooks.manage')],
      schema: {
        tags,
        operationId: 'portalRevealWebhookSecret',
        summary: 'Reveal the signing secret (whsec_…) to configure a receiver; the reveal is written to the audit log',
        security: sessionSecurity,
        params: OrgParams,
        querystring: ModeQuery,
        response: { 200: Type.Object({ secret: Type.String() }), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const mode = modeOf(request.query);
      const { orgId } = request.member;
      const endpoint = await existingEndpoint(orgId, mode);
      await audit(db, { orgId, actor: member(request.portal.person.id), action: 'webhook.secret_revealed', target: `${mode} webhook` });
      return { secret: endpoint.secret };
    },
  );

  app.post(
    '/orgs/:orgId/webhooks/secret/rotate',
    {
      preValidation: [signedIn, requireMember(db, 'webhooks.manage')],
      schema: {
        tags,
        operationId: 'portalRotateWebhookSecret',
        summary: 'Make a new signing secret; the old one also signs for 24 hours, so the receiver can switch over',
        security: sessionSecurity,
        params: OrgParams,
        querystring: ModeQuery,
        response: {
          200: Type.Object({ secret: Type.String(), secretHint: Type.String(), previousSecretExpiresAt: Type.String({ format: 'date-time' }) }),
          ...portalErrors(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const mode = modeOf(request.query);
      const { orgId } = request.member;
      await existingEndpoint(orgId, mode);
      const endpoint = await db.transaction().execute(async (trx) => {
        const rotated = await rotateWebhookSecret(trx, { orgId, mode });
        await audit(trx, {
          orgId,
          actor: member(request.portal.person.id),
          action: 'webhook.secret_rotated',
          target: `${mode} webhook`,
          after: { secretHint: secretHint(rotated.secret), previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() },
        });
        return rotated;
      });
      return { secret: endpoint.secret, secretHint: secretHint(endpoint.secret), previousSecretExpiresAt: endpoint.previousSecretExpiresAt!.toISOString() };
    },
  );

  app.post(
    '/orgs/:orgId/webhooks/test',
    {
      preValidation: [signedIn, requireMember(db, 'webhooks.manage')],
      schema: {
        tags,
        operationId: 'portalSendTestWebhook',
        summary: 'Queue a webhook.test event to the endpoint: signed, retried and logged like every event',
        security: sessionSecurity,
        params: OrgParams,
        querystring: ModeQuery,
        response: {
          201: Type.Object({ id: Type.Integer({ description: 'The delivery, as in the log' }), webhookId: Type.String({ description: 'Its webhook-id header' }) }),
          ...portalErrors(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const mode = modeOf(request.query);
      const { orgId } = request.member;
      await existingEndpoint(orgId, mode);
      const sent = await db.transaction().execute(async (trx) => {
        const webhookId = await enqueueEvent(trx, {
          orgId,
          mode,
          type: 'webhook.test',
          data: { message: 'A test event from the Vouch portal: your endpoint receives and verifies Vouch webhooks.', mode },
        });
        const row = await trx.selectFrom('webhook_deliveries').select('id').where('message_id', '=', webhookId).executeTakeFirstOrThrow();
        await audit(trx, { orgId, actor: member(request.portal.person.id), action: 'webhook.test_sent', target: `${mode} webhook`, after: { webhookId } });
        return { id: Number(row.id), webhookId };
      });
      return reply.status(201).send(sent);
    },
  );

  app.get(
    '/orgs/:orgId/webhook-deliveries',
    {
      preValidation: [signedIn, requireMember(db, 'webhooks.read')],
      schema: {
        tags,
        operationId: 'portalListWebhookDeliveries',
        summary: "The mode's webhook deliveries, newest first, filterable by status",
        security: sessionSecurity,
        params: OrgParams,
        querystring: DeliveryListQuery,
        response: { 200: DeliveryPage, ...portalErrors(400, 401, 404) },
      },
    },
    async (request) => deliveryPage(db, { orgId: request.member.orgId, mode: modeOf(request.query) }, request.query, config.webhookRetentionDays),
  );

  app.get(
    '/orgs/:orgId/webhook-deliveries/:deliveryId',
    {
      preValidation: [signedIn, requireMember(db, 'webhooks.read')],
      schema: {
        tags,
        operationId: 'portalGetWebhookDelivery',
        summary: 'One delivery of the mode: the event body and every attempt (time, status code, duration, error, the start of the answer)',
        description:
          "Identity-document numbers, phone numbers, birth dates, email and IP addresses in the body (and in the attempts' errors and the receiver's answers) are masked and photos are not shown, for every role. Viewing a verification's event is written to the personal-data access log as a view of that verification.",
        security: sessionSecurity,
        params: DeliveryParams,
        querystring: ModeQuery,
        response: { 200: DeliveryDetail, ...portalErrors(400, 401, 404) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const { detail, viewed } = await deliveryDetail(db, scope, request.params.deliveryId);
      if (viewed) await logSessionAccess(db, request, scope, viewed.kind, 'view', [viewed.id]);
      return detail;
    },
  );

  app.post(
    '/orgs/:orgId/webhook-deliveries/:deliveryId/resend',
    {
      preValidation: [signedIn, requireMember(db, 'webhooks.manage')],
      schema: {
        tags,
        operationId: 'portalResendWebhookDelivery',
        summary: 'Send a delivery again now, with the same webhook-id and a fresh retry schedule (as `vouch webhook redeliver`)',
        description: 'A delivery recorded while no endpoint was set (sendable false) has no body to send: 409.',
        security: sessionSecurity,
        params: DeliveryParams,
        querystring: ModeQuery,
        response: { 200: DeliverySummary, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      return resendDelivery(db, scope, request.params.deliveryId, member(request.portal.person.id));
    },
  );
}
