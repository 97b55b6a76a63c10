import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { insertPerson, normaliseEmail } from '../portal/people.js';
import { hashToken, newToken, revokeOtherSessions } from '../portal/sessions.js';
import { AgentInputError } from './service.js';
import { notFound } from '../platform/not-found.js';

/** How long an agent's invitation link (which sets their password) stays good. */
export const AGENT_LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface AgentInvitation {
  personId: string;
  email: string;
  name: string;
  /** Opens the set-password page, once, before `linkExpiresAt`; then /field. */
  signInLink: string;
  linkExpiresAt: Date;
}

/** The agent a signed-in person is, if any (active or not: callers decide what a deactivated agent may do). */
export interface AgentAccount {
  agentId: string;
  name: string;
  active: boolean;
  states: string[];
}

/**
 * Gives a field agent a person account to sign in to the field app with, or a new link for the
 * one they have (a lost or expired invitation). The account has no usable password until the
 * link sets one. An address that already belongs to someone else's account (a customer's, an
 * operator's) is refused: an agent's account is theirs alone. Run inside the caller's
 * transaction, with the audit row and the mail that carries the link.
 */
export async function inviteAgentAccount(trx: Transaction<DB> | Kysely<DB>, agentId: string, publicUrl: string, now = new Date()): Promise<AgentInvitation> {
  const agent = await trx.selectFrom('field_agents').select(['id', 'name', 'email', 'active', 'person_id']).where('id', '=', agentId).forUpdate().executeTakeFirst();
  if (!agent) throw notFound(new AgentInputError(`no agent ${agentId}`));
  if (!agent.active) throw new AgentInputError(`${agent.name} is deactivated: an invitation would let them in`);
  const email = normaliseEmail(agent.email);
  let personId = agent.person_id;
  if (!personId) {
    const existing = await trx.selectFrom('people').select('id').where('email', '=', email).executeTakeFirst();
    if (existing) throw new AgentInputError(`${email} already has an account that is not this agent's; give the agent an address of their own`);
    // A password nobody knows: the link sets the real one.
    personId = await insertPerson(trx, { email, name: agent.name, password: randomBytes(32).toString('base64url'), verified: true });
    await trx.updateTable('field_agents').set({ person_id: personId }).where('id', '=', agentId).execute();
  }
  // Earlier links stop working: only the newest invitation opens the account.
  await trx.updateTable('person_tokens').set({ used_at: now }).where('person_id', '=', personId).where('purpose', '=', 'reset_password').where('used_at', 'is', null).execute();
  const token = newToken();
  const linkExpiresAt = new Date(now.getTime() + AGENT_LINK_TTL_MS);
  await trx.insertInto('person_tokens').values({ token_hash: hashToken(token), person_id: personId, purpose: 'reset_password', expires_at: linkExpiresAt }).execute();
  const signInLink = `${publicUrl.replace(/\/+$/, '')}/reset-password?token=${token}&next=%2Ffield`;
  return { personId, email, name: agent.name, signInLink, linkExpiresAt };
}

/** The field agent a person is, or undefined for everyone else (customers, operators). */
export async function agentOfPerson(db: Kysely<DB> | Transaction<DB>, personId: string): Promise<AgentAccount | undefined> {
  const row = await db.selectFrom('field_agents').select(['id', 'name', 'active', 'states']).where('person_id', '=', personId).executeTakeFirst();
  return row && { agentId: row.id, name: row.name, active: row.active, states: row.states };
}

/**
 * Ends a (deactivated) agent's way into the field app, inside the caller's transaction: every
 * session of their account at once, and any invitation link not used yet.
 */
export async function closeAgentAccount(trx: Transaction<DB>, agentId: string, now = new Date()): Promise<void> {
  const row = await trx.selectFrom('field_agents').select('person_id').where('id', '=', agentId).executeTakeFirst();
  if (!row?.person_id) return;
  await revokeOtherSessions(trx, row.person_id);
  await trx.updateTable('person_tokens').set({ used_at: now }).where('person_id', '=', row.person_id).where('used_at', 'is', null).execute();
}
