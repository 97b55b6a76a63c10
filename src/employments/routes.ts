import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { apiViewer, logApiAccess } from '../access-log/service.js';
import type { Kysely } from 'kysely';
import { requireAuth } from '../platform/auth.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { keepAnswer } from '../platform/idempotency.js';
import { listEnvelope, PageQuery, parsePage } from '../platform/pagination.js';
import { parseId } from '../respondents/fields.js';
import { Cancelled, CompleteBody, IdParam, list, success, workflowErrors } from '../respondents/schemas.js';
import type { Respondents } from '../respondents/service.js';
import { employerRespondent } from './page.js';
import { CreateEmploymentBody, EmploymentRecord } from './schemas.js';
import { EmploymentService, employmentNotFound } from './service.js';
import { validateEmployment } from './validate.js';

export interface EmploymentRoutesOptions {
  db: Kysely<DB>;
  respondents: Respondents;
}

const TAGS = ['Employment verifications'];
const BASE = '/v1/verifications/employments';

const scopeOf = (request: FastifyRequest) => ({ orgId: request.auth.orgId, mode: request.auth.mode });

/**
 * Employment history verifications: the list (spec) and create, fetch and cancel (additions),
 * plus the sandbox test helper. The employer answers on the respondent page registered here.
 */
export async function employmentRoutes(parent: FastifyInstance, { db, respondents }: EmploymentRoutesOptions): Promise<void> {
  const service = new EmploymentService(db, respondents);
  respondents.register(employerRespondent(service, () => respondents.now()));

  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', requireAuth(db));
  const security = [{ bearer: [] }];

  app.post(
    BASE,
    {
      schema: {
        tags: TAGS,
        operationId: 'createEmploymentVerification',
        summary: 'Create an employment verification (addition)',
        description:
          "The employer receives a link (email, or the outbox) to confirm or correct the claimed title and dates and to attest. Live mode charges the employment price. " +
          "Test mode never emails the employer: the message waits in the organization's sandbox outbox (portal). " +
          'Live mode answers 429 with Retry-After, creating and charging nothing, past the hourly cap of mails to third parties.',
        security,
        body: CreateEmploymentBody,
        response: { 201: success(EmploymentRecord), ...workflowErrors(400, 402, 409, 429) },
      },
      preValidation: async (request) => {
        request.body ??= {} as never;
      },
    },
    async (request, reply) => {
      const input = validateEmployment(request.body, request.auth.riskLevel, respondents.now(), request.auth.consentRequired);
      void reply.status(201);
      const record = await service.create(request.auth, input, (trx, created) => keepAnswer(trx, request, reply, { status: 'success', data: created }));
      return reply.send({ status: 'success', data: record });
    },
  );

  app.get(
    BASE,
    {
      schema: {
        tags: TAGS,
        operationId: 'listEmploymentVerifications',
        summary: 'List employment history verifications, newest first',
        security,
        querystring: PageQuery,
        response: { 200: list(EmploymentRecord), ...workflowErrors(400) },
      },
    },
    async (request) => {
      const page = parsePage(request.query);
      const { records, total } = await service.list(scopeOf(request), page, apiViewer(request, 'employment'));
      return listEnvelope(records, page, total);
    },
  );

  app.get(
    `${BASE}/:id`,
    {
      schema: {
        tags: TAGS,
        operationId: 'getEmploymentVerification',
        summary: 'Fetch an employment verification (addition)',
        security,
        params: IdParam,
        response: { 200: success(EmploymentRecord), ...workflowErrors(400, 404) },
      },
    },
    async (request) => {
      const data = await service.get(scopeOf(request), parseId(request.params.id, employmentNotFound));
      await logApiAccess(db, request, 'employment', 'view', [data.id]);
      return { status: 'success' as const, data };
    },
  );

  app.delete(
    `${BASE}/:id`,
    {
      schema: {
        tags: TAGS,
        operationId: 'cancelEmploymentVerification',
        summary: 'Cancel an employment verification the employer has not answered (addition)',
        description: 'Refunds the price. A completed or cancelled verification answers 409.',
        security,
        params: IdParam,
        response: { 200: Cancelled, ...workflowErrors(400, 404, 409) },
      },
    },
    async (request) => {
      await service.cancel(scopeOf(request), parseId(request.params.id, employmentNotFound));
      return { status: 'success' as const, data: 'ok' as const };
    },
  );

  app.post(
    '/v1/test-helpers/employments/:id/complete',
    {
      schema: {
        tags: ['Test helpers'],
        operationId: 'completeTestEmploymentVerification',
        summary: 'Complete an employment verification as the employer would (test secret only)',
        description: 'verified: the employer confirms the claim; failed: the employer declines. Sends the same webhook. With a live secret: 404.',
        security,
        params: IdParam,
        body: CompleteBody,
        response: { 200: success(EmploymentRecord), ...workflowErrors(400, 404, 409) },
      },
      preValidation: async (request) => {
        if (request.auth.mode !== 'test') throw new ApiError('NOT_FOUND_ERROR', 'Test helpers exist only in test mode: use a test secret');
      },
    },
    async (request) => ({
      status: 'success' as const,
      data: await service.completeForTest(scopeOf(request), parseId(request.params.id, employmentNotFound), request.body.outcome),
    }),
  );
}
