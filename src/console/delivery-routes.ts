import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isUuid } from '../accounts/service.js';
import { ApiError } from '../platform/errors.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Nullable, PortalPage, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { DeliverySummary, resendDelivery, resendFailedDeliveries } from '../portal/webhooks/deliveries.js';
import { deliveryScope, failingEndpoints, listConsoleDeliveries, webhookBacklog } from './deliveries.js';
import { operatorActor, requireOperator } from './guard.js';
import { EXPIRED_WINDOW_DAYS, invitationCounts, listInvitations, resendInvitation } from './invitations.js';
import { CONSOLE_TAG } from './routes.js';

const tags = [CONSOLE_TAG];
const Mode = Type.Union([Type.Literal('test'), Type.Literal('live')]);
const DateTime = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const OrgFilter = Type.String({ maxLength: 64, description: 'Only this organization (its id)' });

const BacklogRow = Type.Object({
  orgId: Type.String(),
  orgName: Type.String(),
  mode: Mode,
  waiting: Type.Integer({ description: 'Pending, not attempted yet (new, held by an open breaker, or resent)' }),
  retrying: Type.Integer({ description: 'Pending after at least one attempt' }),
  failed: Type.Integer({ description: 'Failed for good (every retry used), until resent or removed by retention' }),
  oldestPendingAt: Nullable(DateTime('When the oldest pending delivery was made')),
  lastFailedAt: Nullable(DateTime('The latest failure for good')),
  endpoint: Nullable(Type.String({ description: "The endpoint URL's origin; null when the organization set none for this mode" })),
  circuitOpen: Type.Boolean({ description: "A worker holds this URL's deliveries: its circuit breaker is open" }),
});

const FailingEndpoint = Type.Object({
  orgId: Type.String(),
  orgName: Type.String(),
  mode: Mode,
  endpoint: Type.String({ description: "The URL's origin" }),
  openedAt: DateTime('When this outage began'),
  probeAt: DateTime("When the cool-down ends: the URL's next due delivery after it is the probe"),
  failures: Type.Integer({ description: 'Consecutive failed attempts when it last opened' }),
  lastStatusCode: Nullable(Type.Integer({ description: 'null when no answer came (refused, timed out)' })),
  lastError: Nullable(Type.String()),
  pending: Type.Integer({ description: 'Its pending deliveries, held until the probe answers' }),
});

const ConsoleDelivery = Type.Object({
  id: Type.Integer(),
  webhookId: Type.String(),
  orgId: Type.String(),
  orgName: Type.String(),
  mode: Mode,
  type: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attemptCount: Type.Integer({ description: 'Attempts so far, resends included' }),
  lastStatusCode: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  nextAttemptAt: Nullable(DateTime('While pending: when the next attempt is due')),
  createdAt: DateTime(),
});

const InvitationKind = Type.Union([Type.Literal('guarantor'), Type.Literal('employment')]);
const InvitationStatus = Type.Union([Type.Literal('pending'), Type.Literal('expired')]);

const Invitation = Type.Object({
  kind: InvitationKind,
  verificationId: Type.Integer(),
  reference: Type.String({ description: "The customer's reference of the verification" }),
  orgId: Type.String(),
  orgName: Type.String(),
  mode: Mode,
  status: InvitationStatus,
  recipient: Nullable(Type.String({ description: "The respondent's email, masked (first letter and domain)" })),
  createdAt: DateTime('When the invitation was made'),
  sentAt: Nullable(DateTime('When the mail server took it; null when not sent (no SMTP_URL, or it failed)')),
  sendError: Nullable(Type.String({ description: "The mail server's refusal, when the last send failed" })),
  expiresAt: DateTime('When the link stops working'),
});

const InvitationCounts = Type.Object({
  orgId: Type.String(),
  orgName: Type.String(),
  mode: Mode,
  pending: Type.Integer(),
  expired: Type.Integer({ description: `Expired unanswered in the last ${EXPIRED_WINDOW_DAYS} days` }),
});

