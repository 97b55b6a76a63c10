import { sql, type Kysely, type Transaction } from 'kysely';
import { closeAgentAccount, inviteAgentAccount, type AgentInvitation } from '../agents/accounts.js';
import { visitDueAt } from '../agents/due.js';
import {
  AgentInputError,
  assignTask,
  checkAgent,
  checkCoverage,
  createAgent,
  deactivateAgentIn,
  listAgents,
  listOpenTasks,
  setCoverage,
  TASK_COLUMNS,
  toTask,
  type AgentView,
  type FieldTask,
  type NewAgent,
} from '../agents/service.js';
import type { FieldTaskKind } from '../agents/tables.js';
import type { FieldTaskSource, TaskPlace, TaskSummary, VisitResult } from '../agents/tasks.js';
import type { DB, Mode } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { audit, type Actor } from '../portal/audit.js';
import type { PeopleMail } from '../portal/mail.js';

/**
 * Field agents as the operator console manages them: the list with each agent's workload and
 * account, create (which invites the agent's field-app account by mail and hands the one-time
 * link to the operator once), a new invitation, coverage (states and LGAs), deactivation (their
 * sessions end at once, their open visits move), each agent's visits, and the assignment of
 * visits. Every change is audited with the operator in its own transaction.
 */

/** Whether the agent can sign in to the field app: no account yet, invited (link not used), or signed in at least once. */
export type AgentAccountState = 'none' | 'invited' | 'active';

export interface ConsoleAgent extends Omit<AgentView, 'credentialHint'> {
  completedVisits: number;
  account: AgentAccountState;
  /** The newest unused invitation link's expiry, while it is good. */
  inviteExpiresAt: string | null;
}

export interface TaskEntry {
  kind: FieldTaskKind;
  id: number;
  reference: string;
  orgId: string;
  orgName: string;
  mode: Mode;
  place: TaskPlace;
  business: { name: string; type: string; rcNumber: string } | null;
  agentId: string | null;
  agentName: string | null;
  createdAt: string;
  dueAt: string;
  assignedAt: string | null;
  visitStartedAt: string;
  /** The operator's note after a report was sent back. */
  reviewNote: string | null;
  /** A report waits in the review queue. */
  inReview: boolean;
}

export interface VisitEntry {
  kind: FieldTaskKind;
  id: number;
  reference: string;
  orgId: string;
  orgName: string;
  place: TaskPlace;
  createdAt: string;
  completedAt: string;
  outcome: 'verified' | 'not_verified';
  flaggedForReview: boolean;
  reviewReason: string;
}

export interface AgentDetail {
  agent: ConsoleAgent;
  openTasks: TaskEntry[];
  completedVisits: VisitEntry[];
}

export interface ConsoleAgentsOptions {
  mail: PeopleMail;
  publicUrl: string;
  sources: readonly FieldTaskSource[];
}

/** How many completed visits an agent's page shows: the newest. */
const VISIT_HISTORY = 100;

/** An operator's bad input: 400 for what to fix, 404 for an unknown agent, 409 for a state that forbids it. */
function toApiError(error: unknown): unknown {
  if (!(error instanceof AgentInputError)) return error;
  const message = error.message.replace(/^--/, '');
  if (/^no agent /.test(message)) return new ApiError('NOT_FOUND_ERROR', message);
  if (/already exists|already has an account|is deactivated|no open .* task/.test(message)) return new ApiError('CONFLICT', message);
  return new ApiError('VALIDATION_ERROR', message);
}

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toApiError(error);
  }
}

/** Visits an agent's report completed (verified or not), not those the customer cancelled. */
const completedCount = sql<number>`(
  select count(*)::int from field_tasks t
  where t.agent_id = a.id and t.closed_at is not null and t.outcome in ('verified', 'not_verified'))`;

