import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { apiViewer, logApiAccess } from '../access-log/service.js';
import type { Kysely } from 'kysely';
import { sandboxReport } from '../agents/sandbox.js';
import { errorsA, IdParam, listOf, Ok, success } from '../agents/schemas.js';
import { lookupConsent, recordLookupConsent } from '../consent/consent.js';
import type { FileUrls } from '../files/urls.js';
import { requireAuth } from '../platform/auth.js';
import { chargeUsage, coversPrice, recordUsage } from '../platform/billing.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { keepAnswer } from '../platform/idempotency.js';
import { listEnvelope, PageQuery, parsePage } from '../platform/pagination.js';
import { checkMarketplaceQuery, findVerifiedAddress, marketplaceSubject } from './marketplace.js';
import * as S from './schemas.js';
import {
  ADDRESS_BILLABLES,
  applyAddressTransition,
  createAddressForCaller,
  getAddressVerification,
  listAddressVerifications,
  parseId,
  paymentRequired,
} from './service.js';
import { ADDRESS_FAILURE_REASONS, DEFAULT_ADDRESS_FAILURE } from './states.js';

const TAGS = ['Address verification'];
const BASE = '/v1/verifications/addresses';

export interface AddressRoutesOptions {
  db: Kysely<DB>;
  urls: FileUrls;
}

