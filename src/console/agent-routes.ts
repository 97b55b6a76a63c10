import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { logTaskAccess } from '../access-log/service.js';
import { MAX_NOTE_LENGTH, ReviewQueue } from '../agents/review.js';
import type { FieldTaskKind } from '../agents/tables.js';
import type { Mode } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Done, Nullable, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { ConsoleAgents } from './agents.js';
import { operatorActor, requireOperator } from './guard.js';
import { CONSOLE_TAG } from './routes.js';

const Kind = Type.Union([Type.Literal('address'), Type.Literal('business')]);
const Instant = Type.String({ format: 'date-time' });
const Place = Type.Object({ street: Type.String(), city: Type.String(), landmark: Type.String(), lga: Type.String(), state: Type.String(), country: Type.String() });
const Business = Type.Object({ name: Type.String(), type: Type.String(), rcNumber: Type.String() });

const ConsoleAgent = Type.Object({
  id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  phone: Type.String({ description: 'E.164' }),
  states: Type.Array(Type.String(), { description: 'Canonical state names covered' }),
  lgas: Type.Array(Type.String(), { description: '"State/LGA" entries; a state with none listed is covered whole' }),
  active: Type.Boolean(),
  openTasks: Type.Integer({ description: 'Open visits assigned, not counting reports in review' }),
  completedVisits: Type.Integer(),
  account: Type.Union([Type.Literal('none'), Type.Literal('invited'), Type.Literal('active')], {
    description: 'Field-app account: none yet, invited (the link not used yet), active (signed in at least once)',
  }),
  inviteExpiresAt: Nullable(Instant),
  createdAt: Instant,
});

const Invitation = Type.Object({
  signInLink: Type.String({ description: 'One-time link that sets the password and opens the field app; shown only in this answer (and the mail)' }),
  linkExpiresAt: Instant,
  email: Type.String({ description: 'Where the link was mailed' }),
});

const TaskEntry = Type.Object({
  kind: Kind,
  id: Type.Integer(),
  reference: Type.String(),
  orgId: Type.String(),
  orgName: Type.String(),
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  place: Place,
  business: Nullable(Business),
  agentId: Nullable(Type.String()),
  agentName: Nullable(Type.String()),
  createdAt: Instant,
  dueAt: Instant,
  assignedAt: Nullable(Instant),
  visitStartedAt: Type.String({ description: 'Empty until the visit is started' }),
  reviewNote: Nullable(Type.String({ description: "The operator's note after a report was sent back" })),
  inReview: Type.Boolean({ description: 'A report waits in the review queue' }),
});

const VisitEntry = Type.Object({
  kind: Kind,
  id: Type.Integer(),
  reference: Type.String(),
  orgId: Type.String(),
  orgName: Type.String(),
  place: Place,
  createdAt: Instant,
  completedAt: Type.String(),
  outcome: Type.Union([Type.Literal('verified'), Type.Literal('not_verified')]),
  flaggedForReview: Type.Boolean(),
  reviewReason: Type.String(),
});

const HeldVisit = Type.Object({
  kind: Kind,
  id: Type.Integer(),
  reference: Type.String(),
  orgId: Type.String(),
  orgName: Type.String(),
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  place: Place,
  contact: Type.Object({ name: Type.String(), phone: Type.String() }),
  business: Type.Optional(Business),
  agent: Nullable(Type.Object({ id: Type.String(), name: Type.String(), active: Type.Boolean() })),
  reviewReason: Type.String(),
  reasons: Type.Array(Type.String()),
  createdAt: Instant,
  dueAt: Instant,
  assignedAt: Nullable(Instant),
  visitStartedAt: Type.String(),
  filedAt: Instant,
  late: Type.Boolean(),
  report: Type.Object({
    outcome: Type.Union([Type.Literal('verified'), Type.Literal('failed')]),
    reason: Nullable(Type.String()),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    kmOutsideState: Nullable(Type.Integer({ description: "How far the position lies outside the place's state (0 inside)" })),
    neighbor: Type.Object({ name: Type.String(), comment: Type.String(), phone: Type.String() }),
    findings: Type.Object(
      {
        isBusinessKnown: Type.Optional(Type.Boolean()),
        isBusinessOwnerKnown: Type.Optional(Type.Boolean()),
        ownerVisitsFrequently: Type.Optional(Type.Boolean()),
        isCorrectBusinessName: Type.Optional(Type.Boolean()),
        businessNameFound: Type.Optional(Type.String()),
        businessArea: Type.Optional(Type.String()),
      },
      { description: 'Business visits' },
    ),
    photos: Type.Array(Type.String(), { description: 'Signed photo links' }),
  }),
});

