import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { isUuid } from '../accounts/service.js';
import { ApiError } from '../platform/errors.js';
import { dayRange, lagosDate } from '../portal/billing/calendar.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Nullable, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { COUNT_CAP, MAX_FILTERED_OFFSET } from '../portal/verifications/counting.js';
import { auditActions, auditCsv, auditPage, type AuditFilter } from './audit-log.js';
import { requireOperator } from './guard.js';
import { CONSOLE_TAG } from './routes.js';

const tags = [CONSOLE_TAG];
const Day = (description: string) => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: `${description} (YYYY-MM-DD, a day in Lagos time)` });
const ActorKind = Type.Union([Type.Literal('member'), Type.Literal('operator'), Type.Literal('cli'), Type.Literal('system')], {
  description: 'member: a customer in the portal; operator: in the console; cli: the server command line; system: the service itself',
});

const AuditFilters = {
  orgId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this organization (its id)' })),
  actor: Type.Optional(Type.String({ maxLength: 200, description: 'Part of the email or name of the person who acted' })),
  actorKind: Type.Optional(ActorKind),
  action: Type.Optional(Type.String({ maxLength: 100, pattern: '^[a-z_]+(\\.[a-z_]*)?$', description: 'An action (funding.confirmed), or a family ending in a dot (funding.)' })),
  from: Type.Optional(Day('First day')),
  to: Type.Optional(Day('Last day, inclusive')),
  q: Type.Optional(Type.String({ maxLength: 200, description: "Part of the target (a reference, an email, a webhook id), or of the email or name of the person it names" })),
};
const AuditQuery = Type.Object({
  ...AuditFilters,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_FILTERED_OFFSET, default: 0 })),
});
const AuditCsvQuery = Type.Object(AuditFilters);

const AuditEvent = Type.Object({
  id: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  orgId: Nullable(Type.String()),
  orgName: Nullable(Type.String({ description: 'null for actions of no organization (an operator made)' })),
  actor: Type.Object({
    kind: ActorKind,
    personId: Nullable(Type.String()),
    name: Nullable(Type.String({ description: 'null for the command line and the system, and for a person since deleted' })),
    email: Nullable(Type.String()),
  }),
  action: Type.String({ description: 'A dotted verb: member.role_changed, funding.confirmed, webhook.resent, …' }),
  target: Nullable(Type.String({ description: 'What was acted on: a reference, an email, a person id, a webhook id, …' })),
  targetPerson: Nullable(Type.Object({ name: Type.String(), email: Type.String() }, { description: 'The person a target id names' })),
  before: Type.Unknown({ description: 'The state before (JSON), or null' }),
  after: Type.Unknown({ description: 'The state after (JSON), or null' }),
});

function filterOf(query: Static<typeof AuditCsvQuery>): AuditFilter {
  if (query.orgId !== undefined && !isUuid(query.orgId)) throw new ApiError('VALIDATION_ERROR', `orgId must be an organization id (a UUID), got ${query.orgId}`);
  return { orgId: query.orgId, actor: query.actor, actorKind: query.actorKind, action: query.action, q: query.q, ...dayRange(query.from, query.to) };
}

/** The audit log of operator and customer actions: filtered, paged newest first, exported as CSV. Operators only. */
export async function consoleAuditRoutes(parent: FastifyInstance, { db }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const operatorsOnly = [requireSession(db), requireOperator];

  app.get(
    '/console/audit',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleListAuditEvents',
        summary: 'The audit log, newest first: who did what to what, before and after; filtered by organization, actor, action, days and text',
        security: sessionSecurity,
        querystring: AuditQuery,
        response: {
          200: Type.Object({
            data: Type.Array(AuditEvent),
            total: Type.Integer({ description: `How many events match, counted up to ${COUNT_CAP}` }),
            totalCapped: Type.Boolean({ description: `True when more than ${COUNT_CAP} match` }),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
          ...portalErrors(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { limit = 50, offset = 0 } = request.query;
      const { rows, total, totalCapped } = await auditPage(db, filterOf(request.query), { limit, offset });
      return { data: rows, total, totalCapped, limit, offset };
    },
  );

  app.get(
    '/console/audit/actions',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleListAuditActions',
        summary: 'Every action the audit log holds, for its filter',
        security: sessionSecurity,
        response: { 200: Type.Object({ data: Type.Array(Type.String()) }), ...portalErrors(401, 403) },
      },
    },
    async () => ({ data: await auditActions(db) }),
  );

  app.get(
    '/console/audit.csv',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleExportAuditEvents',
        summary: 'The filtered audit log as a CSV download, newest first',
        description:
          'Columns: id, created_at (ISO 8601, UTC), organization_id, organization, actor_kind, actor_name, actor_email, action, target, target_person, before (JSON), after (JSON). ' +
          'RFC 4180 quoting; text cells that begin with = + - or @ are prefixed with an apostrophe so spreadsheets never run them. Read from the database in batches.',
        security: sessionSecurity,
        querystring: AuditCsvQuery,
        produces: ['text/csv'],
        response: { 200: Type.String({ description: 'text/csv; charset=utf-8' }), ...portalErrors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const filter = filterOf(request.query);
      const name = `vouch-audit-${request.query.from ?? 'start'}-to-${request.query.to ?? lagosDate(new Date())}.csv`;
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store')
        // A stream read in batches as the client takes it; the schema documents the body.
        .send(Readable.from(auditCsv(db, filter)) as unknown as string);
    },
  );
}
