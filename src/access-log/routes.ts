import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { consentRequired, setConsentRequired } from '../consent/setting.js';
import { operatorActor, requireOperator } from '../console/guard.js';
import { CONSOLE_TAG } from '../console/routes.js';
import { ApiError } from '../platform/errors.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Nullable, OrgParams, PortalPage, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { ACCESS_RESOURCES, listAccess } from './service.js';

const ActorKind = Type.Union([Type.Literal('api'), Type.Literal('member'), Type.Literal('operator'), Type.Literal('agent'), Type.Literal('cli')]);
const Channel = Type.Union([Type.Literal('api'), Type.Literal('portal'), Type.Literal('console'), Type.Literal('field'), Type.Literal('cli')]);

const AccessEntry = Type.Object({
  id: Type.Integer({ description: 'The access; a list page is one access showing several records, one entry each' }),
  position: Type.Integer({ minimum: 1, description: "The record's place among those the access showed (1 for a single view)" }),
  at: Type.String({ format: 'date-time' }),
  orgId: Nullable(Type.String()),
  orgName: Nullable(Type.String()),
  mode: Nullable(Type.Union([Type.Literal('test'), Type.Literal('live')])),
  actor: Type.Object({
    kind: ActorKind,
    id: Nullable(Type.String({ description: 'api: the API secret id; member and operator: the person id; cli: null' })),
    name: Nullable(Type.String({ description: "The person's name (member, operator)" })),
  }),
  channel: Channel,
  action: Type.Union([Type.Literal('view'), Type.Literal('list'), Type.Literal('export')]),
  resource: Type.String({ description: `What was read: ${ACCESS_RESOURCES.join(', ')}` }),
  resourceId: Nullable(Type.String({ description: "The resource's internal id (a verification's id); null for an export of many" })),
  ip: Nullable(Type.String({ description: 'The address the request came from (null for the command line)' })),
});

const AccessQuery = Type.Object({
  orgId: Type.Optional(Type.String({ description: 'One organization' })),
  resource: Type.Optional(Type.String({ maxLength: 40, description: `One kind: ${ACCESS_RESOURCES.join(', ')}` })),
  resourceId: Type.Optional(Type.String({ maxLength: 40, description: 'One resource (with resource)' })),
  actorId: Type.Optional(Type.String({ maxLength: 80, description: "An API secret's or a person's id" })),
  actorKind: Type.Optional(ActorKind),
  channel: Type.Optional(Channel),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'From this instant (included)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Up to this instant (included)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});

const ConsentSetting = Type.Object({ orgId: Type.String(), consentRequired: Type.Boolean() });

/**
 * The operator's side of data protection (issue 12, points 4 and 5): who read personal data
 * (the access log), and the organization setting that makes consent required. Operators only.
 */
export async function consoleAccessLogRoutes(parent: FastifyInstance, { db }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const operatorsOnly = [requireSession(db), requireOperator];

  app.get(
    '/console/personal-data-access',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleListPersonalDataAccess',
        summary: 'Who viewed or exported personal data: API secrets, portal members, operators, the command line; newest first',
        description: 'Filters combine. The log holds no personal data: resources are named by kind and internal id.',
        security: sessionSecurity,
        querystring: AccessQuery,
        response: { 200: PortalPage(AccessEntry), ...portalErrors(400, 401, 403) },
      },
    },
    async (request) => {
      const { orgId, resource, resourceId, actorId, actorKind, channel, from, to, limit = 50, offset = 0 } = request.query;
      const fromDate = from === undefined ? undefined : new Date(from);
      const toDate = to === undefined ? undefined : new Date(to);
      if ((fromDate && Number.isNaN(fromDate.getTime())) || (toDate && Number.isNaN(toDate.getTime()))) {
        throw new ApiError('VALIDATION_ERROR', 'from and to must be ISO 8601 date-times');
      }
      if (fromDate && toDate && fromDate > toDate) throw new ApiError('VALIDATION_ERROR', 'from must not be after to');
      if (orgId !== undefined && !/^[0-9a-f-]{36}$/i.test(orgId)) throw new ApiError('VALIDATION_ERROR', 'orgId must be an organization id (a UUID)');
      const { rows, total } = await listAccess(db, { orgId, resource, resourceId, actorId, actorKind, channel, from: fromDate, to: toDate }, { limit, offset });
      return { data: rows, total, limit, offset };
    },
  );

  app.get(
    '/console/organizations/:orgId/consent',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleGetConsentSetting',
        summary: 'Whether the organization requires consent on every identity lookup and workflow creation',
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: ConsentSetting, ...portalErrors(401, 403, 404) },
      },
    },
    async (request) => ({ orgId: request.params.orgId, consentRequired: await consentRequired(db, request.params.orgId) }),
  );

  app.put(
    '/console/organizations/:orgId/consent',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleSetConsentSetting',
        summary: 'Make consent required (or optional) for the organization: without it, its requests answer 400',
        description: 'The audit log names the operator.',
        security: sessionSecurity,
        params: OrgParams,
        body: Type.Object({ consentRequired: Type.Boolean() }),
        response: { 200: ConsentSetting, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => setConsentRequired(db, request.params.orgId, request.body.consentRequired, operatorActor(request)),
  );
}
