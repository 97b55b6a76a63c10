import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { apiViewer, logApiAccess } from '../access-log/service.js';
import type { Kysely } from 'kysely';
import { OutcomeBody } from '../addresses/schemas.js';
import { parseId } from '../addresses/service.js';
import { sandboxReport } from '../agents/sandbox.js';
import { ErrorA, errorsA, IdParam, listOf, Ok, success } from '../agents/schemas.js';
import type { FileUrls } from '../files/urls.js';
import { requireAuth } from '../platform/auth.js';
import { recordUsage } from '../platform/billing.js';
import type { DB, Mode } from '../platform/db/schema.js';
import type { Registry } from '../identities/registry/registry.js';
import { ApiError } from '../platform/errors.js';
import type { ScreeningService } from '../screening/service.js';
import { keepAnswer } from '../platform/idempotency.js';
import { listEnvelope, PageQuery, parsePage } from '../platform/pagination.js';
import * as S from './schemas.js';
import { createBusinessMaybeScreened } from './screening.js';
import {
  applyBusinessTransition,
  BUSINESS_BILLABLES,
  checkBusinessRequest,
  getBusinessVerification,
  listBusinessVerifications,
  locateBusiness,
  requireBusinessFunds,
} from './service.js';
import { BUSINESS_FAILURE_REASONS, DEFAULT_BUSINESS_FAILURE } from './states.js';

const TAGS = ['Business verification'];
// The documented paths, and the singular paths of the sample requests (aliases, hidden from the docs).
const PREFIXES = [
  { base: '/v1/verifications/businesses', hide: false },
  { base: '/v1/verifications/business', hide: true },
];

export interface BusinessRoutesOptions {
  db: Kysely<DB>;
  urls: FileUrls;
  /** The corporate registry of each mode (the CAC lookup's): where a request without an address finds the company's. */
  registry: (mode: Mode) => Registry;
  /** Screens the company of each new verification, for organizations that ask (src/businesses/screening.ts). */
  screening?: Pick<ScreeningService, 'create'> | undefined;
}