const AgentParams = Type.Object({ agentId: Type.String({ description: 'Agent id' }) });
const TaskParams = Type.Object({ kind: Kind, id: Type.String({ pattern: '^\\d{1,15}$', description: 'Verification id' }) });
const Coverage = {
  states: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 37, description: 'States in any accepted spelling ("lagos", "Abuja")' }),
  lgas: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 774, description: '"State/LGA", e.g. "Lagos/Eti-Osa"; an LGA adds its state' })),
};

/** Field agents, their visits, and the review queue in the operator console: operators only. */
export async function consoleAgentRoutes(parent: FastifyInstance, { db, config, mail, urls, store, fieldSources }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const agents = new ConsoleAgents(db, { mail, publicUrl: config.publicUrl, sources: fieldSources });
  const reviews = new ReviewQueue(db, { store, sources: fieldSources, urls });
  /** Tasks shown with their place, applicant or report: the access log names the operator. */
  const shown = <T extends { kind: FieldTaskKind; id: number; orgId: string; mode?: Mode }>(request: FastifyRequest, items: T[]): Promise<T[]> =>
    logTaskAccess(
      db,
      { actorKind: 'operator', actorId: request.portal.person.id, channel: 'console', ip: request.ip },
      items.map((item) => ({ kind: item.kind, verificationId: item.id, orgId: item.orgId, mode: item.mode ?? null })),
    ).then(() => items);
  app.addHook('onClose', () => agents.flush());
  const operatorsOnly = [requireSession(db), requireOperator];
  const agentIdOf = (raw: string) => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) throw new ApiError('NOT_FOUND_ERROR', `no agent ${raw}`);
    return raw;
  };
  const tags = [CONSOLE_TAG];

  app.get(
    '/console/agents',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleListAgents',
        summary: 'Field agents, oldest first, with coverage, workload and field-app account',
        security: sessionSecurity,
        response: { 200: Type.Object({ data: Type.Array(ConsoleAgent) }), ...portalErrors(401, 403) },
      },
    },
    async () => ({ data: await agents.list() }),
  );

  app.post(
    '/console/agents',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleCreateAgent',
        summary: "Add a field agent and invite their field-app account",
        description: 'The one-time sign-in link is mailed to the agent and returned here once, for the operator to pass on (e.g. by text message).',
        security: sessionSecurity,
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          email: Type.String({ minLength: 3, maxLength: 254 }),
          phone: Type.String({ minLength: 1, maxLength: 40, description: 'Nigerian phone number' }),
          ...Coverage,
        }),
        response: { 201: Type.Object({ agent: ConsoleAgent, invitation: Invitation }), ...portalErrors(400, 401, 403, 409) },
      },
    },
    async (request, reply) => {
      const { name, email, phone, states, lgas } = request.body;
      const { agent, invitation } = await agents.create({ name, email, phone, states, lgas }, operatorActor(request));
      reply.status(201);
      return { agent, invitation: { signInLink: invitation.signInLink, linkExpiresAt: invitation.linkExpiresAt.toISOString(), email: invitation.email } };
    },
  );

  app.get(
    '/console/agents/:agentId',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleGetAgent',
        summary: 'An agent with their open visits (in review first) and their completed visits, newest first',
        security: sessionSecurity,
        params: AgentParams,
        response: { 200: Type.Object({ agent: ConsoleAgent, openTasks: Type.Array(TaskEntry), completedVisits: Type.Array(VisitEntry) }), ...portalErrors(401, 403, 404) },
      },
    },
    async (request) => {
      const detail = await agents.detail(agentIdOf(request.params.agentId));
      await shown(request, [...detail.openTasks, ...detail.completedVisits]);
      return detail;
    },
  );

  app.put(
    '/console/agents/:agentId/coverage',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleSetAgentCoverage',
        summary: 'Set the states and LGAs an agent covers (new visits only; open visits stay)',
        security: sessionSecurity,
        params: AgentParams,
        body: Type.Object(Coverage),
        response: { 200: ConsoleAgent, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => agents.setCoverage(agentIdOf(request.params.agentId), request.body.states, request.body.lgas ?? [], operatorActor(request)),
  );

  app.post(
    '/console/agents/:agentId/invite',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleInviteAgent',
        summary: 'A new one-time sign-in link for the agent (mailed, and shown once); earlier links stop working',
        security: sessionSecurity,
        params: AgentParams,
        response: { 200: Invitation, ...portalErrors(401, 403, 404, 409) },
      },
    },
    async (request) => {
      const invitation = await agents.invite(agentIdOf(request.params.agentId), operatorActor(request));
      return { signInLink: invitation.signInLink, linkExpiresAt: invitation.linkExpiresAt.toISOString(), email: invitation.email };
    },
  );

  app.post(
    '/console/agents/:agentId/deactivate',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleDeactivateAgent',
        summary: 'Deactivate an agent: signed out everywhere at once, credential refused, open visits moved to other agents (or unassigned)',
        security: sessionSecurity,
        params: AgentParams,
        response: {
          200: Type.Object({ agent: ConsoleAgent, moved: Type.Array(Type.Object({ kind: Kind, id: Type.Integer(), agentId: Nullable(Type.String()) })) }),
          ...portalErrors(401, 403, 404, 409),
        },
      },
    },
    async (request) => agents.deactivate(agentIdOf(request.params.agentId), operatorActor(request)),
  );

  app.get(
    '/console/field-tasks',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleListFieldTasks',
        summary: 'Open field visits, oldest first: all, or those waiting for an agent (unassigned=true)',
        security: sessionSecurity,
        querystring: Type.Object({ unassigned: Type.Optional(Type.Boolean()) }),
        response: { 200: Type.Object({ data: Type.Array(TaskEntry) }), ...portalErrors(400, 401, 403) },
      },
    },
    async (request) => ({ data: await shown(request, await agents.tasks({ unassigned: request.query.unassigned ?? false })) }),
  );

  app.post(
    '/console/field-tasks/:kind/:id/assign',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleAssignFieldTask',
        summary: 'Give an open visit to an active agent (whatever they cover)',
        security: sessionSecurity,
        params: TaskParams,
        body: Type.Object({ agentId: Type.String() }),
        response: { 200: TaskEntry, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => agents.assign(request.params.kind, Number(request.params.id), agentIdOf(request.body.agentId), operatorActor(request)),
  );

  app.get(
    '/console/reviews',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleListReviews',
        summary: 'Visit reports the system flagged (GPS far from the place, too few photos, late), held for review, oldest first',
        security: sessionSecurity,
        response: { 200: Type.Object({ data: Type.Array(HeldVisit) }), ...portalErrors(401, 403) },
      },
    },
    async (request) => ({ data: await shown(request, await reviews.list()) }),
  );

  app.post(
    '/console/reviews/:kind/:id/approve',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleApproveReview',
        summary: "Approve a held report: the verification completes with it and the customer's webhook is sent (still flagged, with the reason)",
        security: sessionSecurity,
        params: TaskParams,
        response: { 200: Done, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      await reviews.approve(request.params.kind, Number(request.params.id), operatorActor(request));
      return { ok: true as const };
    },
  );

  app.post(
    '/console/reviews/:kind/:id/send-back',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleSendBackReview',
        summary: 'Send a held report back: discarded with its photos; the same agent visits again and sees the note',
        security: sessionSecurity,
        params: TaskParams,
        body: Type.Object({ note: Type.String({ minLength: 1, maxLength: MAX_NOTE_LENGTH }) }),
        response: { 200: Done, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      await reviews.sendBack(request.params.kind, Number(request.params.id), request.body.note, operatorActor(request));
      return { ok: true as const };
    },
  );

  app.post(
    '/console/reviews/:kind/:id/reassign',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleReassignReview',
        summary: "Reassign a held report's visit: discarded with its photos; another agent visits (with the note, if any)",
        security: sessionSecurity,
        params: TaskParams,
        body: Type.Object({ agentId: Type.String(), note: Type.Optional(Type.String({ maxLength: MAX_NOTE_LENGTH })) }),
        response: { 200: Done, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      await reviews.reassign(request.params.kind, Number(request.params.id), request.body.agentId, request.body.note, operatorActor(request));
      return { ok: true as const };
    },
  );
}
