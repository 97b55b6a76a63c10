import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { normalizePhone } from '../identities/matching.js';
import { resolveLga, resolveState } from '../locations/nigeria.js';
import type { DB, Mode } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import type { FieldTaskKind } from './tables.js';
import { notFound } from '../platform/not-found.js';

/**
 * Field agents (the operator's people who visit addresses and businesses) and their tasks.
 * An agent authenticates with their own credential, `ak_` + 32 random bytes, stored hashed.
 * A task is one live verification to visit; it is assigned when it is created to an active
 * agent covering its place — one who lists its LGA first, then one covering its whole state —
 * with the fewest open tasks, or waits unassigned for the operator.
 *
 * Coverage: `states` (canonical names) and `lgas` ("State/LGA", canonical). An agent with no LGA
 * listed for one of their states covers all of it; with some listed, only those.
 */

const CREDENTIAL_FORMAT = /^ak_[A-Za-z0-9_-]{43}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export type CredentialGenerator = () => string;
export const generateAgentCredential: CredentialGenerator = () => `ak_${randomBytes(32).toString('base64url')}`;

function hashCredential(credential: string): string {
  return createHash('sha256').update(credential).digest('hex');
}

function credentialHint(credential: string): string {
  return `${credential.slice(0, 6)}…${credential.slice(-4)}`;
}

/** A bad operator input (CLI): the message says what to fix. */
export class AgentInputError extends Error {}

export interface AgentView {
  id: string;
  name: string;
  email: string;
  phone: string;
  states: string[];
  /** "State/LGA" entries; a state with none covered whole. */
  lgas: string[];
  active: boolean;
  openTasks: number;
  credentialHint: string;
  createdAt: string;
}

export interface NewAgent {
  name: string;
  email: string;
  phone: string;
  /** State names in any accepted spelling ("lagos", "Abuja"). */
  states: string[];
  /** "State/LGA" in any accepted spelling ("lagos/eti osa"); an LGA's state is covered by it. */
  lgas?: string[] | undefined;
}

/** What an agent covers, checked and canonical. */
export interface Coverage {
  states: string[];
  lgas: string[];
}

export interface AgentContext {
  agentId: string;
  name: string;
}

export interface FieldTaskRef {
  kind: FieldTaskKind;
  verificationId: number;
  orgId: string;
  mode: Mode;
}

export interface FieldTask extends FieldTaskRef {
  state: string;
  lga: string;
  agentId: string | null;
  createdAt: Date;
  assignedAt: Date | null;
  /** The operator's note on a visit sent back for another try; null otherwise. */
  reviewNote: string | null;
}

/** The agent's details checked and normalized (E.164 phone, canonical states); throws AgentInputError. */
export function checkAgent(input: NewAgent): NewAgent {
  const name = input.name.trim();
  if (name === '') throw new AgentInputError('--name must not be empty');
  const email = input.email.trim();
  if (!EMAIL.test(email)) throw new AgentInputError(`--email "${input.email}" is not an email address`);
  const phone = normalizePhone(input.phone);
  if (!phone) throw new AgentInputError(`--phone "${input.phone}" is not a valid Nigerian phone number`);
  return { name, email, phone, ...checkCoverage(input.states, input.lgas ?? []) };
}

/**
 * States and LGAs checked against the 36 states + FCT and their 774 LGAs, canonical, sorted,
 * without repeats; an LGA adds its state. Throws AgentInputError naming the bad entry.
 */
export function checkCoverage(rawStates: readonly string[], rawLgas: readonly string[]): Coverage {
  const states = new Set<string>();
  for (const raw of rawStates) {
    if (raw.trim() === '') continue;
    const state = resolveState(raw);
    if (!state) throw new AgentInputError(`--states: "${raw.trim()}" is not a Nigerian state (or FCT)`);
    states.add(state);
  }
  const lgas = new Set<string>();
  for (const raw of rawLgas) {
    if (raw.trim() === '') continue;
    const slash = raw.indexOf('/');
    if (slash < 0) throw new AgentInputError(`--lgas: "${raw.trim()}" must be "State/LGA", e.g. "Lagos/Eti-Osa"`);
    const state = resolveState(raw.slice(0, slash).trim());
    if (!state) throw new AgentInputError(`--lgas: "${raw.slice(0, slash).trim()}" is not a Nigerian state (or FCT)`);
    const lga = resolveLga(state, raw.slice(slash + 1).trim());
    if (!lga) throw new AgentInputError(`--lgas: "${raw.slice(slash + 1).trim()}" is not a local government area of ${state}`);
    states.add(state);
    lgas.add(`${state}/${lga}`);
  }
  if (states.size === 0) throw new AgentInputError('--states must name at least one state, e.g. "Lagos,Ogun"');
  const byName = (a: string, b: string) => a.localeCompare(b);
  return { states: [...states].sort(byName), lgas: [...lgas].sort(byName) };
}

