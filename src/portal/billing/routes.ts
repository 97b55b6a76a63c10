import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { logSessionAccess } from '../../access-log/service.js';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import { ApiError } from '../../platform/errors.js';
import { modeOf, requireMember, requireSession } from '../guard.js';
import type { AreaOptions } from '../plugin.js';
import { OrgParams, PORTAL_TAG, PortalPage, portalErrors, sessionSecurity } from '../schemas.js';
import { dayRange, lagosDate } from './calendar.js';
import { priceList } from './checks.js';
import { ledgerCsv, ledgerPage } from './ledger.js';
import {
  BillingSummary,
  FundingCreated,
  FundingListQuery,
  FundingParams,
  FundingRequest,
  FundingRequestBody,
  LedgerCsvQuery,
  LedgerEntry,
  LedgerQuery,
  Price,
  UsageQuery,
  UsageReport,
} from './schemas.js';
import { Funding, type FundingRequestView } from './service.js';
import { UsageCounter } from './usage.js';

const tags = [PORTAL_TAG];

/** What the portal shows of a funding request: not the operator's bookkeeping (org, ledger id). */
function portalView({ orgId: _org, orgName: _name, ledgerEntryId: _entry, ...shown }: FundingRequestView) {
  return shown;
}

function bankOf(config: Config) {
  const bank = config.bank;
  return bank ? { bankName: bank.bankName, accountName: bank.accountName, accountNumber: bank.accountNumber, note: bank.note ?? null } : null;
}

