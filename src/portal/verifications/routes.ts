import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { logSessionAccess, sessionViewer } from '../../access-log/service.js';
import type { Transaction } from 'kysely';
import { Type } from 'typebox';
import { AccountsService } from '../../accounts/service.js';
import { CreateAddressBody } from '../../addresses/schemas.js';
import { applyAddressTransition, createAddressForCaller } from '../../addresses/service.js';
import { applyBusinessTransition } from '../../businesses/service.js';
import { EmploymentService } from '../../employments/service.js';
import { CreateGuarantorBody } from '../../guarantors/schemas.js';
import { validateGuarantor } from '../../guarantors/validate.js';
import { lgasOf, STATES } from '../../locations/nigeria.js';
import type { AuthContext } from '../../platform/auth.js';
import type { DB, Mode } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { requireMinimumLevel } from '../../respondents/fields.js';
import { audit } from '../audit.js';
import { modeOf, requireMember, requireMemberSession, requireSession } from '../guard.js';
import type { AreaOptions } from '../plugin.js';
import { Done, OrgParams, PORTAL_TAG, portalErrors, sessionSecurity, ModeQuery } from '../schemas.js';
import { maskRecord, verificationDetail, type DetailDeps } from './detail.js';
import { listVerifications } from './lists.js';
import { listLookups } from './lookups.js';
import { CappedPage, Created, Detail, DetailParams, Lookup, LookupQuery, VerificationQuery, VerificationRow } from './schemas.js';
import { sessionExplorerRoutes } from './session-routes.js';

const tags = [PORTAL_TAG];

function parseVerificationId(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw new ApiError('VALIDATION_ERROR', 'id must be a whole number');
  const id = Number(raw);
  if (id < 1) throw new ApiError('NOT_FOUND_ERROR', 'No such verification');
  return id;
}

/**
 * The verifications explorer: identity lookups, address/business/guarantor/employment
 * verifications with their details, and creating and cancelling them from the portal through
 * the same services (rules, prices, webhooks) as the API. Guards run before validation: who may
 * call is answered before the request is judged.
 */