/** Webhook backlog, failing endpoints and resends; respondent invitations pending or expired. Operators only. */
export async function consoleDeliveryRoutes(parent: FastifyInstance, { db, config, respondents }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const operatorsOnly = [requireSession(db), requireOperator];
  const mailConfigured = !!config.smtpUrl;
  const orgFilter = (orgId: string | undefined) => {
    if (orgId !== undefined && !isUuid(orgId)) throw new ApiError('VALIDATION_ERROR', `orgId must be an organization id (a UUID), got ${orgId.slice(0, 64)}`);
    return orgId;
  };

  app.get(
    '/console/deliveries/backlog',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleWebhookBacklog',
        summary: 'The webhook backlog per organization and mode: waiting, retrying, failed, the oldest waiting, and whether the endpoint is failing',
        security: sessionSecurity,
        querystring: Type.Object({ orgId: Type.Optional(OrgFilter), mode: Type.Optional(Mode) }),
        response: { 200: Type.Object({ data: Type.Array(BacklogRow) }), ...portalErrors(400, 401, 403) },
      },
    },
    async (request) => ({ data: await webhookBacklog(db, { orgId: orgFilter(request.query.orgId), mode: request.query.mode }) }),
  );

  app.get(
    '/console/deliveries/failing-endpoints',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleFailingEndpoints',
        summary: 'Webhook endpoints whose circuit breaker is open: since when, the last error, the next probe',
        security: sessionSecurity,
        response: { 200: Type.Object({ data: Type.Array(FailingEndpoint) }), ...portalErrors(401, 403) },
      },
    },
    async () => ({ data: await failingEndpoints(db) }),
  );

  app.get(
    '/console/deliveries',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleListDeliveries',
        summary: 'Failed (or pending) webhook deliveries of every organization, newest first',
        security: sessionSecurity,
        querystring: Type.Object({
          status: Type.Optional(Type.Union([Type.Literal('failed'), Type.Literal('pending')], { default: 'failed' })),
          orgId: Type.Optional(OrgFilter),
          mode: Type.Optional(Mode),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
          offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, default: 0 })),
        }),
        response: { 200: PortalPage(ConsoleDelivery), ...portalErrors(400, 401, 403) },
      },
    },
    async (request) => {
      const { status = 'failed', mode, limit = 25, offset = 0 } = request.query;
      const { rows, total } = await listConsoleDeliveries(db, { status, orgId: orgFilter(request.query.orgId), mode, limit, offset });
      return { data: rows, total, limit, offset };
    },
  );

  app.post(
    '/console/deliveries/:deliveryId/resend',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleResendDelivery',
        summary: "Send a delivery again now, with the same webhook-id and a fresh retry schedule, as the customer's resend does",
        description: 'Audited with the operator (webhook.resent) in the same transaction.',
        security: sessionSecurity,
        params: Type.Object({ deliveryId: Type.String({ maxLength: 20 }) }),
        response: { 200: Type.Object({ ...DeliverySummary.properties, orgId: Type.String(), mode: Mode }), ...portalErrors(401, 403, 404) },
      },
    },
    async (request) => {
      const { deliveryId } = request.params;
      const scope = await deliveryScope(db, deliveryId);
      if (!scope) throw new ApiError('NOT_FOUND_ERROR', `No webhook delivery ${deliveryId.slice(0, 20)}`);
      return { ...(await resendDelivery(db, scope, deliveryId, operatorActor(request))), ...scope };
    },
  );

  app.post(
    '/console/deliveries/resend-failed',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleResendFailedDeliveries',
        summary: "Send every failed delivery of an organization's endpoint (one mode) again now",
        description: 'One transaction with one audit row (webhook.resent_failed) naming the operator and how many.',
        security: sessionSecurity,
        body: Type.Object({ orgId: Type.String({ maxLength: 64 }), mode: Mode }),
        response: { 200: Type.Object({ resent: Type.Integer() }), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { orgId, mode } = request.body;
      const org = isUuid(orgId) ? await db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst() : undefined;
      if (!org) throw new ApiError('NOT_FOUND_ERROR', `No organization with id ${orgId.slice(0, 64)}`);
      return { resent: await resendFailedDeliveries(db, { orgId, mode }, operatorActor(request)) };
    },
  );

  app.get(
    '/console/invitations',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleListInvitations',
        summary: 'Guarantor and employer invitations unanswered: pending (soonest to expire first) or expired (latest first)',
        description: `Expired ones are listed for ${EXPIRED_WINDOW_DAYS} days. Respondents' emails are masked.`,
        security: sessionSecurity,
        querystring: Type.Object({
          status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('expired')], { default: 'pending' })),
          orgId: Type.Optional(OrgFilter),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
          offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, default: 0 })),
        }),
        response: {
          200: Type.Object({ ...PortalPage(Invitation).properties, mailConfigured: Type.Boolean({ description: 'Whether SMTP_URL is set, so invitations can be sent again' }) }),
          ...portalErrors(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { status = 'pending', limit = 25, offset = 0 } = request.query;
      const { rows, total } = await listInvitations(db, { status, orgId: orgFilter(request.query.orgId), limit, offset });
      return { data: rows, total, limit, offset, mailConfigured };
    },
  );

  app.get(
    '/console/invitations/counts',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleInvitationCounts',
        summary: 'Pending and recently expired invitations per organization and mode',
        security: sessionSecurity,
        response: {
          200: Type.Object({ data: Type.Array(InvitationCounts), expiredWindowDays: Type.Integer(), mailConfigured: Type.Boolean() }),
          ...portalErrors(401, 403),
        },
      },
    },
    async () => ({ data: await invitationCounts(db), expiredWindowDays: EXPIRED_WINDOW_DAYS, mailConfigured }),
  );

  app.post(
    '/console/invitations/:kind/:verificationId/resend',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleResendInvitation',
        summary: "Send a pending invitation's mail again (the same link and expiry), as `vouch outbox send` does",
        description: "Needs SMTP_URL (409 without). Audited with the operator and the outcome; a refusal answers sent: false with the mail server's words.",
        security: sessionSecurity,
        params: Type.Object({ kind: InvitationKind, verificationId: Type.String({ maxLength: 20 }) }),
        response: { 200: Type.Object({ sent: Type.Boolean(), error: Nullable(Type.String()) }), ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const { kind, verificationId } = request.params;
      const id = /^\d{1,15}$/.test(verificationId) ? Number(verificationId) : NaN;
      if (!Number.isSafeInteger(id)) throw new ApiError('NOT_FOUND_ERROR', `No unanswered ${kind} invitation for verification ${verificationId.slice(0, 20)}`);
      return resendInvitation(db, respondents, { kind, verificationId: id, mailConfigured }, operatorActor(request));
    },
  );
}