/** Whether an agent with this coverage covers a place (a listed LGA, or a state with no LGA listed). */
export function coversPlace(coverage: Coverage, state: string, lga: string): boolean {
  if (!coverage.states.includes(state)) return false;
  const inState = coverage.lgas.filter((entry) => entry.startsWith(`${state}/`));
  return inState.length === 0 || inState.includes(`${state}/${lga}`);
}

/** An agent's open tasks: assigned, not closed, and not a report waiting for review. */
const openTaskCount = (agentColumn: string) =>
  sql<number>`(select count(*)::int from field_tasks t where t.agent_id = ${sql.ref(agentColumn)} and t.closed_at is null and t.held_at is null)`;

async function view(db: Kysely<DB>, id: string): Promise<AgentView> {
  const [agent] = await listAgents(db, id);
  if (!agent) throw notFound(new AgentInputError(`no agent ${id}`));
  return agent;
}

export async function createAgent(
  db: Kysely<DB>,
  input: NewAgent,
  generate: CredentialGenerator = generateAgentCredential,
): Promise<{ agent: AgentView; credential: string }> {
  const agent = checkAgent(input);
  const credential = generate();
  const id = randomUUID();
  const inserted = await db
    .insertInto('field_agents')
    .values({ id, ...agent, credential_hash: hashCredential(credential), credential_hint: credentialHint(credential) })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) throw new AgentInputError(`an agent with the email ${agent.email} already exists`);
  return { agent: await view(db, id), credential };
}

/** Every agent (or one), with their open task count. */
export async function listAgents(db: Kysely<DB>, onlyId?: string): Promise<AgentView[]> {
  let query = db
    .selectFrom('field_agents as a')
    .select(['a.id', 'a.name', 'a.email', 'a.phone', 'a.states', 'a.lgas', 'a.active', 'a.credential_hint', 'a.created_at'])
    .select(openTaskCount('a.id').as('open_tasks'))
    .orderBy('a.created_at')
    .orderBy('a.id');
  if (onlyId !== undefined) {
    if (!/^[0-9a-f-]{36}$/i.test(onlyId)) return [];
    query = query.where('a.id', '=', onlyId);
  }
  const rows = await query.execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    states: row.states,
    lgas: row.lgas,
    active: row.active,
    openTasks: Number(row.open_tasks),
    credentialHint: row.credential_hint,
    createdAt: row.created_at.toISOString(),
  }));
}

/** Replaces an agent's credential; the old one stops working at once. */
export async function rotateAgentCredential(
  db: Kysely<DB>,
  id: string,
  generate: CredentialGenerator = generateAgentCredential,
): Promise<{ agent: AgentView; credential: string }> {
  await view(db, id);
  const credential = generate();
  await db
    .updateTable('field_agents')
    .set({ credential_hash: hashCredential(credential), credential_hint: credentialHint(credential) })
    .where('id', '=', id)
    .execute();
  return { agent: await view(db, id), credential };
}

/**
 * Deactivates an agent: their credential stops working (and the field app refuses their session)
 * and each open task moves to the least-loaded other agent covering its place, or becomes unassigned.
 */
export async function deactivateAgent(db: Kysely<DB>, id: string, now = new Date()): Promise<AgentView> {
  await db.transaction().execute((trx) => deactivateAgentIn(trx, id, now));
  return view(db, id);
}

/**
 * `deactivateAgent` inside the caller's transaction (the console's, with its audit row); returns
 * the agent as it was and where each open task went. Reports held for review stay in the review
 * queue (the operator decides them).
 */
