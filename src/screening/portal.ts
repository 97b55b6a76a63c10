import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { logSessionAccess } from '../access-log/service.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { modeOf, requireMember, requireMemberSession, requireSession } from '../portal/guard.js';
import { csvRow } from '../portal/billing/csv.js';
import { OrgParams, PORTAL_TAG, PortalPage, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { formatTimestamp } from '../respondents/fields.js';
import { renderScreening } from './render.js';
import { hitsOf } from './repository.js';
import { reviewHit, MAX_REVIEW_NOTE } from './review.js';
import { ScreeningRecord } from './schemas.js';
import { screeningNotFound } from './service.js';
import type { ScreeningState } from './tables.js';

const tags = [PORTAL_TAG];
const Mode = Type.Union([Type.Literal('test'), Type.Literal('live')]);
const STATES: readonly ScreeningState[] = ['clear', 'pending_review', 'confirmed_match', 'cleared'];

const ListQuery = Type.Object({
  mode: Type.Optional(Mode),
  status: Type.Optional(Type.String({ description: `One of ${STATES.join(', ')}` })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});
const ScreeningParams = Type.Object({ orgId: Type.String(), id: Type.String({ maxLength: 20 }) });
const HitParams = Type.Object({ orgId: Type.String(), id: Type.String({ maxLength: 20 }), hitId: Type.String({ maxLength: 20 }) });
const ModeOnly = Type.Object({ mode: Type.Optional(Mode) });
const ReviewBody = Type.Object({
  decision: Type.Union([Type.Literal('true_match'), Type.Literal('false_positive')]),
  note: Type.Optional(Type.String({ maxLength: MAX_REVIEW_NOTE, description: 'Why; required to clear a hit (false_positive)' })),
});
const ExportQuery = Type.Object({
  mode: Type.Optional(Mode),
  from: Type.Optional(Type.String({ description: 'YYYY-MM-DD (UTC), first day of confirmations included' })),
  to: Type.Optional(Type.String({ description: 'YYYY-MM-DD (UTC), last day included' })),
});

function numberOf(raw: string, notFound: () => ApiError): number {
  if (!/^\d{1,15}$/.test(raw)) throw notFound();
  return Number(raw);
}

function dayOf(field: string, raw: string | undefined, end: boolean): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  const date = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? new Date(`${raw}T00:00:00Z`) : undefined;
  if (!date || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== raw) throw new ApiError('VALIDATION_ERROR', `${field} must be a date written YYYY-MM-DD`);
  return end ? new Date(date.getTime() + 86_400_000) : date;
}

const EXPORT_HEADER = ['screening_id', 'reference', 'subject_type', 'subject_name', 'subject_dob', 'subject_nationality', 'entity_id', 'entity_name', 'matched_name', 'topics', 'programs', 'list', 'list_version', 'score', 'reviewed_by', 'reviewed_at', 'review_note', 'screened_at'];

/**
 * Screenings in the portal (docs/screening.md, "Review"): the list (with a status filter) and
 * detail the pages read, a hit's review (verifications.write; audited), and the CSV of confirmed
 * name matches for the NFIU report. Scoped to the organization of the path and the mode of the query.
 */
export async function screeningPortalRoutes(parent: FastifyInstance, { db }: { db: Kysely<DB> }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/orgs/:orgId/screenings',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalListScreenings',
        summary: "The mode's screenings, newest first, optionally of one status",
        security: sessionSecurity,
        params: OrgParams,
        querystring: ListQuery,
        response: { 200: PortalPage(ScreeningRecord), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const status = request.query.status;
      if (status !== undefined && !STATES.includes(status as ScreeningState)) throw new ApiError('VALIDATION_ERROR', `status must be one of ${STATES.join(', ')}`);
      const paging = { limit: request.query.limit ?? 20, offset: request.query.offset ?? 0 };
      let query = db.selectFrom('screenings').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode);
      if (status !== undefined) query = query.where('state', '=', status as ScreeningState);
      const [rows, count] = await Promise.all([
        query.selectAll().orderBy('id', 'desc').limit(paging.limit).offset(paging.offset).execute(),
        query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
      ]);
      const hits = await hitsOf(db, rows.map((row) => Number(row.id)));
      if (rows.length > 0) await logSessionAccess(db, request, scope, 'screening', 'list', rows.map((row) => Number(row.id)));
      return { data: rows.map((row) => renderScreening(row, hits.get(Number(row.id)) ?? [])), total: Number(count.total), ...paging };
    },
  );

  app.get(
    '/orgs/:orgId/screenings/export.csv',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalExportScreeningMatches',
        summary: 'Confirmed name matches as CSV, for the NFIU report: subject, list entry, list and version, score, reviewer and dates',
        description: 'Hits reviewed true_match whose review falls between from and to (UTC days, both included; open-ended when absent). Logged as an export.',
        security: sessionSecurity,
        params: OrgParams,
        querystring: ExportQuery,
        produces: ['text/csv'],
        response: { 200: Type.String({ description: 'text/csv' }), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const from = dayOf('from', request.query.from, false);
      const to = dayOf('to', request.query.to, true);
      let query = db
        .selectFrom('screening_hits as h')
        .innerJoin('screenings as s', 's.id', 'h.screening_id')
        .where('s.org_id', '=', scope.orgId)
        .where('s.mode', '=', scope.mode)
        .where('h.decision', '=', 'true_match');
      if (from) query = query.where('h.reviewed_at', '>=', from);
      if (to) query = query.where('h.reviewed_at', '<', to);
      const rows = await query
        .select(['s.id as screening_id', 's.reference', 's.subject', 's.created_at', 'h.entity_id', 'h.name', 'h.matched_name', 'h.entity', 'h.source', 'h.list_version', 'h.score', 'h.review', 'h.reviewed_at'])
        .orderBy('h.reviewed_at')
        .orderBy('h.id')
        .execute();
      await logSessionAccess(db, request, scope, 'screening', 'export', [null]);
      let body = csvRow(EXPORT_HEADER);
      for (const row of rows) {
        body += csvRow([
          Number(row.screening_id),
          row.reference,
          row.subject.type,
          row.subject.name,
          row.subject.dob ?? '',
          row.subject.nationality ?? '',
          row.entity_id,
          row.name,
          row.matched_name,
          row.entity.topics.join(';'),
          row.entity.programs.join(';'),
          row.source,
          row.list_version,
          row.score.toFixed(3),
          row.review?.by ?? '',
          formatTimestamp(row.reviewed_at),
          row.review?.note ?? '',
          formatTimestamp(row.created_at),
        ]);
      }
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="screening-matches-${scope.mode}.csv"`)
        .send(body);
    },
  );

  app.get(
    '/orgs/:orgId/screenings/:id',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalGetScreening',
        summary: 'A screening with its hits and their reviews',
        security: sessionSecurity,
        params: ScreeningParams,
        querystring: ModeOnly,
        response: { 200: ScreeningRecord, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const id = numberOf(request.params.id, screeningNotFound);
      const row = await db.selectFrom('screenings').selectAll().where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('id', '=', id).executeTakeFirst();
      if (!row) throw screeningNotFound();
      await logSessionAccess(db, request, scope, 'screening', 'view', [id]);
      return renderScreening(row, (await hitsOf(db, [id])).get(id) ?? []);
    },
  );

  app.post(
    '/orgs/:orgId/screenings/:id/hits/:hitId/review',
    {
      preValidation: [requireSession(db), requireMember(db, 'verifications.write')],
      schema: {
        tags,
        operationId: 'portalReviewScreeningHit',
        summary: 'Decide a hit: true_match (final) or false_positive; the screening\'s status follows',
        description: 'A hit already confirmed a true match answers 409. Audited as screening.hit_reviewed.',
        security: sessionSecurity,
        params: HitParams,
        querystring: ModeOnly,
        body: ReviewBody,
        response: { 200: ScreeningRecord, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const person = request.portal.person;
      return reviewHit(db, scope, numberOf(request.params.id, screeningNotFound), numberOf(request.params.hitId, screeningNotFound), {
        decision: request.body.decision,
        note: request.body.note ?? '',
        by: { actor: { kind: 'member', personId: person.id }, label: person.email },
      });
    },
  );
}
