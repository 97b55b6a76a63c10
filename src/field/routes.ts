import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { logTaskAccess } from '../access-log/service.js';
import { agentOfPerson, type AgentAccount } from '../agents/accounts.js';
import { acceptVisitReports, fileVisitReport, openTaskOf, REPORT_DESCRIPTION, REPORT_LIMIT, ReportForm, startVisit, TaskParams, type FiledReport } from '../agents/report.js';
import { TaskView } from '../agents/routes.js';
import type { FieldTask } from '../agents/service.js';
import type { FieldTaskKind } from '../agents/tables.js';
import { ApiError } from '../platform/errors.js';
import { REPLAYED_HEADER } from '../platform/idempotency.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Nullable, PortalError, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { findReportKey, replayOf, reportFingerprint, reportKeyOf, saveReportKey } from './report-keys.js';
import { fieldTasksOf } from './tasks.js';

export const FIELD_TAG = 'Field';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in field agent of a field-app request (set by the field area's onRequest hook). */
    fieldAgent: AgentAccount;
  }
}

const FieldTask = Type.Object({
  ...TaskView.properties,
  dueAt: Type.String({ format: 'date-time', description: '72 hours after the verification was made' }),
  overdue: Type.Boolean(),
  mapsUrl: Type.String({ description: 'Opens the place in the phone\'s maps app (a Google Maps search link)' }),
  distanceKm: Nullable(Type.Number({ description: 'From the given position to the centre of the place\'s state (addresses are not geocoded): a rough guide' })),
  capture: Type.Object({
    photos: Type.Object({ min: Type.Integer(), max: Type.Integer() }),
    checklist: Type.Array(Type.String(), { description: 'What to photograph and ask, in the order of a visit' }),
    findings: Type.Array(Type.String(), { description: 'The report fields this kind of visit takes besides outcome, position and photos' }),
    failReasons: Type.Array(Type.String(), { description: 'The reasons a failed outcome may give; the first is the default' }),
  }),
});

const ReportAnswer = Type.Object({
  ok: Type.Literal(true),
  kind: TaskView.properties.kind,
  id: Type.Integer(),
  outcome: ReportForm.properties.outcome,
  reason: Nullable(Type.String({ description: 'The reason of a failed outcome' })),
  flaggedForReview: Type.Boolean(),
  reviewReason: Nullable(Type.String({ description: 'Why the report was flagged' })),
  heldForReview: Type.Boolean({ description: 'A flagged report waits for an operator; the verification completes when they approve it' }),
  filedAt: Type.String({ format: 'date-time' }),
});

const Position = Type.Object({
  latitude: Type.Optional(Type.Number({ minimum: -90, maximum: 90, description: 'The phone\'s position; with longitude, the nearest tasks come first' })),
  longitude: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
});

/**
 * The field app's API under `/api/field` (docs/operators.md, "Field app"): a field agent signed
 * in with their own account (session cookie) lists their open tasks, starts a visit and files the
 * report — through the same checks and transaction as the agent API — with an Idempotency-Key so a
 * report queued on a phone while offline is filed once however often it is sent.
 */
