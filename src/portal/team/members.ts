import { sql, type Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { audit, type Actor } from '../audit.js';
import { can } from '../roles.js';
import { ROLES, type Role } from '../tables.js';

export interface TeamMember {
  personId: string;
  role: Role;
}

/** Whether a member with `role` may invite someone as, or give someone, `granted`: team.manage, and only an owner grants owner. */
export function mayGrant(role: Role, granted: Role): boolean {
  return can(role, 'team.manage') && (granted !== 'owner' || role === 'owner');
}

/**
 * Every membership of the organization, locked in person_id order. A change to roles or members
 * takes this before anything else, so two at once queue in one order instead of each holding a
 * row the other waits for (PostgreSQL's 40P01 deadlock), and the owner count and the acting
 * member's role read from it stay true until the change commits.
 */
export async function lockTeam(trx: Transaction<DB>, orgId: string): Promise<TeamMember[]> {
  const rows = await trx.selectFrom('memberships').select(['person_id', 'role']).where('org_id', '=', orgId).orderBy('person_id').forUpdate().execute();
  return rows.map((row) => ({ personId: row.person_id, role: row.role }));
}

export function ownerCount(team: TeamMember[]): number {
  return team.filter((member) => member.role === 'owner').length;
}

/**
 * The caller in the locked team: a change that committed while this one waited for the locks may
 * have changed their role, or removed them, since `requireMember` read it.
 */
export function callerIn(team: TeamMember[], personId: string): TeamMember {
  const caller = team.find((member) => member.personId === personId);
  if (!caller) throw new ApiError('NOT_FOUND_ERROR', 'No such organization among yours');
  return caller;
}

/**
 * Whether `personId` is still a member who may grant `granted`, for an invitation being sent or
 * accepted. Their membership is share-locked: a removal or demotion (which locks the team first)
 * waits for the grant's transaction and then revokes what it sent, or the grant sees the change.
 */
export async function stillGrants(trx: Transaction<DB>, orgId: string, personId: string | null, granted: Role): Promise<boolean> {
  if (!personId) return false;
  const row = await trx.selectFrom('memberships').select('role').where('org_id', '=', orgId).where('person_id', '=', personId).forShare().executeTakeFirst();
  return row !== undefined && mayGrant(row.role, granted);
}

/** Why an inviter's invitations were revoked: the change to them, as audited. */
export type RevocationReason = 'member.removed' | 'member.left' | 'member.role_changed';

/**
 * Revokes the open invitations `inviterId` sent that they can no longer grant: all of them when
 * they are no longer a member (`role` undefined), those above what `role` grants otherwise. An
 * invitation is worth no more than its sender's standing. Call it in the change's transaction.
 */
export async function revokeInvitationsOf(
  trx: Transaction<DB>,
  change: { orgId: string; inviterId: string; role: Role | undefined; actor: Actor; reason: RevocationReason },
): Promise<void> {
  const { orgId, role } = change;
  const lost = ROLES.filter((granted) => role === undefined || !mayGrant(role, granted));
  if (lost.length === 0) return;
  const revoked = await trx
    .updateTable('invitations')
    .set({ revoked_at: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where('invited_by', '=', change.inviterId)
    .where('role', 'in', lost)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['email', 'role'])
    .execute();
  for (const row of revoked) {
    await audit(trx, { orgId, actor: change.actor, action: 'invitation.revoked', target: row.email, before: { role: row.role }, after: { reason: change.reason } });
  }
}

/** The one answer for a link that does not lead in, whatever the reason. */
export function invalidInvitation(): ApiError {
  return new ApiError('NOT_FOUND_ERROR', 'This invitation is invalid, already used, revoked or expired: ask for a new one');
}