export async function addressRoutes(parent: FastifyInstance, { db, urls }: AddressRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', requireAuth(db));
  const security = [{ bearer: [] }];
  const scopeOf = (auth: { orgId: string; mode: 'test' | 'live' }) => ({ orgId: auth.orgId, mode: auth.mode });

  app.post(
    BASE,
    {
      schema: {
        tags: TAGS,
        operationId: 'createAddressVerification',
        summary: 'Create an address verification (a field agent visits; a webhook reports completion)',
        description:
          'Needs an account risk level of LOW or higher. Live mode charges the address price (402 when the wallet is short). A reference already used by this account in this mode is 409, and nothing is charged.',
        security,
        body: S.CreateAddressBody,
        response: { 201: success(S.AddressRecord), ...errorsA(400, 401, 402, 403, 409) },
      },
    },
    async (request, reply) => {
      void reply.status(201);
      const caller = { ...scopeOf(request.auth), riskLevel: request.auth.riskLevel, consentRequired: request.auth.consentRequired };
      const record = await createAddressForCaller(db, caller, request.body, (trx, created) => keepAnswer(trx, request, reply, { status: 'success', data: created }));
      return reply.send({ status: 'success' as const, data: record });
    },
  );

  app.get(
    `${BASE}/:id`,
    {
      schema: {
        tags: TAGS,
        operationId: 'getAddressVerification',
        summary: 'Fetch an address verification',
        security,
        params: IdParam,
        response: { 200: success(S.AddressRecord), ...errorsA(400, 401, 404) },
      },
    },
    async (request) => {
      const id = parseId(request.params.id, 'Address verification');
      const data = await getAddressVerification(db, scopeOf(request.auth), id, urls);
      await logApiAccess(db, request, 'address', 'view', [data.id]);
      return { status: 'success' as const, data };
    },
  );

  app.get(
    BASE,
    {
      schema: {
        tags: TAGS,
        operationId: 'listAddressVerifications',
        summary: 'List address verifications, newest first',
        security,
        querystring: PageQuery,
        response: { 200: listOf(S.AddressRecord), ...errorsA(400, 401) },
      },
    },
    async (request) => {
      const page = parsePage(request.query);
      const { records, total } = await listAddressVerifications(db, scopeOf(request.auth), page, urls, apiViewer(request, 'address'));
      return listEnvelope(records, page, total);
    },
  );

  app.delete(
    `${BASE}/:id`,
    {
      schema: {
        tags: TAGS,
        operationId: 'cancelAddressVerification',
        summary: 'Cancel an address verification in progress',
        description:
          'Refunds the price when no agent visit has started yet. A completed or cancelled verification cannot be cancelled (409).',
        security,
        params: IdParam,
        response: { 200: Ok, ...errorsA(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const id = parseId(request.params.id, 'Address verification');
      await db.transaction().execute((trx) => applyAddressTransition(trx, scopeOf(request.auth), id, { to: 'cancelled' }, urls));
      return { status: 'success' as const, data: 'ok' as const };
    },
  );

  app.post(
    `${BASE}/marketplace`,
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupAddressByIdentity',
        summary: "Fetch a person's most recent verified address (address by identity)",
        description:
          "Searches addresses verified within maxAddressAge months for the given id number whose applicant names match: any account's in live mode, the caller's own in test mode. Only the address, its position, dates and status are returned. Live mode charges a lookup when an address is found; a wallet short of the price is refused (402) before the search.",
        security,
        body: S.MarketplaceBody,
        response: { 200: success(S.MarketplaceRecord), ...errorsA(400, 401, 402, 404) },
      },
    },
    async (request, reply) => {
      const { auth } = request;
      const consent = lookupConsent(request);
      checkMarketplaceQuery(request.body);
      const usage = { ...scopeOf(auth), billable: ADDRESS_BILLABLES.address_marketplace, subject: marketplaceSubject(request.body) };
      // Before the search: a wallet that cannot pay gets 402 whether or not an address exists.
      if (!(await coversPrice(db, usage))) {
        const usageId = await recordUsage(db, usage, 'insufficient_funds');
        if (consent) await recordLookupConsent(db, auth.orgId, usageId, consent);
        throw paymentRequired();
      }
      const found = await findVerifiedAddress(db, scopeOf(auth), request.body);
      if (!found) {
        const usageId = await recordUsage(db, usage, 'not_found');
        if (consent) await recordLookupConsent(db, auth.orgId, usageId, consent);
        throw new ApiError('NOT_FOUND_ERROR', 'Address not found: no verified address matches this identity within maxAddressAge');
      }
      const answer = { status: 'success' as const, data: found };
      // The charge and the Idempotency-Key's answer commit together: a retry is never charged twice.
      const charged = await db.transaction().execute(async (trx) => {
        const result = await chargeUsage(trx, usage);
        if (result.paid) await keepAnswer(trx, request, reply, answer);
        return result;
      });
      if (consent) await recordLookupConsent(db, auth.orgId, charged.usageId, consent);
      if (!charged.paid) throw paymentRequired();
      return answer;
    },
  );

  app.post(
    '/v1/test-helpers/addresses/:id/complete',
    {
      schema: {
        tags: ['Test helpers'],
        operationId: 'completeTestAddressVerification',
        summary: 'Test mode: complete an address verification as a field agent would (webhook included)',
        description: `A failed outcome takes a reason (subStatus), one of: ${ADDRESS_FAILURE_REASONS.join(', ')}. Live secrets get 404.`,
        security,
        params: IdParam,
        body: S.OutcomeBody,
        response: { 200: success(S.AddressRecord), ...errorsA(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const { auth } = request;
      if (auth.mode !== 'test') throw new ApiError('NOT_FOUND_ERROR', 'Test helpers exist in test mode only');
      const id = parseId(request.params.id, 'Address verification');
      const { outcome } = request.body;
      const reason = outcome === 'failed' ? (request.body.reason ?? DEFAULT_ADDRESS_FAILURE) : undefined;
      if (reason !== undefined && !(ADDRESS_FAILURE_REASONS as readonly string[]).includes(reason)) {
        throw new ApiError('VALIDATION_ERROR', `reason must be one of ${ADDRESS_FAILURE_REASONS.join(', ')}`);
      }
      const record = await db.transaction().execute(async (trx) => {
        const current = await getAddressVerification(trx, scopeOf(auth), id, urls);
        return applyAddressTransition(
          trx,
          scopeOf(auth),
          id,
          { to: outcome === 'verified' ? 'verified' : 'not_verified', report: sandboxReport(current.state, outcome, reason) },
          urls,
        );
      });
      return { status: 'success' as const, data: record };
    },
  );
}
