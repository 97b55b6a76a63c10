import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isUuid } from '../accounts/service.js';
import { ApiError } from '../platform/errors.js';
import { AccessRequest } from '../portal/access/routes.js';
import { audit } from '../portal/audit.js';
import { dayRange, lagosDate } from '../portal/billing/calendar.js';
import { BILLABLES, changePrice, MAX_PRICE, priceList } from '../portal/billing/checks.js';
import { CSV_BATCH, ledgerCsv, operatorLedgerPage } from '../portal/billing/ledger.js';
import { BrandingView } from '../portal/branding/routes.js';
import { getBranding } from '../portal/branding/service.js';
import { LedgerCsvQuery, LedgerEntry, LedgerQuery, Price } from '../portal/billing/schemas.js';
import { UsageCounter } from '../portal/billing/usage.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Nullable, OrgParams, PayloadType, PortalPage, portalErrors, RiskLevel, Role, sessionSecurity } from '../portal/schemas.js';
import { WebhookSigning } from '../portal/webhooks/routes.js';
import { setWebhookSigning, WebhookEndpointError } from '../webhooks/endpoints.js';
import { operatorActor, requireOperator } from './guard.js';
import { MAX_ADJUSTMENT, MAX_ADJUSTMENT_REASON, WalletAdjustments } from './money.js';
import { consoleFaceMatchRoutes } from './face-match-routes.js';
import { HEALTH_WINDOW, organizationDetail, webhookHealth } from './organization-detail.js';
import { CONSOLE_TAG } from './routes.js';

const Mode = Type.Union([Type.Literal('test'), Type.Literal('live')]);
const DateTime = Type.String({ format: 'date-time' });
const Kobo = (description: string) => Type.Integer({ description: `${description}, in kobo (₦1 = 100 kobo)` });

const Operator = Type.Object({ id: Type.String(), name: Type.String(), email: Type.String() });

/** A ledger row as operators see it: who made a money action. */
const ConsoleLedgerEntry = Type.Object({
  ...LedgerEntry.properties,
  operator: Nullable(Type.Object(Operator.properties, { description: 'Who confirmed the funding or made the credit or debit; null for charges, refunds and the command line' })),
});

const Tally = { count: Type.Integer(), amount: Kobo('Charged') };

const WebhookHealth = Type.Object({
  mode: Mode,
  url: Nullable(Type.String()),
  signing: Nullable(WebhookSigning),
  state: Type.Union([Type.Literal('no_endpoint'), Type.Literal('idle'), Type.Literal('healthy'), Type.Literal('failing'), Type.Literal('circuit_open')], {
    description: `circuit_open: a delivery worker opened the URL's breaker and holds its deliveries until a probe; failing: its latest attempts failed; idle: no attempts among its newest ${HEALTH_WINDOW} deliveries`,
  }),
  consecutiveFailures: Type.Integer({ description: 'Failed attempts since the last successful one' }),
  circuit: Nullable(Type.Object({ openedAt: DateTime, probeAt: Type.String({ format: 'date-time', description: 'When one delivery may go as a probe' }) })),
  failingSince: Nullable(Type.String({ format: 'date-time', description: 'The first of those failures' })),
  lastSuccessAt: Nullable(DateTime),
  lastFailure: Nullable(Type.Object({ at: DateTime, statusCode: Nullable(Type.Integer({ description: 'null when no answer came' })), error: Nullable(Type.String()) })),
  backlog: Type.Integer({ description: 'Deliveries waiting to be delivered' }),
  backlogCapped: Type.Boolean({ description: 'More are waiting than the count goes up to' }),
  oldestPendingAt: Nullable(DateTime),
});