export async function businessRoutes(parent: FastifyInstance, { db, urls, registry, screening }: BusinessRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', requireAuth(db));
  const security = [{ bearer: [] }];
  const scopeOf = (auth: { orgId: string; mode: 'test' | 'live' }) => ({ orgId: auth.orgId, mode: auth.mode });

  for (const { base, hide } of PREFIXES) {
    app.post(
      base,
      {
        schema: {
          hide,
          tags: TAGS,
          operationId: 'createBusinessVerification',
          summary: 'Create a business verification (a field agent visits; a webhook reports completion)',
          description:
            'Answers 200 (spec). Live mode charges the business price (402 when the wallet is short). A reference already used by this account in this mode is 409, and nothing is charged. `businessName`/`businessType` and string booleans are accepted. With an `rcNumber` and no `street`, `lga` or `state`, the company is looked up in the corporate registry and its registered head office is visited (`addressSource: "corporate_registry"`; its name too when none is sent); not found or not placeable, one 400 naming the missing fields; the registry unreachable, 503 with Retry-After. The lookup is not charged on its own, but a business found there and cancelled before its visit keeps the cac price. An organization that screens every business verification (portal: Screenings) has the company screened in the same transaction (charged at the screening price live), and the answer carries `screening` and `screeningId`; a screening that cannot be made leaves `screening.status` `NOT_SCREENED` and the verification is still created.',
          security,
          body: S.CreateBusinessBody,
          response: { 200: success(S.BusinessRecord), ...errorsA(400, 401, 402, 409), 503: ErrorA },
        },
      },
      async (request, reply) => {
        const { auth } = request;
        const scope = scopeOf(auth);
        try {
          const checked = checkBusinessRequest(request.body, { riskLevel: auth.riskLevel, consentRequired: auth.consentRequired });
          // Outside the transaction: an upstream may take seconds, and holds no connection meanwhile.
          if (!checked.place) await requireBusinessFunds(db, scope);
          const located = await locateBusiness(checked, registry(auth.mode));
          // The Idempotency-Key's answer commits with the record, its charge and its screening (docs/idempotency.md).
          return await createBusinessMaybeScreened(db, screening, auth, located, (trx, answer) => keepAnswer(trx, request, reply, answer));
        } catch (err) {
          if (err instanceof ApiError && err.code === 'PAYMENT_REQUIRED') {
            await recordUsage(db, { ...scope, billable: BUSINESS_BILLABLES.business, subject: 'create' }, 'insufficient_funds');
          }
          throw err;
        }
      },
    );

    app.get(
      `${base}/:id`,
      {
        schema: {
          hide,
          tags: TAGS,
          operationId: 'getBusinessVerification',
          summary: 'Fetch a business verification',
          security,
          params: IdParam,
          response: { 200: success(S.BusinessRecord), ...errorsA(400, 401, 404) },
        },
      },
      async (request) => {
        const id = parseId(request.params.id, 'Business verification');
        const data = await getBusinessVerification(db, scopeOf(request.auth), id, urls);
        await logApiAccess(db, request, 'business', 'view', [data.id]);
        return { status: 'success' as const, data };
      },
    );

    app.get(
      base,
      {
        schema: {
          hide,
          tags: TAGS,
          operationId: 'listBusinessVerifications',
          summary: 'List business verifications, newest first',
          security,
          querystring: PageQuery,
          response: { 200: listOf(S.BusinessRecord), ...errorsA(400, 401) },
        },
      },
      async (request) => {
        const page = parsePage(request.query);
        const { records, total } = await listBusinessVerifications(db, scopeOf(request.auth), page, urls, apiViewer(request, 'business'));
        return listEnvelope(records, page, total);
      },
    );

    app.delete(
      `${base}/:id`,
      {
        schema: {
          hide,
          tags: TAGS,
          operationId: 'cancelBusinessVerification',
          summary: 'Cancel a business verification in progress',
          description: 'Refunds the price when no agent visit has started yet. A completed or cancelled verification cannot be cancelled (409).',
          security,
          params: IdParam,
          response: { 200: Ok, ...errorsA(400, 401, 404, 409) },
        },
      },
      async (request) => {
        const id = parseId(request.params.id, 'Business verification');
        await db.transaction().execute((trx) => applyBusinessTransition(trx, scopeOf(request.auth), id, { to: 'cancelled' }, urls));
        return { status: 'success' as const, data: 'ok' as const };
      },
    );
  }

  app.post(
    '/v1/test-helpers/businesses/:id/complete',
    {
      schema: {
        tags: ['Test helpers'],
        operationId: 'completeTestBusinessVerification',
        summary: 'Test mode: complete a business verification as a field agent would (webhook included)',
        description: `A failed outcome takes a reason (subStatus), one of: ${BUSINESS_FAILURE_REASONS.join(', ')}. Live secrets get 404.`,
        security,
        params: IdParam,
        body: OutcomeBody,
        response: { 200: success(S.BusinessRecord), ...errorsA(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const { auth } = request;
      if (auth.mode !== 'test') throw new ApiError('NOT_FOUND_ERROR', 'Test helpers exist in test mode only');
      const id = parseId(request.params.id, 'Business verification');
      const { outcome } = request.body;
      const reason = outcome === 'failed' ? (request.body.reason ?? DEFAULT_BUSINESS_FAILURE) : undefined;
      if (reason !== undefined && !(BUSINESS_FAILURE_REASONS as readonly string[]).includes(reason)) {
        throw new ApiError('VALIDATION_ERROR', `reason must be one of ${BUSINESS_FAILURE_REASONS.join(', ')}`);
      }
      const record = await db.transaction().execute(async (trx) => {
        const current = await getBusinessVerification(trx, scopeOf(auth), id, urls);
        const verified = outcome === 'verified';
        const findings = {
          isBusinessKnown: verified,
          isBusinessOwnerKnown: verified,
          ownerVisitsFrequently: verified,
          isCorrectBusinessName: verified,
          businessNameFound: verified ? current.business.name : '',
          businessArea: 'commercial',
        };
        return applyBusinessTransition(
          trx,
          scopeOf(auth),
          id,
          { to: verified ? 'verified' : 'not_verified', report: sandboxReport(current.state, outcome, reason, findings) },
          urls,
        );
      });
      return { status: 'success' as const, data: record };
    },
  );
}