export async function deactivateAgentIn(
  trx: Transaction<DB>,
  id: string,
  now = new Date(),
): Promise<{ before: AgentView; moved: { kind: FieldTaskKind; verificationId: number; agentId: string | null }[] }> {
  const agent = await view(trx, id);
  const moved: { kind: FieldTaskKind; verificationId: number; agentId: string | null }[] = [];
  // Lock the agent and everyone who may take over its tasks first, in the id order assignment
  // locks agents in: a concurrent create waits here rather than deadlocking with the moves below.
  const taskStates = await trx
    .selectFrom('field_tasks')
    .select('state')
    .distinct()
    .where('agent_id', '=', id)
    .where('closed_at', 'is', null)
    .where('held_at', 'is', null)
    .execute();
  const states = [...new Set([...agent.states, ...taskStates.map((row) => row.state)])];
  await trx
    .selectFrom('field_agents')
    .select('id')
    .where((eb) => eb.or([eb('id', '=', id), eb.and([eb('active', '=', true), sql<boolean>`states && ${states}::text[]`])]))
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
  await trx.updateTable('field_agents').set({ active: false }).where('id', '=', id).execute();
  const open = await trx
    .selectFrom('field_tasks')
    .select(['kind', 'verification_id', 'state', 'lga'])
    .where('agent_id', '=', id)
    .where('closed_at', 'is', null)
    .where('held_at', 'is', null)
    .orderBy('assigned_at')
    .execute();
  for (const task of open) {
    const next = await pickAgent(trx, task.state, task.lga);
    await trx
      .updateTable('field_tasks')
      .set({ agent_id: next, assigned_at: next ? now : null, review_note: null })
      .where('kind', '=', task.kind)
      .where('verification_id', '=', task.verification_id)
      .execute();
    moved.push({ kind: task.kind, verificationId: Number(task.verification_id), agentId: next });
  }
  return { before: agent, moved };
}

/** Replaces the states and LGAs an agent covers (checked by `checkCoverage`); open tasks stay where they are. */
export async function setCoverage(db: Kysely<DB>, id: string, coverage: Coverage): Promise<{ before: AgentView; after: AgentView }> {
  const before = await view(db, id);
  await db.updateTable('field_agents').set({ states: coverage.states, lgas: coverage.lgas }).where('id', '=', id).execute();
  return { before, after: await view(db, id) };
}

/** The agent a credential belongs to; 401 unless it is an active agent's current credential. */
export async function authenticateAgent(db: Kysely<DB>, header: string | undefined): Promise<AgentContext> {
  const credential = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  if (!credential) throw new ApiError('ACCESS_DENIED', 'Send "Authorization: Bearer <agent credential>"');
  if (!CREDENTIAL_FORMAT.test(credential)) throw new ApiError('ACCESS_DENIED', 'Invalid agent credential');
  const agent = await db
    .selectFrom('field_agents')
    .select(['id', 'name'])
    .where('credential_hash', '=', hashCredential(credential))
    .where('active', '=', true)
    .executeTakeFirst();
  if (!agent) throw new ApiError('ACCESS_DENIED', 'Invalid agent credential');
  return { agentId: agent.id, name: agent.name };
}

/**
 * The active agent covering the place with the fewest open tasks (oldest agent on a tie), if any:
 * among those who list its LGA by name, else among those covering its whole state.
 * Run inside a transaction: it first locks every candidate's row, in id order so that
 * transactions with overlapping candidates (agents covering several states) queue instead of
 * deadlocking, then counts. A concurrent assignment to any candidate therefore commits before
 * this count reads, and counts are exact; states with no agent in common never wait on each other.
 * `FOR NO KEY UPDATE` leaves the rows free for foreign-key checks and plain reads (authentication).
 */