const OrganizationDetail = Type.Object({
  id: Type.String(),
  name: Type.String(),
  email: Nullable(Type.String()),
  createdAt: DateTime,
  balance: Kobo('Wallet'),
  access: Type.Object({
    enabled: Type.Boolean({ description: 'Live API access on' }),
    riskLevel: RiskLevel,
    payloadType: PayloadType,
    rateLimitPerMinute: Nullable(Type.Integer({ description: "Requests a minute per secret; null: the server's default" })),
    pendingRequest: Nullable(AccessRequest),
  }),
  members: Type.Array(Type.Object({ personId: Type.String(), name: Type.String(), email: Type.String(), role: Role, joinedAt: DateTime })),
  secrets: Type.Array(
    Type.Object({
      mode: Mode,
      hint: Type.String({ description: 'Prefix and last four characters; never the secret' }),
      status: Type.Union([Type.Literal('active'), Type.Literal('expiring'), Type.Literal('revoked')], { description: 'expiring: rolled, still working until revokedAt' }),
      createdAt: DateTime,
      lastUsedAt: Nullable(DateTime),
      revokedAt: Nullable(DateTime),
    }),
    { description: 'Current and rolled secrets, newest first (the latest 20)' },
  ),
  webhooks: Type.Array(WebhookHealth, { description: 'Test, then live' }),
  usage: Type.Array(
    Type.Object({
      mode: Mode,
      from: Type.String({ description: 'First day (Lagos time)' }),
      to: Type.String({ description: 'Last day (today)' }),
      types: Type.Array(Type.Object({ type: Type.String(), label: Type.String(), ...Tally }), { description: 'Check types used, most first' }),
      total: Type.Object(Tally),
    }),
    { description: 'The last 30 days, test then live' },
  ),
});

const ConsolePrice = Type.Object({ ...Price.properties, defaultPrice: Kobo('The built-in price, in force when none is set') });

/**
 * The console's view of one organization (detail, branding read-only, ledger with operators, CSV) and its money:
 * credits and debits with a reason, its face-match threshold (face-match-routes.ts), and the installation's prices. Operators only.
 */