export async function fieldRoutes(parent: FastifyInstance, { db, store, fieldSources: sources }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const signedIn = requireSession(db);

  // Only active field agents, known before any upload is read; the hook sees this area's routes only.
  app.addHook('onRequest', async (request, reply) => {
    await signedIn(request, reply);
    const agent = await agentOfPerson(db, request.portal.person.id);
    if (!agent) throw new ApiError('FORBIDDEN', 'This is the field app for Vouch\'s field agents: your account is not an agent\'s');
    if (!agent.active) throw new ApiError('FORBIDDEN', 'Your field agent account is deactivated; ask your operations team');
    request.fieldAgent = agent;
  });
  const photosOf = await acceptVisitReports(app);
  const taskOf = (request: FastifyRequest, params: { kind: FieldTaskKind; id: string }) => openTaskOf(db, sources, request.fieldAgent.agentId, params.kind, params.id);

  app.get(
    '/field/me',
    {
      schema: {
        tags: [FIELD_TAG],
        operationId: 'fieldMe',
        summary: 'The signed-in field agent',
        security: sessionSecurity,
        response: {
          200: Type.Object({ agentId: Type.String(), name: Type.String(), email: Type.String(), states: Type.Array(Type.String()) }),
          ...portalErrors(401, 403),
        },
      },
    },
    async (request) => ({
      agentId: request.fieldAgent.agentId,
      name: request.fieldAgent.name,
      email: request.portal.person.email,
      states: request.fieldAgent.states,
    }),
  );

  app.get(
    '/field/tasks',
    {
      schema: {
        tags: [FIELD_TAG],
        operationId: 'fieldListTasks',
        summary: "The agent's open visits: nearest first when a position is given, else the soonest due first",
        description: 'Nearest is measured to the centre of the place\'s state (addresses are not geocoded): it separates states, and within one the soonest due comes first.',
        security: sessionSecurity,
        querystring: Position,
        response: {
          200: Type.Object({ sortedBy: Type.Union([Type.Literal('distance'), Type.Literal('due')]), data: Type.Array(FieldTask) }),
          ...portalErrors(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { latitude, longitude } = request.query;
      if ((latitude === undefined) !== (longitude === undefined)) throw new ApiError('VALIDATION_ERROR', 'Send latitude and longitude together, or neither');
      const position = latitude !== undefined && longitude !== undefined ? { latitude, longitude } : undefined;
      const agentId = request.fieldAgent.agentId;
      const seen = (tasks: readonly FieldTask[]) => logTaskAccess(db, { actorKind: 'agent', actorId: agentId, channel: 'field', ip: request.ip }, tasks);
      return { sortedBy: position ? ('distance' as const) : ('due' as const), data: await fieldTasksOf(db, sources, agentId, position, new Date(), seen) };
    },
  );

  app.post(
    '/field/tasks/:kind/:id/start',
    {
      schema: {
        tags: [FIELD_TAG],
        operationId: 'fieldStartTask',
        summary: 'Start a visit (from now on a cancellation is not refunded to the customer)',
        security: sessionSecurity,
        params: TaskParams,
        response: { 200: Type.Object({ ok: Type.Literal(true) }), ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      await startVisit(db, await taskOf(request, request.params));
      return { ok: true as const };
    },
  );

  app.post(
    '/field/tasks/:kind/:id/report',
    {
      bodyLimit: REPORT_LIMIT,
      schema: {
        tags: [FIELD_TAG],
        operationId: 'fieldReportTask',
        summary: 'File the visit report (the agent API\'s checks and outcome); once per Idempotency-Key',
        description: `${REPORT_DESCRIPTION} Send an Idempotency-Key header, new for each report: the same key again answers the first report's outcome (with Idempotent-Replayed: true) and files nothing; the same key with another report is 422.`,
        security: sessionSecurity,
        consumes: ['multipart/form-data'],
        params: TaskParams,
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: 'Required: a new UUID for each report' })) }),
        body: ReportForm,
        response: { 200: ReportAnswer, ...portalErrors(400, 401, 403, 404, 409, 422), 413: PortalError, 415: PortalError },
      },
    },
    async (request, reply) => {
      const agentId = request.fieldAgent.agentId;
      const key = reportKeyOf(request);
      const photos = photosOf(request);
      const fingerprint = reportFingerprint(request.params.kind, request.params.id, request.body as Record<string, unknown>, photos);
      const replay = async () => {
        const earlier = await findReportKey(db, agentId, key);
        if (!earlier) return undefined;
        const answer = replayOf<ReportAnswerBody>(earlier, fingerprint);
        void reply.header(REPLAYED_HEADER, 'true');
        return answer;
      };
      const earlier = await replay();
      if (earlier) return earlier;
      const task = await taskOf(request, request.params);
      const answer = (filed: FiledReport, filedAt: Date): ReportAnswerBody => ({
        ok: true,
        kind: task.task.kind,
        id: task.task.verificationId,
        outcome: filed.outcome,
        reason: filed.reason ?? null,
        flaggedForReview: filed.reviewReason !== undefined,
        reviewReason: filed.reviewReason ?? null,
        heldForReview: filed.held,
        filedAt: filedAt.toISOString(),
      });
      const now = new Date();
      try {
        const filed = await fileVisitReport(db, store, task, request.body, photos, {
          now,
          inTransaction: (trx, done) =>
            saveReportKey(trx, { agentId, key, fingerprint, kind: task.task.kind, verificationId: task.task.verificationId, response: answer(done, now) }),
        });
        return answer(filed, now);
      } catch (error) {
        // The same report sent twice at once: the one that lost answers with the winner's outcome.
        const raced = await replay();
        if (raced) return raced;
        throw error;
      }
    },
  );
}

type ReportAnswerBody = Static<typeof ReportAnswer>;
