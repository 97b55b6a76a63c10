import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { apiViewer, logApiAccess } from '../access-log/service.js';
import { errorsA, listOf, Ok, success } from '../agents/schemas.js';
import type { Registry } from '../identities/registry/registry.js';
import { requireAuth } from '../platform/auth.js';
import type { DB, Mode } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { keepAnswer } from '../platform/idempotency.js';
import { listEnvelope, PageQuery, parsePage } from '../platform/pagination.js';
import { SESSION_BILLABLES } from './billing.js';
import * as S from './schemas.js';
import { cancelSession, createSession, getSession, listSessions } from './service.js';
import { completeSessionForTest } from './test-helper.js';

const TAGS = ['Verification sessions'];
const BASE = '/v1/verifications/sessions';

export interface SessionRoutesOptions {
  db: Kysely<DB>;
  publicUrl: string;
  registry(mode: Mode): Registry;
}

/** The customer's API of verification sessions (DESIGN "Verification sessions"; docs/sessions.md). */
export async function sessionRoutes(parent: FastifyInstance, { db, publicUrl, registry }: SessionRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', requireAuth(db));
  const security = [{ bearer: [] }];
  const scopeOf = (auth: { orgId: string; mode: Mode }) => ({ orgId: auth.orgId, mode: auth.mode });

  app.post(
    BASE,
    {
      schema: {
        tags: TAGS,
        operationId: 'createVerificationSession',
        summary: 'Create a verification session: a hosted link (and SDK client secret) where the end user proves who they are',
        description: `Answers the session with its url and clientSecret, shown this once. Nothing is charged now: a live session is charged the session price (type \`${SESSION_BILLABLES.session.type}\`) once, with its first ID lookup, before the registry is asked (the end user's ID step is 402 while the wallet cannot pay it; given back if no registry answered); a wallet that cannot cover that price now is refused with 402. A reference already used by this account in this mode is 409.`,
        security,
        body: S.CreateSessionBody,
        response: { 201: success(S.SessionRecord), ...errorsA(400, 401, 402, 403, 409) },
      },
    },
    async (request, reply) => {
      void reply.status(201);
      const { auth } = request;
      const record = await createSession(db, { ...scopeOf(auth), riskLevel: auth.riskLevel, consentRequired: auth.consentRequired }, request.body, {
        publicUrl,
        inTransaction: (trx, created) => keepAnswer(trx, request, reply, { status: 'success', data: created }),
      });
      return reply.send({ status: 'success' as const, data: record });
    },
  );

  app.get(
    `${BASE}/:id`,
    {
      schema: {
        tags: TAGS,
        operationId: 'getVerificationSession',
        summary: 'Fetch a verification session: its status, the identity found and every check with its scores and reasons',
        description: 'The identity found (and how the prefilled details compared with it, and why an ID try failed) is shown once the session has paid its price, which it does with its first ID lookup. A session whose ID was found before sessions paid at their lookup, and which ended unpaid, never shows it, nor any reason or face match the registry decided.',
        security,
        params: S.SessionParams,
        response: { 200: success(S.SessionRecord), ...errorsA(401, 404) },
      },
    },
    async (request) => {
      const data = await getSession(db, scopeOf(request.auth), request.params.id);
      await logApiAccess(db, request, 'session', 'view', [data.id]);
      return { status: 'success' as const, data };
    },
  );

  app.get(
    BASE,
    {
      schema: {
        tags: TAGS,
        operationId: 'listVerificationSessions',
        summary: 'List verification sessions, newest first',
        security,
        querystring: PageQuery,
        response: { 200: listOf(S.SessionRecord), ...errorsA(400, 401) },
      },
    },
    async (request) => {
      const page = parsePage(request.query);
      const { records, total } = await listSessions(db, scopeOf(request.auth), page, apiViewer(request, 'session'));
      return listEnvelope(records, page, total);
    },
  );

  app.delete(
    `${BASE}/:id`,
    {
      schema: {
        tags: TAGS,
        operationId: 'cancelVerificationSession',
        summary: 'Cancel a verification session that has not ended',
        description: 'The end user\'s link stops working. No webhook is sent. A session that looked an ID up has paid its price already (with its first lookup) and is not charged again; one that never did is free. A session that has ended is 409.',
        security,
        params: S.SessionParams,
        response: { 200: Ok, ...errorsA(401, 404, 409) },
      },
    },
    async (request) => {
      await cancelSession(db, scopeOf(request.auth), request.params.id);
      return { status: 'success' as const, data: 'ok' as const };
    },
  );

  app.post(
    '/v1/test-helpers/sessions/:id/complete',
    {
      schema: {
        tags: ['Test helpers'],
        operationId: 'completeTestVerificationSession',
        summary: 'Test mode: complete a verification session as the end user would (webhook included)',
        description:
          'verified: the ID is the sandbox identity (the prefilled one, or the first allowed type\'s) and the other checks pass; failed: the check that owns `reason` fails with it. Checks decided this way say `simulated: true`. Live secrets get 404.',
        security,
        params: S.SessionParams,
        body: S.SessionOutcomeBody,
        response: { 200: success(S.SessionRecord), ...errorsA(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const { auth } = request;
      if (auth.mode !== 'test') throw new ApiError('NOT_FOUND_ERROR', 'Test helpers exist in test mode only');
      const data = await completeSessionForTest(db, registry('test'), scopeOf(auth), request.params.id, request.body);
      return { status: 'success' as const, data };
    },
  );
}
