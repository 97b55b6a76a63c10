import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { AccountsService, MAX_SECRET_OVERLAP_HOURS } from '../../accounts/service.js';
import { audit } from '../audit.js';
import { requireMember, requireSession } from '../guard.js';
import type { PortalOptions } from '../plugin.js';
import { can } from '../roles.js';
import { Nullable, OrgParams, PORTAL_TAG, portalErrors, sessionSecurity } from '../schemas.js';

const ModeParam = Type.Union([Type.Literal('test'), Type.Literal('live')]);

const KeyView = Type.Object({
  mode: ModeParam,
  hint: Type.String({ description: 'Prefix and last four characters' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Nullable(Type.String({ format: 'date-time' })),
  value: Nullable(Type.String({ description: 'The whole test secret, for roles that may see it; never a live secret' })),
  previous: Nullable(
    Type.Object({
      hint: Type.String(),
      expiresAt: Type.String({ format: 'date-time' }),
      lastUsedAt: Nullable(Type.String({ format: 'date-time' })),
    }),
  ),
});

/** API keys: the test secret in view, the live one only at its roll; rolls with an optional overlap. */
export async function keyRoutes(parent: FastifyInstance, { db }: PortalOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const accounts = new AccountsService(db);
  // Guards run as preValidation: who may call is answered before the input is judged.
  const signedIn = requireSession(db);

  app.get(
    '/orgs/:orgId/keys',
    {
      preValidation: [signedIn, requireMember(db, 'org.read')],
      schema: {
        tags: [PORTAL_TAG],
        operationId: 'portalListKeys',
        summary: "The organization's API secrets: hints, last use, and the test secret itself for developers and up",
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(KeyView) }), ...portalErrors(401, 404) },
      },
    },
    async (request) => {
      const rows = await db
        .selectFrom('api_secrets')
        .select(['mode', 'hint', 'created_at', 'last_used_at', 'revoked_at', 'test_value'])
        .where('org_id', '=', request.member.orgId)
        .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', sql<Date>`now()`)]))
        .orderBy('created_at', 'desc')
        .execute();
      const showTest = can(request.member.role, 'secrets.test.read');
      const data = (['test', 'live'] as const).flatMap((mode) => {
        const current = rows.find((row) => row.mode === mode && row.revoked_at === null);
        if (!current) return [];
        const previous = rows.find((row) => row.mode === mode && row.revoked_at !== null);
        return [
          {
            mode,
            hint: current.hint,
            createdAt: current.created_at.toISOString(),
            lastUsedAt: current.last_used_at?.toISOString() ?? null,
            value: mode === 'test' && showTest ? current.test_value : null,
            previous: previous
              ? { hint: previous.hint, expiresAt: previous.revoked_at!.toISOString(), lastUsedAt: previous.last_used_at?.toISOString() ?? null }
              : null,
          },
        ];
      });
      return { data };
    },
  );

  app.post(
    '/orgs/:orgId/keys/:mode/roll',
    {
      preValidation: [signedIn, requireMember(db, 'secrets.roll')],
      schema: {
        tags: [PORTAL_TAG],
        operationId: 'portalRollKey',
        summary: 'Replace a secret; the new one is shown in this answer only. The old one keeps working for overlapHours (0 = stops at once)',
        security: sessionSecurity,
        params: Type.Object({ orgId: Type.String(), mode: ModeParam }),
        body: Type.Object({ overlapHours: Type.Integer({ minimum: 0, maximum: MAX_SECRET_OVERLAP_HOURS, default: 0 }) }),
        response: {
          200: Type.Object({
            mode: ModeParam,
            secret: Type.String({ description: 'The new secret: shown in this answer only (a test secret also stays readable in the list)' }),
            hint: Type.String(),
            previousHint: Nullable(Type.String()),
            previousExpiresAt: Type.String({ format: 'date-time', description: 'Until when the old secret works; the roll time when overlapHours is 0' }),
          }),
          ...portalErrors(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { orgId } = request.member;
      const person = request.portal.person.id;
      const rolled = await accounts.rollSecret(orgId, request.params.mode, {
        overlapHours: request.body.overlapHours,
        createdBy: person,
        within: (trx, done) =>
          audit(trx, {
            orgId,
            actor: { kind: 'member', personId: person },
            action: 'secret.rolled',
            target: `${done.mode} secret`,
            before: { hint: done.previousHint },
            after: { hint: done.hint, previousExpiresAt: done.previousExpiresAt.toISOString() },
          }),
      });
      return { mode: rolled.mode, secret: rolled.secret, hint: rolled.hint, previousHint: rolled.previousHint, previousExpiresAt: rolled.previousExpiresAt.toISOString() };
    },
  );
}