/** The wallet, its ledger (and CSV), the prices, usage by day, and funding by bank transfer. */
export async function billingRoutes(parent: FastifyInstance, { db, config, mail }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('preHandler', requireSession(db));
  const funding = new Funding(db, { mail, publicUrl: config.publicUrl });
  const usage = new UsageCounter(db);
  const read = requireMember(db, 'billing.read');
  const fund = requireMember(db, 'billing.fund');

  app.get(
    '/orgs/:orgId/billing',
    {
      preHandler: read,
      schema: {
        tags,
        operationId: 'portalGetBilling',
        summary: 'The wallet: balance, transfers waiting for confirmation, and the bank account to fund it',
        description: 'One wallet per organization pays for live checks; test mode is never charged.',
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: BillingSummary, ...portalErrors(401, 404) },
      },
    },
    async (request) => {
      const { orgId } = request.member;
      const [org, pending] = await Promise.all([
        db.selectFrom('organizations').select(['balance', 'enabled']).where('id', '=', orgId).executeTakeFirstOrThrow(),
        db
          .selectFrom('funding_requests')
          .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('amount'), sql<string>`0`).as('n'))
          .where('org_id', '=', orgId)
          .where('status', '=', 'pending')
          .executeTakeFirstOrThrow(),
      ]);
      return { balance: Number(org.balance), currency: 'NGN' as const, enabled: org.enabled, pendingFunding: Number(pending.n), bank: bankOf(config) };
    },
  );

  app.get(
    '/orgs/:orgId/ledger',
    {
      preHandler: read,
      schema: {
        tags,
        operationId: 'portalListLedger',
        summary: 'The wallet ledger, newest first: fundings, charges, refunds and corrections by the operator',
        description: '`from` and `to` are calendar days in Lagos time (West Africa Time), both included.',
        security: sessionSecurity,
        params: OrgParams,
        querystring: LedgerQuery,
        response: { 200: PortalPage(LedgerEntry), ...portalErrors(400, 401, 404) },
      },
    },
    async (request) => {
      const { limit = 20, offset = 0, kind, from, to } = request.query;
      const { rows, total } = await ledgerPage(db, { orgId: request.member.orgId, kind, ...dayRange(from, to) }, { limit, offset });
      return { data: rows, total, limit, offset };
    },
  );

  app.get(
    '/orgs/:orgId/ledger.csv',
    {
      preHandler: read,
      schema: {
        tags,
        operationId: 'portalExportLedger',
        summary: 'The ledger as a CSV download (oldest first), optionally of one kind and between two days',
        description:
          'Columns: id, created_at (ISO 8601, UTC), date (Lagos day), kind, description, amount_naira, amount_kobo, balance_after_naira, balance_after_kobo. ' +
          'RFC 4180 quoting; text cells that begin with = + - or @ are prefixed with an apostrophe so spreadsheets never run them.',
        security: sessionSecurity,
        params: OrgParams,
        querystring: LedgerCsvQuery,
        produces: ['text/csv'],
        response: { 200: Type.String({ description: 'text/csv; charset=utf-8' }), ...portalErrors(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { kind, from, to } = request.query;
      const range = dayRange(from, to);
      const name = `vouch-ledger-${from ?? 'start'}-to-${to ?? lagosDate(new Date())}.csv`;
      // Its lookup rows name identity numbers, masked: an export of personal data, logged.
      await logSessionAccess(db, request, { orgId: request.member.orgId, mode: null }, 'ledger', 'export', [null]);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store')
        // A stream, read from the database in batches as the client takes it; the response
        // schema documents the body, Fastify does not serialize streams.
        .send(Readable.from(ledgerCsv(db, { orgId: request.member.orgId, kind, ...range })) as unknown as string);
    },
  );

  app.get(
    '/orgs/:orgId/prices',
    {
      preHandler: read,
      schema: {
        tags,
        operationId: 'portalListPrices',
        summary: 'The price of each check in force, in kobo (live mode; test mode is free)',
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(Price) }), ...portalErrors(401, 404) },
      },
    },
    async () => ({ data: await priceList(db) }),
  );

  app.get(
    '/orgs/:orgId/usage',
    {
      preHandler: read,
      schema: {
        tags,
        operationId: 'portalGetUsage',
        summary: 'Checks per day and type over the last days (Lagos time), with what they cost; days without any are zeros',
        description: 'A check is a call that did its work (found or not found, created); calls refused for want of funds (402) are not counted.',
        security: sessionSecurity,
        params: OrgParams,
        querystring: UsageQuery,
        response: { 200: UsageReport, ...portalErrors(400, 401, 404) },
      },
    },
    async (request) => usage.report({ orgId: request.member.orgId, mode: modeOf(request.query) }, request.query.days ?? 30),
  );

  app.get(
    '/orgs/:orgId/funding-requests',
    {
      preHandler: read,
      schema: {
        tags,
        operationId: 'portalListFundingRequests',
        summary: 'Funding requests (announced bank transfers), newest first',
        security: sessionSecurity,
        params: OrgParams,
        querystring: FundingListQuery,
        response: { 200: PortalPage(FundingRequest), ...portalErrors(400, 401, 404) },
      },
    },
    async (request) => {
      const { status, limit = 20, offset = 0 } = request.query;
      const { rows, total } = await funding.list({ orgId: request.member.orgId, status, limit, offset });
      return { data: rows.map(portalView), total, limit, offset };
    },
  );

  app.post(
    '/orgs/:orgId/funding-requests',
    {
      preHandler: fund,
      schema: {
        tags,
        operationId: 'portalRequestFunding',
        summary: 'Announce a bank transfer to the wallet; the operator credits it when the money arrives',
        description: 'Answers the account to transfer to and the reference to put in the narration.',
        security: sessionSecurity,
        params: OrgParams,
        body: FundingRequestBody,
        response: { 201: FundingCreated, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const bank = bankOf(config);
      if (!bank) {
        throw new ApiError('CONFLICT', 'The operator of this Vouch has not configured its bank details yet; ask your account manager how to fund the wallet');
      }
      const created = await funding.request(request.member.orgId, request.body, { kind: 'member', personId: request.portal.person.id });
      return reply.status(201).send({ request: portalView(created), instructions: { amount: created.amount, reference: created.reference, bank } });
    },
  );

  app.delete(
    '/orgs/:orgId/funding-requests/:id',
    {
      preHandler: fund,
      schema: {
        tags,
        operationId: 'portalWithdrawFundingRequest',
        summary: 'Withdraw a pending funding request (a transfer you will not make)',
        security: sessionSecurity,
        params: FundingParams,
        response: { 200: FundingRequest, ...portalErrors(401, 403, 404, 409) },
      },
    },
    async (request) => portalView(await funding.withdraw(request.member.orgId, request.params.id, { kind: 'member', personId: request.portal.person.id })),
  );
}
