import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { apiViewer, logApiAccess } from '../access-log/service.js';
import type { Kysely } from 'kysely';
import { onAddressFinished } from '../addresses/service.js';
import type { FileUrls } from '../files/urls.js';
import type { IdentityLookups } from '../identities/lookups.js';
import { requireAuth } from '../platform/auth.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { keepAnswer } from '../platform/idempotency.js';
import { listEnvelope, PageQuery, parsePage } from '../platform/pagination.js';
import { parseId, requireMinimumLevel } from '../respondents/fields.js';
import { Cancelled, CompleteBody, IdParam, list, success, workflowErrors } from '../respondents/schemas.js';
import type { Respondents } from '../respondents/service.js';
import { guarantorRespondent } from './page.js';
import { CreateGuarantorBody, GuarantorRecord } from './schemas.js';
import { GuarantorService, guarantorNotFound } from './service.js';
import { validateGuarantor } from './validate.js';

export interface GuarantorSetup {
  db: Kysely<DB>;
  respondents: Respondents;
  lookups: IdentityLookups;
  fileUrls: FileUrls;
  log: FastifyInstance['log'];
}

/**
 * The app's one guarantor service: it answers on the respondent pages and follows the address
 * verifications it starts. The API routes and the portal both create through it. Returns it with
 * the function that stops it following addresses.
 */
export function startGuarantors({ db, respondents, lookups, fileUrls, log }: GuarantorSetup): { service: GuarantorService; stop(): void } {
  const service = new GuarantorService(db, { respondents, registry: (mode) => lookups.registry(mode), fileUrls, log });
  respondents.register(guarantorRespondent(service, () => respondents.now()));
  return { service, stop: onAddressFinished(service.addressFinished) };
}

export interface GuarantorRoutesOptions {
  db: Kysely<DB>;
  respondents: Respondents;
  service: GuarantorService;
}

const TAGS = ['Guarantor verifications'];
const BASE = '/v1/verifications/guarantors';
/** The sample request's path (spec); answered like the documented one, hidden from the OpenAPI document. */
const ALIAS = '/v1/verifications/guarantor';

const scopeOf = (request: FastifyRequest) => ({ orgId: request.auth.orgId, mode: request.auth.mode });

/**
 * Guarantor verifications: create (spec), and fetch, list and cancel (additions, in the shapes
 * of the address endpoints), plus the sandbox test helper. The guarantor answers on the
 * respondent page this plugin registers with `respondents`.
 */
export async function guarantorRoutes(parent: FastifyInstance, options: GuarantorRoutesOptions): Promise<void> {
  const { db, respondents, service } = options;

  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', requireAuth(db));
  const security = [{ bearer: [] }];

  for (const path of [BASE, ALIAS]) {
    const hide = path === ALIAS;
    app.post(
      path,
      {
        schema: {
          hide,
          tags: TAGS,
          operationId: 'createGuarantorVerification',
          summary: 'Create a guarantor verification',
          description:
            'The guarantor receives a link (email, or the outbox) to accept or decline and to confirm their identity with an ID of an accepted type. ' +
            'Needs an account risk level of LOW or higher. Live mode charges the guarantor price. ' +
            "Test mode never emails the guarantor: the message waits in the organization's sandbox outbox (portal). " +
            'Live mode answers 429 with Retry-After, creating and charging nothing, past the hourly cap of mails to third parties.',
          security,
          body: CreateGuarantorBody,
          response: { 201: success(GuarantorRecord), ...workflowErrors(400, 402, 403, 409, 429) },
        },
        // The account's level is checked before the body: a NONE account learns that first.
        preValidation: async (request) => {
          requireMinimumLevel(request.auth.riskLevel, 'LOW', 'Guarantor verification');
          request.body ??= {} as never;
        },
      },
      async (request, reply) => {
        const input = validateGuarantor(request.body, request.auth.riskLevel, respondents.now(), request.auth.consentRequired);
        void reply.status(201);
        const record = await service.create(request.auth, input, (trx, created) => keepAnswer(trx, request, reply, { status: 'success', data: created }));
        return reply.send({ status: 'success', data: record });
      },
    );

    app.get(
      path,
      {
        schema: {
          hide,
          tags: TAGS,
          operationId: 'listGuarantorVerifications',
          summary: 'List guarantor verifications, newest first (addition)',
          security,
          querystring: PageQuery,
          response: { 200: list(GuarantorRecord), ...workflowErrors(400) },
        },
      },
      async (request) => {
        const page = parsePage(request.query);
        const { records, total } = await service.list(scopeOf(request), page, apiViewer(request, 'guarantor'));
        return listEnvelope(records, page, total);
      },
    );

    app.get(
      `${path}/:id`,
      {
        schema: {
          hide,
          tags: TAGS,
          operationId: 'getGuarantorVerification',
          summary: 'Fetch a guarantor verification (addition)',
          security,
          params: IdParam,
          response: { 200: success(GuarantorRecord), ...workflowErrors(400, 404) },
        },
      },
      async (request) => {
        const data = await service.get(scopeOf(request), parseId(request.params.id, guarantorNotFound));
        await logApiAccess(db, request, 'guarantor', 'view', [data.id]);
        return { status: 'success' as const, data };
      },
    );

    app.delete(
      `${path}/:id`,
      {
        schema: {
          hide,
          tags: TAGS,
          operationId: 'cancelGuarantorVerification',
          summary: 'Cancel a guarantor verification in progress (addition)',
          description: 'Refunds the price while the guarantor has not answered. A completed or cancelled verification answers 409.',
          security,
          params: IdParam,
          response: { 200: Cancelled, ...workflowErrors(400, 404, 409) },
        },
      },
      async (request) => {
        await service.cancel(scopeOf(request), parseId(request.params.id, guarantorNotFound));
        return { status: 'success' as const, data: 'ok' as const };
      },
    );
  }

  app.post(
    '/v1/test-helpers/guarantors/:id/complete',
    {
      schema: {
        tags: ['Test helpers'],
        operationId: 'completeTestGuarantorVerification',
        summary: 'Complete a guarantor verification as the guarantor would (test secret only)',
        description:
          'verified: the guarantor accepts with a matching ID (and, with verifyAddress, the address is verified); failed: the guarantor declines. ' +
          'Sends the same webhook. With a live secret: 404.',
        security,
        params: IdParam,
        body: CompleteBody,
        response: { 200: success(GuarantorRecord), ...workflowErrors(400, 404, 409) },
      },
      preValidation: async (request) => {
        if (request.auth.mode !== 'test') throw new ApiError('NOT_FOUND_ERROR', 'Test helpers exist only in test mode: use a test secret');
      },
    },
    async (request) => ({
      status: 'success' as const,
      data: await service.completeForTest(scopeOf(request), parseId(request.params.id, guarantorNotFound), request.body.outcome),
    }),
  );
}