export class ConsoleAgents {
  private readonly sending = new Set<Promise<void>>();
  private readonly sourceOf: Map<FieldTaskKind, FieldTaskSource>;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: ConsoleAgentsOptions,
  ) {
    this.sourceOf = new Map(options.sources.map((source) => [source.kind, source]));
  }

  /** Waits for mails still being handed to SMTP (on shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.sending]);
  }

  private dispatch(mailId: number): void {
    const sending = this.options.mail.dispatch(mailId).finally(() => this.sending.delete(sending));
    this.sending.add(sending);
  }

  async list(onlyId?: string): Promise<ConsoleAgent[]> {
    const agents = await listAgents(this.db, onlyId);
    if (agents.length === 0) return [];
    const extra = await this.db
      .selectFrom('field_agents as a')
      .select([
        'a.id',
        'a.person_id',
        completedCount.as('completed'),
        sql<boolean>`exists (select 1 from portal_sessions s where s.person_id = a.person_id)`.as('signed_in'),
        sql<Date | null>`(select max(k.expires_at) from person_tokens k where k.person_id = a.person_id and k.purpose = 'reset_password' and k.used_at is null and k.expires_at > now())`.as('invite_expires'),
      ])
      .where('a.id', 'in', agents.map((agent) => agent.id))
      .execute();
    const byId = new Map(extra.map((row) => [row.id, row]));
    return agents.map(({ credentialHint: _hint, ...agent }) => {
      const row = byId.get(agent.id)!;
      const account: AgentAccountState = !row.person_id ? 'none' : row.signed_in ? 'active' : 'invited';
      return {
        ...agent,
        completedVisits: Number(row.completed),
        account,
        inviteExpiresAt: account === 'invited' && row.invite_expires ? new Date(row.invite_expires).toISOString() : null,
      };
    });
  }

  private async one(id: string): Promise<ConsoleAgent> {
    const [agent] = await this.list(id);
    if (!agent) throw new ApiError('NOT_FOUND_ERROR', `no agent ${id}`);
    return agent;
  }

  /** Queues the invitation mail in the transaction; returns its id for dispatch after the commit. */
  private async mailInvitation(trx: Transaction<DB>, invitation: AgentInvitation): Promise<number> {
    const expires = invitation.linkExpiresAt.toISOString().slice(0, 16).replace('T', ' ');
    return this.options.mail.queue(trx, {
      kind: 'agent_invitation',
      expiresAt: invitation.linkExpiresAt,
      to: invitation.email,
      subject: 'Your Vouch field app account',
      text: [
        `Hello ${invitation.name},`,
        '',
        'You have been added as a Vouch field agent. Open this link on your phone to choose your password; it then opens the field app, where your visits are listed:',
        '',
        invitation.signInLink,
        '',
        `The link works once, until ${expires} UTC. If it has expired, ask your operations team for a new one.`,
      ].join('\n'),
    });
  }

  /**
   * Creates an agent and their field-app account: the invitation is mailed, and its link is
   * returned to show the operator once. One transaction with the audit row: an address that is
   * already someone's account refuses the whole creation.
   */
  async create(input: NewAgent, actor: Actor): Promise<{ agent: ConsoleAgent; invitation: AgentInvitation }> {
    const checked = await mapped(async () => checkAgent(input));
    const { agentId, invitation, mailId } = await mapped(() =>
      this.db.transaction().execute(async (trx) => {
        // The API credential (ak_...) is made too, unseen: `vouch agent rotate-credential` hands one out for integrations.
        const { agent } = await createAgent(trx, checked);
        const invitation = await inviteAgentAccount(trx, agent.id, this.options.publicUrl);
        const mailId = await this.mailInvitation(trx, invitation);
        await audit(trx, {
          orgId: null,
          actor,
          action: 'agent.created',
          target: agent.email,
          after: { id: agent.id, name: agent.name, email: agent.email, phone: agent.phone, states: agent.states, lgas: agent.lgas },
        });
        return { agentId: agent.id, invitation, mailId };
      }),
    );
    this.dispatch(mailId);
    return { agent: await this.one(agentId), invitation };
  }

  /** A new one-time link (mailed and returned once); earlier links stop working. */
  async invite(id: string, actor: Actor): Promise<AgentInvitation> {
    const agent = await this.one(id);
    const { invitation, mailId } = await mapped(() =>
      this.db.transaction().execute(async (trx) => {
        const invitation = await inviteAgentAccount(trx, id, this.options.publicUrl);
        const mailId = await this.mailInvitation(trx, invitation);
        await audit(trx, { orgId: null, actor, action: 'agent.invited', target: agent.email, after: { id, linkExpiresAt: invitation.linkExpiresAt.toISOString() } });
        return { invitation, mailId };
      }),
    );
    this.dispatch(mailId);
    return invitation;
  }

  /** Replaces what an agent covers. */
  async setCoverage(id: string, states: readonly string[], lgas: readonly string[], actor: Actor): Promise<ConsoleAgent> {
    const coverage = await mapped(async () => checkCoverage(states, lgas));
    await mapped(() =>
      this.db.transaction().execute(async (trx) => {
        const { before, after } = await setCoverage(trx, id, coverage);
        await audit(trx, {
          orgId: null,
          actor,
          action: 'agent.coverage_changed',
          target: before.email,
          before: { states: before.states, lgas: before.lgas },
          after: { states: after.states, lgas: after.lgas },
        });
      }),
    );
    return this.one(id);
  }

  /**
   * Deactivates an agent: the credential and every field-app session stop working at once, open
   * visits move to other agents covering them (or to the unassigned queue).
   */
  async deactivate(id: string, actor: Actor): Promise<{ agent: ConsoleAgent; moved: { kind: FieldTaskKind; id: number; agentId: string | null }[] }> {
    const current = await this.one(id);
    if (!current.active) throw new ApiError('CONFLICT', `${current.name} is already deactivated`);
    const moved = await mapped(() =>
      this.db.transaction().execute(async (trx) => {
        const { before, moved } = await deactivateAgentIn(trx, id);
        // Signed out everywhere at once; an unused invitation would let them set a password again.
        await closeAgentAccount(trx, id);
        await audit(trx, {
          orgId: null,
          actor,
          action: 'agent.deactivated',
          target: before.email,
          before: { active: true, openTasks: before.openTasks },
          after: { active: false, moved: moved.map((task) => ({ kind: task.kind, id: task.verificationId, agentId: task.agentId })) },
        });
        return moved;
      }),
    );
    return { agent: await this.one(id), moved: moved.map((task) => ({ kind: task.kind, id: task.verificationId, agentId: task.agentId })) };
  }

  /** Tasks with what the agent sees, their organization, and whether a report waits for review. */
  private async entries(tasks: readonly (FieldTask & { inReview?: boolean })[]): Promise<TaskEntry[]> {
    const summaries = await this.summaries(tasks);
    const names = await this.names(tasks.map((task) => task.orgId), tasks.flatMap((task) => (task.agentId ? [task.agentId] : [])));
    return tasks.flatMap((task) => {
      const summary = summaries.get(`${task.kind}:${task.verificationId}`);
      if (!summary) return [];
      return [
        {
          kind: task.kind,
          id: task.verificationId,
          reference: summary.reference,
          orgId: task.orgId,
          orgName: names.orgs.get(task.orgId) ?? '',
          mode: task.mode,
          place: summary.place,
          business: summary.business ?? null,
          agentId: task.agentId,
          agentName: task.agentId ? (names.agents.get(task.agentId) ?? null) : null,
          createdAt: task.createdAt.toISOString(),
          dueAt: visitDueAt(task.createdAt).toISOString(),
          assignedAt: task.assignedAt?.toISOString() ?? null,
          visitStartedAt: summary.visitStartedAt,
          reviewNote: task.reviewNote,
          inReview: task.inReview ?? false,
        },
      ];
    });
  }

  private async summaries(tasks: readonly FieldTask[], db: Kysely<DB> = this.db): Promise<Map<string, TaskSummary>> {
    const out = new Map<string, TaskSummary>();
    for (const source of this.options.sources) {
      const found = await source.summarize(db, tasks.filter((task) => task.kind === source.kind));
      for (const [id, summary] of found) out.set(`${source.kind}:${id}`, summary);
    }
    return out;
  }

  private async names(orgIds: string[], agentIds: string[]) {
    const [orgs, agents] = await Promise.all([
      orgIds.length ? this.db.selectFrom('organizations').select(['id', 'name']).where('id', 'in', [...new Set(orgIds)]).execute() : [],
      agentIds.length ? this.db.selectFrom('field_agents').select(['id', 'name']).where('id', 'in', [...new Set(agentIds)]).execute() : [],
    ]);
    return { orgs: new Map(orgs.map((row) => [row.id, row.name])), agents: new Map(agents.map((row) => [row.id, row.name])) };
  }

  /** Open visits, oldest first: all, or those waiting for an agent. */
  async tasks(filter: { unassigned?: boolean }, limit = 500): Promise<TaskEntry[]> {
    return this.entries(await listOpenTasks(this.db, { unassigned: filter.unassigned ?? false }, limit));
  }

  /** An agent with their open visits (and those in review) and their completed visits, newest first. */
  async detail(id: string): Promise<AgentDetail> {
    const agent = await this.one(id);
    const open = await listOpenTasks(this.db, { agentId: id });
    const heldRows = await this.db
      .selectFrom('field_tasks')
      .select(TASK_COLUMNS)
      .where('agent_id', '=', id)
      .where('closed_at', 'is', null)
      .where('held_at', 'is not', null)
      .orderBy('held_at')
      .execute();
    const held = heldRows.map((row) => ({ ...toTask(row), inReview: true }));
    const closed = await this.db
      .selectFrom('field_tasks')
      .select([...TASK_COLUMNS, 'closed_at'])
      .where('agent_id', '=', id)
      .where('closed_at', 'is not', null)
      .where('outcome', 'in', ['verified', 'not_verified'])
      .orderBy('closed_at', 'desc')
      .limit(VISIT_HISTORY)
      .execute();
    const closedTasks: FieldTask[] = closed.map(toTask);
    const summaries = await this.summaries(closedTasks);
    const results = new Map<string, VisitResult>();
    for (const source of this.options.sources) {
      const found = await source.results(this.db, closedTasks.filter((task) => task.kind === source.kind));
      for (const [vid, result] of found) results.set(`${source.kind}:${vid}`, result);
    }
    const { orgs } = await this.names(closedTasks.map((task) => task.orgId), []);
    const completedVisits: VisitEntry[] = closedTasks.flatMap((task) => {
      const key = `${task.kind}:${task.verificationId}`;
      const summary = summaries.get(key);
      const result = results.get(key);
      if (!summary || !result || (result.status !== 'verified' && result.status !== 'not_verified')) return [];
      return [
        {
          kind: task.kind,
          id: task.verificationId,
          reference: summary.reference,
          orgId: task.orgId,
          orgName: orgs.get(task.orgId) ?? '',
          place: summary.place,
          createdAt: task.createdAt.toISOString(),
          completedAt: result.completedAt,
          outcome: result.status,
          flaggedForReview: result.flaggedForReview,
          reviewReason: result.reviewReason,
        },
      ];
    });
    return { agent, openTasks: await this.entries([...held, ...open]), completedVisits };
  }

  /** Gives an open visit (not one in review: decide that in the review queue) to an active agent. */
  async assign(kind: FieldTaskKind, id: number, agentId: string, actor: Actor): Promise<TaskEntry> {
    if (!this.sourceOf.has(kind)) throw new ApiError('NOT_FOUND_ERROR', `no ${kind} visits here`);
    const task = await mapped(() =>
      this.db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom('field_tasks')
          .select(['agent_id', 'org_id', 'held_at'])
          .where('kind', '=', kind)
          .where('verification_id', '=', id)
          .where('closed_at', 'is', null)
          .forUpdate()
          .executeTakeFirst();
        if (!before) throw new ApiError('NOT_FOUND_ERROR', `no open ${kind} visit ${id}`);
        if (before.held_at) throw new ApiError('CONFLICT', 'A report for this visit waits in the review queue: approve, send back or reassign it there');
        const task = await assignTask(trx, kind, id, agentId);
        const [summary] = [...(await this.summaries([task], trx)).values()];
        await audit(trx, {
          orgId: task.orgId,
          actor,
          action: 'field_task.assigned',
          target: `${kind} ${summary?.reference ?? id}`,
          before: { agentId: before.agent_id },
          after: { agentId },
        });
        return task;
      }),
    );
    const [entry] = await this.entries([task]);
    return entry!;
  }
}
