import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { inviteAgentAccount } from '../../src/agents/accounts.js';
import { createAgent } from '../../src/agents/service.js';
import type { DB } from '../../src/platform/db/schema.js';
import { SESSION_COOKIE } from '../../src/portal/sessions.js';
import { ORIGIN, portal, type PortalUser } from './portal.js';

export interface FieldAgentUser extends PortalUser {
  agentId: string;
  /** The agent API's bearer credential (ak_...). */
  credential: string;
}

let counter = 0;

/**
 * A field agent as the console makes one: the agent, an invitation link (inviteAgentAccount) whose
 * set-password page they use, and a session from signing in through the portal API.
 */
export async function fieldAgentUser(
  app: FastifyInstance,
  db: Kysely<DB>,
  input: { name: string; states: string[] },
  { origin = ORIGIN } = {},
): Promise<FieldAgentUser> {
  const email = `agent-${++counter}-${Date.now()}@agents.example`;
  const created = await createAgent(db, { name: input.name, email, phone: '08031230000', states: input.states });
  const invitation = await db.transaction().execute((trx) => inviteAgentAccount(trx, created.agent.id, origin));
  const token = new URL(invitation.signInLink).searchParams.get('token')!;
  const password = 'field agent password';
  const headers = { origin };
  const reset = await portal(app, undefined, { method: 'POST', url: '/api/auth/reset-password', headers, payload: { token, password } });
  if (reset.statusCode !== 200) throw new Error(`reset-password answered ${reset.statusCode}: ${reset.body}`);
  const signIn = await portal(app, undefined, { method: 'POST', url: '/api/auth/sign-in', headers, payload: { email, password } });
  const cookie = signIn.cookies.find((c) => c.name === SESSION_COOKIE);
  if (!cookie) throw new Error(`sign-in answered ${signIn.statusCode}: ${signIn.body}`);
  return { agentId: created.agent.id, credential: created.credential, personId: invitation.personId, email, password, cookie: `${SESSION_COOKIE}=${cookie.value}` };
}
