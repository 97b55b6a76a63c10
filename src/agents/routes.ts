import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { logTaskAccess } from '../access-log/service.js';
import type { FileStore } from '../files/store.js';
import type { DB } from '../platform/db/schema.js';
import { authenticatedBy } from '../platform/rate-limit.js';
import { acceptVisitReports, fileVisitReport, openTaskOf, REPORT_DESCRIPTION, REPORT_LIMIT, ReportForm, startVisit, TaskParams } from './report.js';
import { Enum, errorsA, Opt, Str, success } from './schemas.js';
import { authenticateAgent, listAgents, openTasksOf, type AgentContext } from './service.js';
import type { FieldTaskSource } from './tasks.js';
import type { FieldTaskKind } from './tables.js';

declare module 'fastify' {
  interface FastifyRequest {
    agent: AgentContext;
  }
}

const TAGS = ['Field agents'];

/** An open task as the agent API shows it (the field app's adds what it needs on the road). */
export const TaskView = Type.Object({
  kind: Enum(['address', 'business']),
  id: Type.Integer(),
  reference: Str(),
  assignedAt: Str(),
  visitStartedAt: Str('Empty until the visit is started'),
  place: Type.Object({ street: Str(), city: Str(), landmark: Str(), lga: Str(), state: Str(), country: Str() }),
  contact: Type.Object({ name: Str(), phone: Str('Empty when the customer did not allow contact') }),
  business: Opt(Type.Object({ name: Str(), type: Str(), rcNumber: Str() })),
  reviewNote: Opt(Str("The operator's note when an earlier report of this visit was sent back")),
});

const AgentView = Type.Object({
  id: Str(),
  name: Str(),
  email: Str(),
  phone: Str(),
  states: Type.Array(Str()),
  active: Type.Boolean(),
  openTasks: Type.Integer(),
});

export interface AgentRoutesOptions {
  db: Kysely<DB>;
  store: FileStore;
  sources: readonly FieldTaskSource[];
}

/**
 * The agent API: an agent (Authorization: Bearer ak_...) lists their open tasks, starts a visit,
 * and files the visit report with photos, which completes the verification (and its webhook), or
 * waits in the operator's review queue when the review check flags it (src/agents/review.ts).
 */
export async function agentRoutes(parent: FastifyInstance, { db, store, sources }: AgentRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  // The same bearer scheme, with an agent credential (ak_...) instead of a customer secret.
  const security = [{ bearer: [] }];

  // Who sends is known before any upload is read; a refused credential counts against the client's address.
  app.addHook(
    'onRequest',
    authenticatedBy(async (request) => {
      request.agent = await authenticateAgent(db, request.headers.authorization);
    }),
  );
  const photosOf = await acceptVisitReports(app);

  app.get(
    '/v1/agent/me',
    { schema: { tags: TAGS, operationId: 'getCurrentAgent', summary: 'The signed-in field agent', security, response: { 200: success(AgentView), ...errorsA(401) } } },
    async (request) => {
      const [agent] = await listAgents(db, request.agent.agentId);
      const { credentialHint: _hint, createdAt: _created, ...shown } = agent!;
      return { status: 'success' as const, data: shown };
    },
  );

  app.get(
    '/v1/agent/tasks',
    {
      schema: {
        tags: TAGS,
        operationId: 'listAgentTasks',
        summary: "The agent's open visits (addresses and businesses), oldest assignment first",
        security,
        response: { 200: success(Type.Array(TaskView)), ...errorsA(401) },
      },
    },
    async (request) => {
      const tasks = await openTasksOf(db, request.agent.agentId);
      await logTaskAccess(db, { actorKind: 'agent', actorId: request.agent.agentId, channel: 'api', ip: request.ip }, tasks);
      const summaries = new Map<FieldTaskKind, Awaited<ReturnType<FieldTaskSource['summarize']>>>();
      for (const source of sources) summaries.set(source.kind, await source.summarize(db, tasks.filter((t) => t.kind === source.kind)));
      const data = tasks.flatMap((task) => {
        const summary = summaries.get(task.kind)?.get(task.verificationId);
        if (!summary) return [];
        return [{ kind: task.kind, id: task.verificationId, assignedAt: task.assignedAt?.toISOString() ?? '', ...summary, ...(task.reviewNote ? { reviewNote: task.reviewNote } : {}) }];
      });
      return { status: 'success' as const, data };
    },
  );

  app.post(
    '/v1/agent/tasks/:kind/:id/start',
    {
      schema: {
        tags: TAGS,
        operationId: 'startAgentTask',
        summary: 'Start a visit (from now on a cancellation is not refunded to the customer)',
        security,
        params: TaskParams,
        response: { 200: success(Type.Literal('ok')), ...errorsA(400, 401, 404, 409) },
      },
    },
    async (request) => {
      await startVisit(db, await openTaskOf(db, sources, request.agent.agentId, request.params.kind, request.params.id));
      return { status: 'success' as const, data: 'ok' as const };
    },
  );

  app.post(
    '/v1/agent/tasks/:kind/:id/report',
    {
      bodyLimit: REPORT_LIMIT,
      schema: {
        tags: TAGS,
        operationId: 'reportAgentTask',
        summary: 'File the visit report: GPS position, photos, neighbour, outcome; completes the verification (a flagged report waits for review)',
        description: REPORT_DESCRIPTION,
        security,
        consumes: ['multipart/form-data'],
        params: TaskParams,
        body: ReportForm,
        response: { 200: success(Type.Literal('ok')), ...errorsA(400, 401, 404, 409, 413, 415) },
      },
    },
    async (request) => {
      const task = await openTaskOf(db, sources, request.agent.agentId, request.params.kind, request.params.id);
      await fileVisitReport(db, store, task, request.body, photosOf(request));
      return { status: 'success' as const, data: 'ok' as const };
    },
  );
}
