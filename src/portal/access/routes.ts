import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../platform/errors.js';
import { requireMember, requireSession } from '../guard.js';
import type { PortalOptions } from '../plugin.js';
import { Nullable, OrgParams, PayloadType, PORTAL_TAG, portalErrors, RiskLevel, sessionSecurity } from '../schemas.js';
import { AccessRequests } from './service.js';

/** A request for live API access as its organization sees it (the console adds the organization). */
export const AccessRequest = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('declined')]),
  riskLevel: RiskLevel,
  payloadType: PayloadType,
  useCase: Nullable(Type.String()),
  decidedRiskLevel: Nullable(RiskLevel),
  decidedPayloadType: Nullable(PayloadType),
  declineReason: Nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  decidedAt: Nullable(Type.String({ format: 'date-time' })),
});

/** API access: what is in force, and the requests to an account manager. */
export async function accessRoutes(parent: FastifyInstance, { db }: PortalOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const requests = new AccessRequests(db);
  // Guards run as preValidation: who may call is answered before the input is judged.
  const signedIn = requireSession(db);

  app.get(
    '/orgs/:orgId/access',
    {
      preValidation: [signedIn, requireMember(db, 'org.read')],
      schema: {
        tags: [PORTAL_TAG],
        operationId: 'portalGetAccess',
        summary: 'API access in force (live mode) and the history of requests',
        security: sessionSecurity,
        params: OrgParams,
        response: {
          200: Type.Object({ enabled: Type.Boolean(), riskLevel: RiskLevel, payloadType: PayloadType, requests: Type.Array(AccessRequest) }),
          ...portalErrors(401, 404),
        },
      },
    },
    async (request) => {
      const org = await db.selectFrom('organizations').select(['enabled', 'risk_level', 'payload_type']).where('id', '=', request.member.orgId).executeTakeFirstOrThrow();
      return { enabled: org.enabled, riskLevel: org.risk_level, payloadType: org.payload_type, requests: await requests.list(request.member.orgId) };
    },
  );

  app.post(
    '/orgs/:orgId/access-requests',
    {
      preValidation: [signedIn, requireMember(db, 'access.request')],
      schema: {
        tags: [PORTAL_TAG],
        operationId: 'portalRequestAccess',
        summary: 'Ask an account manager for live API access with a risk level and an identity payload type',
        security: sessionSecurity,
        params: OrgParams,
        body: Type.Object({ riskLevel: RiskLevel, payloadType: PayloadType, useCase: Type.Optional(Type.String({ maxLength: 1000 })) }),
        response: { 201: Type.Object({ id: Type.String() }), ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      if (!request.portal.person.emailVerified) throw new ApiError('FORBIDDEN', 'Verify your email first: open the link we mailed you, or send a new one from Get started');
      const id = await requests.request(request.member.orgId, request.body, { kind: 'member', personId: request.portal.person.id });
      return reply.status(201).send({ id });
    },
  );
}