export async function verificationRoutes(parent: FastifyInstance, options: AreaOptions): Promise<void> {
  const { db, urls, respondents, guarantors } = options;
  await sessionExplorerRoutes(parent, options);
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const signedIn = requireSession(db);
  const accounts = new AccountsService(db);
  const employments = new EmploymentService(db, respondents);
  const deps: DetailDeps = { db, urls, guarantors, employments };
  const page = (query: { limit?: number | undefined; offset?: number | undefined }) => ({ limit: query.limit ?? 20, offset: query.offset ?? 0 });

  app.get(
    '/orgs/:orgId/lookups',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalListLookups',
        summary: 'Identity lookups of the mode, newest first, identity numbers masked',
        description: 'Filters combine. The total counts up to 10,000 matches; totalCapped says when there are more (narrow the dates to page further).',
        security: sessionSecurity,
        params: OrgParams,
        querystring: LookupQuery,
        response: { 200: CappedPage(Lookup), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { type, outcome, q, from, to } = request.query;
      const paging = page(request.query);
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const { rows, total, totalCapped } = await listLookups(db, scope, { type, outcome, q, from, to }, paging);
      return { data: rows, total, totalCapped, ...paging };
    },
  );

  app.get(
    '/orgs/:orgId/verifications',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalListVerifications',
        summary: 'Address, business, guarantor or employment verifications of the mode, newest first',
        description: 'One kind at a time. Unfiltered, the total is exact; with status or q it counts up to 10,000 (totalCapped says when there are more).',
        security: sessionSecurity,
        params: OrgParams,
        querystring: VerificationQuery,
        response: { 200: CappedPage(VerificationRow), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { kind, status, q } = request.query;
      const paging = page(request.query);
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const { rows, total, totalCapped } = await listVerifications(db, scope, kind, { status, q }, paging, sessionViewer(request, kind));
      return { data: rows, total, totalCapped, ...paging };
    },
  );

  app.get(
    '/orgs/:orgId/verifications/:kind/:id',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalGetVerification',
        summary: 'One verification: its record as the API returns it, timeline, findings, photos, GPS point and the webhook deliveries it caused',
        security: sessionSecurity,
        params: DetailParams,
        querystring: ModeQuery,
        response: { 200: Detail, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const detail = await verificationDetail(deps, request.params.kind, scope, parseVerificationId(request.params.id));
      await logSessionAccess(db, request, scope, request.params.kind, 'view', [parseVerificationId(request.params.id)]);
      return detail;
    },
  );

  app.post(
    '/orgs/:orgId/verifications/:kind/:id/cancel',
    {
      preValidation: [requireMemberSession(db, 'verifications.write')],
      schema: {
        tags,
        operationId: 'portalCancelVerification',
        summary: 'Cancel a verification still in progress, as the API’s DELETE does (refund, webhook)',
        security: sessionSecurity,
        params: DetailParams,
        querystring: ModeQuery,
        response: { 200: Done, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const id = parseVerificationId(request.params.id);
      const { kind } = request.params;
      // The audit row in the cancellation's transaction: a refund of the customer's money.
      const audited = (trx: Transaction<DB>) =>
        audit(trx, { orgId: scope.orgId, actor: { kind: 'member', personId: request.portal.person.id }, action: 'verification.cancelled', target: `${kind} ${id}`, after: { mode: scope.mode, status: 'cancelled' } });
      switch (kind) {
        case 'address':
          await db.transaction().execute(async (trx) => {
            await applyAddressTransition(trx, scope, id, { to: 'cancelled' }, urls);
            await audited(trx);
          });
          break;
        case 'business':
          await db.transaction().execute(async (trx) => {
            await applyBusinessTransition(trx, scope, id, { to: 'cancelled' }, urls);
            await audited(trx);
          });
          break;
        case 'guarantor':
          await guarantors.cancel(scope, id, audited);
          break;
        case 'employment':
          await employments.cancel(scope, id, audited);
          break;
      }
      return { ok: true as const };
    },
  );

  app.get(
    '/locations',
    {
      preValidation: signedIn,
      schema: {
        tags,
        operationId: 'portalListLocations',
        summary: "Nigeria's 36 states and FCT with their local government areas, as the verification forms offer them",
        security: sessionSecurity,
        response: { 200: Type.Object({ states: Type.Array(Type.Object({ name: Type.String(), lgas: Type.Array(Type.String()) })) }), ...portalErrors(401) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'private, max-age=86400');
      return { states: STATES.map((name) => ({ name, lgas: [...lgasOf(name)] })) };
    },
  );

  /** What the API's secret would say about the organization in this mode: the portal creates on its behalf. */
  async function callerOf(orgId: string, mode: Mode): Promise<AuthContext> {
    const org = await accounts.get(orgId);
    if (mode === 'live' && !org.enabled) {
      throw new ApiError('FORBIDDEN', 'Live verifications need API access: request it on the API access page, or switch to test mode');
    }
    const { consent_required: consentRequired } = await db.selectFrom('organizations').select('consent_required').where('id', '=', orgId).executeTakeFirstOrThrow();
    return { orgId, mode, riskLevel: org.riskLevel, payloadType: org.payloadType, rateLimitPerMinute: null, consentRequired, secretId: null };
  }

  const createErrors = portalErrors(400, 401, 402, 403, 404, 409);

  app.post(
    '/orgs/:orgId/verifications/address',
    {
      preValidation: [requireMemberSession(db, 'verifications.write')],
      schema: {
        tags,
        operationId: 'portalCreateAddress',
        summary: 'Create an address verification from the portal: the body, rules and price of POST /v1/verifications/addresses',
        description: 'Live mode charges the wallet the address price (402 when it is short) and sends a field agent; test mode charges nothing.',
        security: sessionSecurity,
        params: OrgParams,
        querystring: ModeQuery,
        body: CreateAddressBody,
        response: { 201: Created, ...createErrors },
      },
    },
    async (request, reply) => {
      const caller = await callerOf(request.member.orgId, modeOf(request.query));
      const record = await createAddressForCaller(db, caller, request.body);
      return reply.status(201).send({ id: record.id, reference: record.reference, record: maskRecord({ ...record }) });
    },
  );

  app.post(
    '/orgs/:orgId/verifications/guarantor',
    {
      // As the API: an account below the minimum risk level learns that before anything about its body.
      preValidation: [
        signedIn,
        requireMember(db, 'verifications.write'),
        async (request) => requireMinimumLevel((await callerOf(request.member.orgId, modeOf(request.query))).riskLevel, 'LOW', 'Guarantor verification'),
      ],
      schema: {
        tags,
        operationId: 'portalCreateGuarantor',
        summary: 'Create a guarantor verification from the portal: the body, rules and price of POST /v1/verifications/guarantors',
        description: 'The guarantor receives a link to accept or decline. Live mode charges the guarantor price (402 when the wallet is short).',
        security: sessionSecurity,
        params: OrgParams,
        querystring: ModeQuery,
        body: CreateGuarantorBody,
        response: { 201: Created, ...createErrors },
      },
    },
    async (request, reply) => {
      const caller = await callerOf(request.member.orgId, modeOf(request.query));
      const input = validateGuarantor(request.body, caller.riskLevel, respondents.now(), caller.consentRequired);
      const record = await guarantors.create(caller, input);
      return reply.status(201).send({ id: record.id, reference: record.reference, record: maskRecord({ ...record }) });
    },
  );
}
