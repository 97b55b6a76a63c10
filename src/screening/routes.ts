import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { apiViewer, logApiAccess } from '../access-log/service.js';
import { requireAuth } from '../platform/auth.js';
import type { DB } from '../platform/db/schema.js';
import { keepAnswer } from '../platform/idempotency.js';
import { listEnvelope, PageQuery, parsePage } from '../platform/pagination.js';
import { parseId } from '../respondents/fields.js';
import { Cancelled, IdParam, list, success, workflowErrors } from '../respondents/schemas.js';
import { SCREENING_BILLABLES } from './billing.js';
import { CreateScreeningBody, ScreeningRecord } from './schemas.js';
import { screeningNotFound, type ScreeningService } from './service.js';

export interface ScreeningRoutesOptions {
  db: Kysely<DB>;
  service: ScreeningService;
}

const TAGS = ['Screenings'];
const BASE = '/v1/verifications/screenings';

const scopeOf = (request: FastifyRequest) => ({ orgId: request.auth.orgId, mode: request.auth.mode });

/** Sanctions, PEP and watchlist screening (docs/screening.md): create, fetch, list, end monitoring. */
export async function screeningRoutes(parent: FastifyInstance, { db, service }: ScreeningRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', requireAuth(db));
  const security = [{ bearer: [] }];

  app.post(
    BASE,
    {
      schema: {
        tags: TAGS,
        operationId: 'createScreening',
        summary: 'Screen a person or an organization against the sanctions, PEP and watchlists',
        description:
          `Answers at once with the hits at or above the threshold, each waiting for review. Live mode charges the screening price (type \`${SCREENING_BILLABLES.screening.type}\`) once; ` +
          `a monitored screening is then charged \`${SCREENING_BILLABLES.screening_monitoring.type}\` each month after the first. Test mode is free and screens only the built-in sandbox list. ` +
          'A monitored screening with the reference of a monitored one of this account and mode replaces it: the older one stops being monitored. 503 while the operator has loaded no list.',
        security,
        body: CreateScreeningBody,
        response: { 201: success(ScreeningRecord), ...workflowErrors(400, 402, 503) },
      },
      preValidation: async (request) => {
        request.body ??= {} as never;
      },
    },
    async (request, reply) => {
      void reply.status(201);
      const record = await service.create(request.auth, request.body, (trx, created) => keepAnswer(trx, request, reply, { status: 'success', data: created }));
      return reply.send({ status: 'success', data: record });
    },
  );

  app.get(
    BASE,
    {
      schema: {
        tags: TAGS,
        operationId: 'listScreenings',
        summary: 'List screenings, newest first',
        security,
        querystring: PageQuery,
        response: { 200: list(ScreeningRecord), ...workflowErrors(400) },
      },
    },
    async (request) => {
      const page = parsePage(request.query);
      const { records, total } = await service.list(scopeOf(request), page, apiViewer(request, 'screening'));
      return listEnvelope(records, page, total);
    },
  );

  app.get(
    `${BASE}/:id`,
    {
      schema: {
        tags: TAGS,
        operationId: 'getScreening',
        summary: 'Fetch a screening with its hits and their reviews',
        security,
        params: IdParam,
        response: { 200: success(ScreeningRecord), ...workflowErrors(400, 404) },
      },
    },
    async (request) => {
      const data = await service.get(scopeOf(request), parseId(request.params.id, screeningNotFound));
      await logApiAccess(db, request, 'screening', 'view', [data.id]);
      return { status: 'success' as const, data };
    },
  );

  app.delete(
    `${BASE}/:id`,
    {
      schema: {
        tags: TAGS,
        operationId: 'endScreeningMonitoring',
        summary: 'End the monitoring of a screening',
        description: 'The screening and its hits stay; it is no longer screened again when a list changes. Nothing is refunded.',
        security,
        params: IdParam,
        response: { 200: Cancelled, ...workflowErrors(400, 404) },
      },
    },
    async (request) => {
      await service.endMonitoring(scopeOf(request), parseId(request.params.id, screeningNotFound));
      return { status: 'success' as const, data: 'ok' as const };
    },
  );
}