async function pickAgent(trx: Transaction<DB>, state: string, lga: string): Promise<string | null> {
  const candidates = await trx
    .selectFrom('field_agents as a')
    .select('a.id')
    .where('a.active', '=', true)
    .where(sql<boolean>`${state} = any(a.states)`)
    .orderBy('a.id')
    .forNoKeyUpdate()
    .execute();
  if (candidates.length === 0) return null;
  const prefix = `${state}/`;
  const listsLga = sql<boolean>`${`${state}/${lga}`} = any(a.lgas)`;
  const wholeState = sql<boolean>`not exists (select 1 from unnest(a.lgas) as l(entry) where left(l.entry, ${prefix.length}) = ${prefix})`;
  // A new statement, so it sees every assignment committed while the locks were awaited.
  const row = await trx
    .selectFrom('field_agents as a')
    .select('a.id')
    .where('a.id', 'in', candidates.map((candidate) => candidate.id))
    .where((eb) => eb.or([listsLga, wholeState]))
    .orderBy(sql`case when ${listsLga} then 0 else 1 end`)
    .orderBy(openTaskCount('a.id'))
    .orderBy('a.created_at')
    .orderBy('a.id')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Opens the task of a new live verification, in its creating transaction, and assigns it to
 * the least-loaded active agent covering the state. The candidates stay locked until that
 * transaction ends, so concurrent creates in a state take turns and spread evenly.
 * Returns the agent's id, or null.
 */
export async function openFieldTask(trx: Transaction<DB>, task: FieldTaskRef & { state: string; lga: string }, now = new Date()): Promise<string | null> {
  const agentId = await pickAgent(trx, task.state, task.lga);
  await trx
    .insertInto('field_tasks')
    .values({
      kind: task.kind,
      verification_id: task.verificationId,
      org_id: task.orgId,
      mode: task.mode,
      state: task.state,
      lga: task.lga,
      agent_id: agentId,
      created_at: now,
      assigned_at: agentId ? now : null,
    })
    .execute();
  return agentId;
}

/** Closes a verification's task (completed or cancelled: `outcome`), in the transition's transaction. */
export async function closeFieldTask(
  db: Kysely<DB>,
  kind: FieldTaskKind,
  verificationId: number,
  outcome: 'verified' | 'not_verified' | 'cancelled',
  now = new Date(),
): Promise<void> {
  await db
    .updateTable('field_tasks')
    .set({ closed_at: now, outcome })
    .where('kind', '=', kind)
    .where('verification_id', '=', verificationId)
    .where('closed_at', 'is', null)
    .execute();
}

/** The columns `toTask` reads. */
export const TASK_COLUMNS = ['kind', 'verification_id', 'org_id', 'mode', 'state', 'lga', 'agent_id', 'created_at', 'assigned_at', 'review_note'] as const;

/** A field_tasks row as a task. */
export function toTask(row: {
  kind: FieldTaskKind;
  verification_id: number;
  org_id: string;
  mode: Mode;
  state: string;
  lga: string;
  agent_id: string | null;
  created_at: Date;
  assigned_at: Date | null;
  review_note: string | null;
}): FieldTask {
  return {
    kind: row.kind,
    verificationId: Number(row.verification_id),
    orgId: row.org_id,
    mode: row.mode,
    state: row.state,
    lga: row.lga,
    agentId: row.agent_id,
    createdAt: row.created_at,
    assignedAt: row.assigned_at,
    reviewNote: row.review_note,
  };
}

/** An agent's open tasks, oldest assignment first (not those whose report waits for review). */
export async function openTasksOf(db: Kysely<DB>, agentId: string): Promise<FieldTask[]> {
  const rows = await db
    .selectFrom('field_tasks')
    .select(TASK_COLUMNS)
    .where('agent_id', '=', agentId)
    .where('closed_at', 'is', null)
    .where('held_at', 'is', null)
    .orderBy('assigned_at')
    .orderBy('verification_id')
    .execute();
  return rows.map(toTask);
}

/** One open task of the agent, or undefined (not theirs, closed, reported and waiting for review, or unknown). */
export async function findOpenTask(db: Kysely<DB>, agentId: string, kind: FieldTaskKind, verificationId: number): Promise<FieldTask | undefined> {
  const row = await db
    .selectFrom('field_tasks')
    .select(TASK_COLUMNS)
    .where('agent_id', '=', agentId)
    .where('kind', '=', kind)
    .where('verification_id', '=', verificationId)
    .where('closed_at', 'is', null)
    .where('held_at', 'is', null)
    .executeTakeFirst();
  return row ? toTask(row) : undefined;
}

/** Open tasks for the operator, oldest first: all, one agent's, or those nobody covers (held reports are in the review queue instead). */
export async function listOpenTasks(db: Kysely<DB>, filter: { agentId?: string | undefined; unassigned?: boolean } = {}, limit = 1000): Promise<FieldTask[]> {
  let query = db.selectFrom('field_tasks').select(TASK_COLUMNS).where('closed_at', 'is', null).where('held_at', 'is', null);
  if (filter.unassigned) query = query.where('agent_id', 'is', null);
  else if (filter.agentId !== undefined) query = query.where('agent_id', '=', filter.agentId);
  const rows = await query.orderBy('created_at').orderBy('verification_id').limit(limit).execute();
  return rows.map(toTask);
}

/**
 * Operator: gives an open task to an agent (any active agent, whatever states they cover). A
 * report waiting for review is not moved this way (the review queue's reassign discards it first).
 */
export async function assignTask(db: Kysely<DB>, kind: FieldTaskKind, verificationId: number, agentId: string, now = new Date()): Promise<FieldTask> {
  const agent = await view(db, agentId);
  if (!agent.active) throw new AgentInputError(`agent ${agentId} is deactivated`);
  const row = await db
    .updateTable('field_tasks')
    .set({ agent_id: agentId, assigned_at: now, review_note: null })
    .where('kind', '=', kind)
    .where('verification_id', '=', verificationId)
    .where('closed_at', 'is', null)
    .where('held_at', 'is', null)
    .returning(TASK_COLUMNS)
    .executeTakeFirst();
  if (!row) throw notFound(new AgentInputError(`no open ${kind} task ${verificationId}`));
  return toTask(row);
}
