import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { logSessionAccess } from '../access-log/service.js';
import type { DB } from '../platform/db/schema.js';
import { modeOf, requireMemberSession } from '../portal/guard.js';
import { OrgParams, PORTAL_TAG, PortalPage, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { renderScreening } from './render.js';
import { hitsOf } from './repository.js';
import { ScreeningRecord } from './schemas.js';

const MonitoredQuery = Type.Object({
  mode: Type.Optional(Type.Union([Type.Literal('test'), Type.Literal('live')])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});

/**
 * The portal's monitored subjects (docs/screening.md, "Monitoring"): the mode's screenings still
 * screened again at every list change, newest first. Their monitoring ends by DELETE on the API.
 */
export async function screeningMonitoredRoutes(parent: FastifyInstance, { db }: { db: Kysely<DB> }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/orgs/:orgId/screenings/monitored',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags: [PORTAL_TAG],
        operationId: 'portalListMonitoredScreenings',
        summary: "The mode's monitored screenings (screened again whenever a list they were screened against changes), newest first",
        security: sessionSecurity,
        params: OrgParams,
        querystring: MonitoredQuery,
        response: { 200: PortalPage(ScreeningRecord), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const paging = { limit: request.query.limit ?? 20, offset: request.query.offset ?? 0 };
      const query = db.selectFrom('screenings').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('monitored', '=', true);
      const [rows, count] = await Promise.all([
        query.selectAll().orderBy('id', 'desc').limit(paging.limit).offset(paging.offset).execute(),
        query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
      ]);
      const hits = await hitsOf(db, rows.map((row) => Number(row.id)));
      if (rows.length > 0) await logSessionAccess(db, request, scope, 'screening', 'list', rows.map((row) => Number(row.id)));
      return { data: rows.map((row) => renderScreening(row, hits.get(Number(row.id)) ?? [])), total: Number(count.total), ...paging };
    },
  );
}
