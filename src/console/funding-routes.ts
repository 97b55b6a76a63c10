import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { FundingListQuery, FundingRequest } from '../portal/billing/schemas.js';
import { Funding } from '../portal/billing/service.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Nullable, PortalPage, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { operatorActor, requireOperator } from './guard.js';
import { CONSOLE_TAG } from './routes.js';

/** A funding request as operators see it: with its organization and the ledger row of its credit. */
const ConsoleFundingRequest = Type.Object({
  ...FundingRequest.properties,
  orgId: Type.String(),
  orgName: Type.String(),
  ledgerEntryId: Nullable(Type.Integer({ description: 'The credit, once confirmed' })),
});

/** In the list: other organizations whose standing requests hold the same reference. */
const ListedFundingRequest = Type.Object({
  ...ConsoleFundingRequest.properties,
  alsoAnnouncedBy: Type.Array(
    Type.Object({
      orgId: Type.String(),
      orgName: Type.String(),
      status: Type.Union([Type.Literal('pending'), Type.Literal('confirmed'), Type.Literal('rejected'), Type.Literal('withdrawn')]),
      amount: Type.Integer({ description: 'Kobo' }),
    }),
    {
      description:
        'Other organizations whose pending or confirmed requests have the same reference (references are unique per organization only): match such a transfer by its sender before confirming',
    },
  ),
});

const IdParams = Type.Object({ id: Type.String({ description: 'Funding request id' }) });

/** Wallet fundings announced in the portal, confirmed (the wallet is credited once) or rejected by an operator. */
export async function consoleFundingRoutes(parent: FastifyInstance, { db, config, mail }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const funding = new Funding(db, { mail, publicUrl: config.publicUrl });
  app.addHook('onClose', () => funding.flush());
  const operatorsOnly = [requireSession(db), requireOperator];

  app.get(
    '/console/funding-requests',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleListFundingRequests',
        summary: 'Funding requests (announced bank transfers) of every organization, newest first',
        security: sessionSecurity,
        querystring: FundingListQuery,
        response: { 200: PortalPage(ListedFundingRequest), ...portalErrors(400, 401, 403) },
      },
    },
    async (request) => {
      const { status, limit = 20, offset = 0 } = request.query;
      const { rows, total } = await funding.list({ status, limit, offset });
      const shared = await funding.sharedReferences(rows);
      return { data: rows.map((row) => ({ ...row, alsoAnnouncedBy: shared.get(row.id) ?? [] })), total, limit, offset };
    },
  );

  app.post(
    '/console/funding-requests/:id/confirm',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleConfirmFunding',
        summary: 'The transfer arrived: credit the wallet with the amount, once',
        description: 'One transaction: the credit and its ledger row, the request confirmed, the audit row naming the operator. The customer is mailed.',
        security: sessionSecurity,
        params: IdParams,
        response: { 200: ConsoleFundingRequest, ...portalErrors(401, 403, 404, 409) },
      },
    },
    async (request) => funding.confirm(request.params.id, operatorActor(request)),
  );

  app.post(
    '/console/funding-requests/:id/reject',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleRejectFunding',
        summary: 'No such transfer arrived: reject the request with a reason the customer sees',
        security: sessionSecurity,
        params: IdParams,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500 }) }),
        response: { 200: ConsoleFundingRequest, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => funding.reject(request.params.id, request.body.reason, operatorActor(request)),
  );
}
