import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { logSessionAccess } from '../../access-log/service.js';
import { ApiError } from '../../platform/errors.js';
import { frameFileOf } from '../../sessions/portal-queries.js';
import { cancelSession } from '../../sessions/service.js';
import { audit } from '../audit.js';
import { modeOf, requireMemberSession } from '../guard.js';
import type { AreaOptions } from '../plugin.js';
import { can } from '../roles.js';
import { Done, OrgParams, PORTAL_TAG, portalErrors, sessionSecurity, ModeQuery } from '../schemas.js';
import { CappedPage } from './schemas.js';
import { FrameParams, FrameQuery, SessionDetail, SessionParams, SessionQuery, SessionRow } from './session-schemas.js';
import { blurredFrame, listSessions, parseSessionId, sessionDetail } from './sessions.js';

const tags = [PORTAL_TAG];

/**
 * Frames (blurred or as taken) one signed-in person may fetch a minute, whatever their address:
 * a session page with three full attempts shows 75, revealed another 75; a member rotating
 * addresses to scrape every frame is held here, not only by the per-address limit.
 */
export const FRAMES_PER_PERSON_PER_MINUTE = 300;

/**
 * Verification sessions in the explorer (docs/portal-verifications.md, "Sessions"): the list, a
 * session's page, and its frames. Reading needs `verifications.read`; a frame unblurred needs
 * `verifications.write` (owner, admin, developer: the roles that act on verifications), viewers
 * see frames blurred only. Every view of a session's personal data (the list's names and numbers,
 * the page, each frame revealed) writes the access log before the answer. Frames are also limited
 * per person (FRAMES_PER_PERSON_PER_MINUTE). Cancelling needs `verifications.write`, as the API's
 * DELETE does it (open sessions only, 409 otherwise, nothing charged), audited in its transaction.
 */
export async function sessionExplorerRoutes(parent: FastifyInstance, { db, store }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  // Not app.rateLimit: a request meets only the first of those, and /api/ already met the
  // per-address one.
  const framesOfPerson = parent.createRateLimit({
    max: FRAMES_PER_PERSON_PER_MINUTE,
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => `frames:${request.portal.person.id}`,
  });
  async function limitFramesPerPerson(request: FastifyRequest): Promise<void> {
    const counted = await framesOfPerson(request);
    if (counted.isAllowed || !counted.isExceeded) return;
    const retry = Math.max(1, counted.ttlInSeconds);
    throw new ApiError('RATE_LIMITED', `Too many requests: at most ${counted.max} frames a minute for each person; retry in ${retry} s`, { retryAfterSeconds: retry });
  }

  app.get(
    '/orgs/:orgId/sessions',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalListVerificationSessions',
        summary: 'Verification sessions of the mode, newest first, ID numbers masked',
        description: 'Unfiltered, the total is exact; with status or q it counts up to 10,000 (totalCapped says when there are more).',
        security: sessionSecurity,
        params: OrgParams,
        querystring: SessionQuery,
        response: { 200: CappedPage(SessionRow), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const paging = { limit: request.query.limit ?? 20, offset: request.query.offset ?? 0 };
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const { rows, total, totalCapped } = await listSessions(db, scope, { status: request.query.status, q: request.query.q }, paging);
      await logSessionAccess(db, request, scope, 'session', 'list', rows.map((row) => row.id));
      return { data: rows, total, totalCapped, ...paging };
    },
  );

  app.get(
    '/orgs/:orgId/sessions/:id',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalGetVerificationSession',
        summary: 'One verification session: its steps, ID found (masked), liveness attempts with their challenges, scores, reasons in plain English and webhook deliveries',
        security: sessionSecurity,
        params: SessionParams,
        querystring: ModeQuery,
        response: { 200: SessionDetail, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const { internalId: _internal, ...detail } = await sessionDetail(db, scope, parseSessionId(request.params.id), can(request.member.role, 'verifications.write'));
      await logSessionAccess(db, request, scope, 'session', 'view', [detail.id]);
      return detail;
    },
  );

  app.post(
    '/orgs/:orgId/sessions/:id/cancel',
    {
      preValidation: [requireMemberSession(db, 'verifications.write')],
      schema: {
        tags,
        operationId: 'portalCancelVerificationSession',
        summary: 'Cancel a verification session that has not ended, as the API’s DELETE does: the person’s link stops working, no webhook; nothing more charged (a session pays with its first ID lookup)',
        description: 'A session that has ended (verified, failed, expired, cancelled) is 409. Audited.',
        security: sessionSecurity,
        params: SessionParams,
        querystring: ModeQuery,
        response: { 200: Done, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const publicId = parseSessionId(request.params.id);
      await cancelSession(db, scope, publicId, {
        inTransaction: (trx, before) =>
          audit(trx, {
            orgId: scope.orgId,
            actor: { kind: 'member', personId: request.portal.person.id },
            action: 'session.cancelled',
            target: `${scope.mode} session ${publicId}`,
            before: { status: before.status },
            after: { status: 'cancelled' },
          }),
      });
      return { ok: true as const };
    },
  );

  app.get(
    '/orgs/:orgId/sessions/:id/attempts/:attempt/frames/:position',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      preHandler: limitFramesPerPerson,
      schema: {
        tags,
        operationId: 'portalGetVerificationSessionFrame',
        summary: 'One liveness frame of a session, blurred (default) or, for owners, admins and developers, as taken; a frame as taken is written to the access log',
        description: `At most ${FRAMES_PER_PERSON_PER_MINUTE} frames a minute for each signed-in person (429 with Retry-After), besides the portal's limit per address.`,
        security: sessionSecurity,
        params: FrameParams,
        querystring: FrameQuery,
        response: {
          200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'A JPEG' }),
          ...portalErrors(400, 401, 403, 404, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const full = request.query.view === 'full';
      if (full && !can(request.member.role, 'verifications.write')) {
        throw new ApiError('FORBIDDEN', `Your role (${request.member.role}) sees frames blurred only; an owner, admin or developer can open them`);
      }
      const publicId = parseSessionId(request.params.id);
      const { attempt, position } = request.params;
      if (!/^[1-9]\d{0,2}$/.test(attempt) || !/^\d{1,4}$/.test(position)) throw new ApiError('NOT_FOUND_ERROR', 'No such frame');
      const frame = await frameFileOf(db, scope, publicId, Number(attempt), Number(position));
      const bytes = frame ? await store.get(frame.fileId) : undefined;
      if (!bytes) throw new ApiError('NOT_FOUND_ERROR', 'No such frame: it may have been deleted by retention');
      const body = full ? bytes : await blurredFrame(bytes);
      if (full) await logSessionAccess(db, request, scope, 'session', 'view', [publicId]);
      return reply
        .header('content-type', 'image/jpeg')
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .send(body as never);
    },
  );
}
