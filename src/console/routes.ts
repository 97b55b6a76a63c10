import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isUuid } from '../accounts/service.js';
import { ApiError } from '../platform/errors.js';
import { AccessRequest } from '../portal/access/routes.js';
import { AccessRequests, MAX_REASON_LENGTH } from '../portal/access/service.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Nullable, OrgParams, PayloadType, PortalPage, portalErrors, RiskLevel, sessionSecurity } from '../portal/schemas.js';
import { operatorActor, requireOperator } from './guard.js';
import { disableOrganization, listOrganizations } from './organizations.js';

export const CONSOLE_TAG = 'Console';

/** A request with its organization: what the queue lists. */
const AccessRequestEntry = Type.Object({ ...AccessRequest.properties, orgId: Type.String(), orgName: Type.String() });

const OrganizationSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean({ description: 'Live API access on' }),
  riskLevel: RiskLevel,
  payloadType: PayloadType,
  balance: Type.Integer({ description: 'Wallet, in kobo' }),
  members: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  lastActivityAt: Nullable(Type.String({ format: 'date-time', description: 'The latest lookup or verification, live or test' })),
});

/** The operator console's JSON API under `/api/console`: operators only (session cookie), errors in style A. */
export async function consoleRoutes(parent: FastifyInstance, { db, config, mail }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const requests = new AccessRequests(db, { mail, publicUrl: config.publicUrl });
  app.addHook('onClose', () => requests.flush());
  // Who may call is answered before the input is judged.
  const operatorsOnly = [requireSession(db), requireOperator];
  const orgIdOf = (orgId: string) => {
    if (!isUuid(orgId)) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId}`);
    return orgId;
  };

  app.get(
    '/console/access-requests',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleListAccessRequests',
        summary: 'Requests for live API access from every organization, newest first',
        security: sessionSecurity,
        querystring: Type.Object({
          status: Type.Optional(AccessRequest.properties.status),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
        }),
        response: { 200: Type.Object({ data: Type.Array(AccessRequestEntry) }), ...portalErrors(400, 401, 403) },
      },
    },
    async (request) => {
      const { status, limit = 50 } = request.query;
      return { data: await requests.listAll({ status, limit }) };
    },
  );

  app.post(
    '/console/access-requests/:orgId/approve',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleApproveAccess',
        summary: "Enable an organization's live API access with a risk level and payload type (as asked, or changed), approving its pending request",
        description: 'The customer sees the outcome in the portal and gets a mail; the audit log names the operator.',
        security: sessionSecurity,
        params: OrgParams,
        body: Type.Object({ riskLevel: RiskLevel, payloadType: PayloadType }),
        response: { 200: Type.Object({ ok: Type.Literal(true), requestId: Nullable(Type.String()) }), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const requestId = await requests.approve(orgIdOf(request.params.orgId), request.body, operatorActor(request));
      return { ok: true as const, requestId: requestId ?? null };
    },
  );

  app.post(
    '/console/access-requests/:orgId/decline',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleDeclineAccess',
        summary: "Decline an organization's pending access request with a reason the customer sees",
        security: sessionSecurity,
        params: OrgParams,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: MAX_REASON_LENGTH }) }),
        response: { 200: Type.Object({ ok: Type.Literal(true), requestId: Type.String() }), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const requestId = await requests.decline(orgIdOf(request.params.orgId), request.body.reason, operatorActor(request));
      return { ok: true as const, requestId };
    },
  );

  app.get(
    '/console/organizations',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleListOrganizations',
        summary: 'Organizations, newest first, searched by name or id',
        security: sessionSecurity,
        querystring: Type.Object({
          q: Type.Optional(Type.String({ maxLength: 200, description: 'Part of the name, or the whole id' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
          offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
        }),
        response: { 200: PortalPage(OrganizationSummary), ...portalErrors(400, 401, 403) },
      },
    },
    async (request) => {
      const { q, limit = 20, offset = 0 } = request.query;
      const { rows, total } = await listOrganizations(db, { q, limit, offset });
      return { data: rows, total, limit, offset };
    },
  );

  app.post(
    '/console/organizations/:orgId/disable',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleDisableAccess',
        summary: "Turn an organization's live API access off, with a reason for the audit log",
        description: 'Its live secret answers 403 at once here and within 5 seconds on other API processes; test secrets keep working. Approving access turns it on again.',
        security: sessionSecurity,
        params: OrgParams,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 1000 }) }),
        response: { 200: Type.Object({ ok: Type.Literal(true) }), ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      await disableOrganization(db, orgIdOf(request.params.orgId), request.body.reason, operatorActor(request));
      return { ok: true as const };
    },
  );
}