export async function consoleOrganizationRoutes(parent: FastifyInstance, { db, config, mail }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const operatorsOnly = [requireSession(db), requireOperator];
  const usage = new UsageCounter(db);
  const adjustments = new WalletAdjustments(db, { mail, publicUrl: config.publicUrl });
  app.addHook('onClose', () => adjustments.flush());
  // The organization's face-match threshold, in a file of its own.
  await app.register(consoleFaceMatchRoutes, { db });

  /** An organization that exists, by id: anything else is 404. */
  async function existing(orgId: string): Promise<string> {
    const row = isUuid(orgId) ? await db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst() : undefined;
    if (!row) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId.slice(0, 40)}`);
    return row.id;
  }

  app.get(
    '/console/organizations/:orgId',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleGetOrganization',
        summary: 'One organization: API access, members, secrets (hints and last use, never values), webhook health, 30 days of usage, balance',
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: OrganizationDetail, ...portalErrors(401, 403, 404) },
      },
    },
    async (request) => organizationDetail(db, usage, await existing(request.params.orgId)),
  );

  app.get(
    '/console/organizations/:orgId/branding',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleGetOrganizationBranding',
        summary: "An organization's verification-flow branding and session defaults, read-only: display name, colour, logo, default redirect, allowed embedding origins",
        description: 'What the organization set on its Verification flow page (the portal); operators read it to answer a customer or look into a complaint, and change nothing here.',
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: BrandingView, ...portalErrors(401, 403, 404) },
      },
    },
    async (request) => getBranding(db, config.publicUrl, await existing(request.params.orgId)),
  );

  app.put(
    '/console/organizations/:orgId/webhooks/:mode/signing',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleSetWebhookSigning',
        summary: "Change how the organization's endpoint of a mode signs its deliveries (standard, verifyme or both)",
        description: 'The next attempt of every delivery, retries too, is signed the new way. Audited with the signing before and after. 404 when the mode has no endpoint.',
        security: sessionSecurity,
        params: Type.Object({ orgId: Type.String(), mode: Mode }),
        body: Type.Object({ signing: WebhookSigning }, { additionalProperties: false }),
        response: { 200: WebhookHealth, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const orgId = await existing(request.params.orgId);
      const { mode } = request.params;
      const actor = operatorActor(request);
      try {
        await setWebhookSigning(db, { orgId, mode }, request.body.signing, {
          within: (trx, { before, after }) =>
            audit(trx, { orgId, actor, action: 'webhook.signing_set', target: `${mode} webhook`, before: { signing: before?.signing ?? null }, after: { signing: after.signing } }),
        });
      } catch (err) {
        if (err instanceof WebhookEndpointError) throw new ApiError('NOT_FOUND_ERROR', `organization ${orgId} has no ${mode} webhook endpoint`);
        throw err;
      }
      return webhookHealth(db, orgId, mode);
    },
  );

  app.get(
    '/console/organizations/:orgId/ledger',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleListLedger',
        summary: "An organization's wallet ledger, newest first, with the operator of each money action",
        description: '`from` and `to` are calendar days in Lagos time, both included.',
        security: sessionSecurity,
        params: OrgParams,
        querystring: LedgerQuery,
        response: { 200: PortalPage(ConsoleLedgerEntry), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const orgId = await existing(request.params.orgId);
      const { limit = 20, offset = 0, kind, from, to } = request.query;
      const { rows, total } = await operatorLedgerPage(db, { orgId, kind, ...dayRange(from, to) }, { limit, offset });
      return { data: rows, total, limit, offset };
    },
  );

  app.get(
    '/console/organizations/:orgId/ledger.csv',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleExportLedger',
        summary: "An organization's ledger as CSV (oldest first): the portal's columns and the operator's email",
        security: sessionSecurity,
        params: OrgParams,
        querystring: LedgerCsvQuery,
        produces: ['text/csv'],
        response: { 200: Type.String({ description: 'text/csv; charset=utf-8' }), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const orgId = await existing(request.params.orgId);
      const { kind, from, to } = request.query;
      const range = dayRange(from, to);
      const name = `vouch-ledger-${orgId.slice(0, 8)}-${from ?? 'start'}-to-${to ?? lagosDate(new Date())}.csv`;
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store')
        .send(Readable.from(ledgerCsv(db, { orgId, kind, ...range }, CSV_BATCH, { withOperator: true })) as unknown as string);
    },
  );

  app.post(
    '/console/organizations/:orgId/adjustments',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleAdjustWallet',
        summary: "Credit or debit an organization's wallet by hand, with a reason",
        description:
          'One ledger row naming the operator, with the reason (the customer sees it in the ledger), and an audit row, in one transaction; the owners are mailed. ' +
          'A debit may not take the balance below zero (409, nothing changes).',
        security: sessionSecurity,
        params: OrgParams,
        body: Type.Object(
          {
            direction: Type.Union([Type.Literal('credit'), Type.Literal('debit')]),
            amount: Type.Integer({ minimum: 1, maximum: MAX_ADJUSTMENT, description: 'Kobo: 1 to 10000000000 (₦100,000,000)' }),
            reason: Type.String({ minLength: 1, maxLength: MAX_ADJUSTMENT_REASON, description: 'Why, for the audit log and the customer' }),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ balance: Kobo('The balance after'), entry: ConsoleLedgerEntry }), ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      // An unknown id that is a UUID is found missing inside the adjustment's transaction.
      const { orgId } = request.params;
      if (!isUuid(orgId)) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId.slice(0, 40)}`);
      return reply.status(201).send(await adjustments.adjust(orgId, request.body, operatorActor(request)));
    },
  );

  app.get(
    '/console/prices',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleListPrices',
        summary: 'The price of every check type in force and its built-in default (what `vouch price list` prints)',
        security: sessionSecurity,
        response: { 200: Type.Object({ data: Type.Array(ConsolePrice) }), ...portalErrors(401, 403) },
      },
    },
    async () => ({ data: await priceList(db) }),
  );

  app.put(
    '/console/prices/:type',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleSetPrice',
        summary: 'Set the price of one check type, as `vouch price set` does; the next live check is charged it',
        description: 'Audited with the price before and after.',
        security: sessionSecurity,
        params: Type.Object({ type: Type.String({ maxLength: 40, description: 'The check type, e.g. nin' }) }),
        body: Type.Object({ amount: Type.Integer({ minimum: 0, maximum: MAX_PRICE, description: 'Kobo per check in live mode' }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ ...ConsolePrice.properties, before: Kobo('The price in force before') }), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { type } = request.params;
      if (!BILLABLES.some((b) => b.type === type)) throw new ApiError('NOT_FOUND_ERROR', `no check type ${type}; see GET /api/console/prices`);
      const change = await changePrice(db, type, request.body.amount, operatorActor(request));
      return { type, label: change.label, amount: change.after, custom: true, defaultPrice: change.defaultPrice, before: change.before };
    },
  );
}
