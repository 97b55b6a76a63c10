import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { isUuid } from '../../accounts/service.js';
import { ApiError } from '../../platform/errors.js';
import { checkName } from '../../platform/input.js';
import { takeMailAllowance } from '../../respondents/mail-cap.js';
import { audit } from '../audit.js';
import { checkPassword } from '../auth/service.js';
import { perIpLimit } from '../auth/throttle.js';
import { requireMember, requireSession, sessionOf } from '../guard.js';
import { insertPerson, normaliseEmail } from '../people.js';
import type { AreaOptions } from '../plugin.js';
import { can } from '../roles.js';
import { Done, Nullable, OrgParams, PORTAL_TAG, portalErrors, Role, sessionSecurity } from '../schemas.js';
import { createSession, hashToken, newToken, SESSION_COOKIE, sessionCookie } from '../sessions.js';
import type { Role as RoleName } from '../tables.js';
import { callerIn, invalidInvitation, lockTeam, mayGrant, ownerCount, revokeInvitationsOf, stillGrants } from './members.js';

const tags = [PORTAL_TAG];
const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const Member = Type.Object({ personId: Type.String(), name: Type.String(), email: Type.String(), role: Role, joinedAt: Type.String({ format: 'date-time' }), you: Type.Boolean() });
const Invitation = Type.Object({ id: Type.String(), email: Type.String(), role: Role, createdAt: Type.String({ format: 'date-time' }), expiresAt: Type.String({ format: 'date-time' }) });
const MemberParams = Type.Object({ orgId: Type.String(), personId: Type.String({ maxLength: 64 }) });

/** The organization's members and invitations; owners and admins manage them, only owners touch owners. */
export async function teamRoutes(parent: FastifyInstance, { db, config, mail }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  // Guards run as preValidation: who may call is answered before the body is judged, and a
  // malformed attempt counts towards the per-IP limit like any other.
  const signedIn = requireSession(db);

  app.get(
    '/orgs/:orgId/members',
    {
      preValidation: [signedIn, requireMember(db, 'team.read')],
      schema: { tags, operationId: 'portalListMembers', summary: "The organization's members", security: sessionSecurity, params: OrgParams, response: { 200: Type.Object({ data: Type.Array(Member) }), ...portalErrors(401, 404) } },
    },
    async (request) => {
      const rows = await db
        .selectFrom('memberships as m')
        .innerJoin('people as p', 'p.id', 'm.person_id')
        .select(['p.id', 'p.name', 'p.email', 'm.role', 'm.created_at'])
        .where('m.org_id', '=', request.member.orgId)
        .orderBy('m.created_at')
        .orderBy('p.id')
        .execute();
      return { data: rows.map((r) => ({ personId: r.id, name: r.name, email: r.email, role: r.role, joinedAt: r.created_at.toISOString(), you: r.id === request.portal.person.id })) };
    },
  );

  app.get(
    '/orgs/:orgId/invitations',
    {
      preValidation: [signedIn, requireMember(db, 'team.read')],
      schema: { tags, operationId: 'portalListInvitations', summary: 'Invitations not yet accepted', security: sessionSecurity, params: OrgParams, response: { 200: Type.Object({ data: Type.Array(Invitation) }), ...portalErrors(401, 404) } },
    },
    async (request) => {
      const rows = await db
        .selectFrom('invitations')
        .select(['id', 'email', 'role', 'created_at', 'expires_at'])
        .where('org_id', '=', request.member.orgId)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`)
        .orderBy('created_at', 'desc')
        .execute();
      return { data: rows.map((r) => ({ id: r.id, email: r.email, role: r.role, createdAt: r.created_at.toISOString(), expiresAt: r.expires_at.toISOString() })) };
    },
  );

  app.post(
    '/orgs/:orgId/invitations',
    {
      preValidation: [signedIn, requireMember(db, 'team.manage')],
      schema: {
        tags,
        operationId: 'portalInvite',
        summary: 'Invite someone by email with a role; the link in the mail is valid for 7 days',
        description: 'Invitations count towards the live mails to people outside the organization (VOUCH_MAIL_CAP_PER_HOUR): past the cap, 429 with Retry-After and nothing is stored.',
        security: sessionSecurity,
        params: OrgParams,
        body: Type.Object({ email: Type.String({ maxLength: 254 }), role: Role }),
        response: { 201: Invitation, ...portalErrors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { orgId, role: myRole } = request.member;
      const email = normaliseEmail(request.body.email);
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new ApiError('VALIDATION_ERROR', 'email must be an email address, like ada@example.com');
      if (request.body.role === 'owner' && myRole !== 'owner') throw new ApiError('FORBIDDEN', 'Only an owner can invite another owner');
      const existing = await db
        .selectFrom('memberships as m')
        .innerJoin('people as p', 'p.id', 'm.person_id')
        .select('p.id')
        .where('m.org_id', '=', orgId)
        .where('p.email', '=', email)
        .executeTakeFirst();
      if (existing) throw new ApiError('CONFLICT', `${email} is already a member`);
      const token = newToken();
      const id = randomUUID();
      const expiresAt = new Date(Date.now() + INVITATION_TTL_MS);
      const org = await db.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirstOrThrow();
      let mailId: number;
      try {
        mailId = await db.transaction().execute(async (trx) => {
          // A removal or demotion of the inviter committed since requireMember would revoke nothing
          // sent after it: the grant is checked again under a lock that makes such a change wait.
          if (!(await stillGrants(trx, orgId, request.portal.person.id, request.body.role))) throw new ApiError('FORBIDDEN', 'Your role no longer allows this invitation');
          // An invitation mails someone outside the organization: it counts towards the hourly cap (429 stores nothing).
          await takeMailAllowance(trx, orgId, 'invitation', config.mailCapPerHour, new Date());
          // An expired invitation no longer holds the address's one open slot.
          await trx
            .updateTable('invitations')
            .set({ revoked_at: sql<Date>`now()` })
            .where('org_id', '=', orgId)
            .where('email', '=', email)
            .where('accepted_at', 'is', null)
            .where('revoked_at', 'is', null)
            .where('expires_at', '<=', sql<Date>`now()`)
            .execute();
          await trx.insertInto('invitations').values({ id, org_id: orgId, email, role: request.body.role, token_hash: hashToken(token), invited_by: request.portal.person.id, expires_at: expiresAt }).execute();
          await audit(trx, { orgId, actor: { kind: 'member', personId: request.portal.person.id }, action: 'member.invited', target: email, after: { role: request.body.role } });
          return mail.queue(trx, {
            kind: 'invitation',
            expiresAt,
            to: email,
            subject: `${request.portal.person.name} invited you to ${org.name} on Vouch`,
            text: `Hello,\n\n${request.portal.person.name} invited you to join ${org.name} on Vouch as ${request.body.role}.\n\nAccept within 7 days:\n\n${config.publicUrl}/invitations/accept?token=${token}\n`,
          });
        });
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw new ApiError('CONFLICT', `${email} already has an open invitation: revoke it to send a new one`);
        throw err;
      }
      void mail.dispatch(mailId);
      return reply.status(201).send({ id, email, role: request.body.role, createdAt: new Date().toISOString(), expiresAt: expiresAt.toISOString() });
    },
  );

  app.delete(
    '/orgs/:orgId/invitations/:invitationId',
    {
      preValidation: [signedIn, requireMember(db, 'team.manage')],
      schema: {
        tags,
        operationId: 'portalRevokeInvitation',
        summary: 'Revoke an invitation; its link stops working',
        security: sessionSecurity,
        params: Type.Object({ orgId: Type.String(), invitationId: Type.String({ maxLength: 64 }) }),
        response: { 200: Done, ...portalErrors(401, 403, 404) },
      },
    },
    async (request) => {
      const { invitationId } = request.params;
      const { orgId } = request.member;
      const revoked = isUuid(invitationId)
        ? await db.transaction().execute(async (trx) => {
            const row = await trx
              .updateTable('invitations')
              .set({ revoked_at: sql<Date>`now()` })
              .where('id', '=', invitationId)
              .where('org_id', '=', orgId)
              .where('accepted_at', 'is', null)
              .where('revoked_at', 'is', null)
              .returning(['email', 'role'])
              .executeTakeFirst();
            if (row) await audit(trx, { orgId, actor: { kind: 'member', personId: request.portal.person.id }, action: 'invitation.revoked', target: row.email, before: { role: row.role } });
            return row;
          })
        : undefined;
      if (!revoked) throw new ApiError('NOT_FOUND_ERROR', 'No open invitation with this id');
      return { ok: true as const };
    },
  );

  app.patch(
    '/orgs/:orgId/members/:personId',
    {
      preValidation: [signedIn, requireMember(db, 'team.manage')],
      schema: {
        tags,
        operationId: 'portalChangeRole',
        summary: "Change a member's role (only owners grant or take the owner role; the last owner stays)",
        security: sessionSecurity,
        params: MemberParams,
        body: Type.Object({ role: Role }),
        response: { 200: Done, ...portalErrors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const { orgId } = request.member;
      const next: RoleName = request.body.role;
      const personId = request.params.personId.toLowerCase();
      const actor = { kind: 'member' as const, personId: request.portal.person.id };
      await db.transaction().execute(async (trx) => {
        const team = await lockTeam(trx, orgId);
        const me = callerIn(team, actor.personId);
        if (!can(me.role, 'team.manage')) throw new ApiError('FORBIDDEN', `Your role (${me.role}) does not allow this; ask an owner or admin of the organization`);
        const target = team.find((member) => member.personId === personId);
        if (!target) throw new ApiError('NOT_FOUND_ERROR', 'No such member');
        if ((target.role === 'owner' || next === 'owner') && me.role !== 'owner') throw new ApiError('FORBIDDEN', 'Only an owner can grant or take the owner role');
        if (target.role === 'owner' && next !== 'owner' && ownerCount(team) === 1) {
          throw new ApiError('CONFLICT', 'The organization needs an owner: make someone else owner first');
        }
        await trx.updateTable('memberships').set({ role: next }).where('org_id', '=', orgId).where('person_id', '=', personId).execute();
        await audit(trx, { orgId, actor, action: 'member.role_changed', target: personId, before: { role: target.role }, after: { role: next } });
        await revokeInvitationsOf(trx, { orgId, inviterId: personId, role: next, actor, reason: 'member.role_changed' });
      });
      return { ok: true as const };
    },
  );

  app.delete(
    '/orgs/:orgId/members/:personId',
    {
      // Anyone may leave; removing someone else needs team.manage (checked below).
      preValidation: [signedIn, requireMember(db, 'team.read')],
      schema: {
        tags,
        operationId: 'portalRemoveMember',
        summary: 'Remove a member (or leave); their access to the organization ends at once',
        security: sessionSecurity,
        params: MemberParams,
        response: { 200: Done, ...portalErrors(401, 403, 404, 409) },
      },
    },
    async (request) => {
      const { orgId } = request.member;
      const personId = request.params.personId.toLowerCase();
      const actor = { kind: 'member' as const, personId: request.portal.person.id };
      const self = personId === actor.personId;
      await db.transaction().execute(async (trx) => {
        const team = await lockTeam(trx, orgId);
        const me = callerIn(team, actor.personId);
        if (!self && !can(me.role, 'team.manage')) throw new ApiError('FORBIDDEN', `Your role (${me.role}) does not allow removing members`);
        const target = team.find((member) => member.personId === personId);
        if (!target) throw new ApiError('NOT_FOUND_ERROR', 'No such member');
        if (target.role === 'owner' && !self && me.role !== 'owner') throw new ApiError('FORBIDDEN', 'Only an owner can remove an owner');
        if (target.role === 'owner' && ownerCount(team) === 1) throw new ApiError('CONFLICT', 'The organization needs an owner: make someone else owner first');
        await trx.deleteFrom('memberships').where('org_id', '=', orgId).where('person_id', '=', personId).execute();
        const reason = self ? 'member.left' : 'member.removed';
        await audit(trx, { orgId, actor, action: reason, target: personId, before: { role: target.role } });
        await revokeInvitationsOf(trx, { orgId, inviterId: personId, role: undefined, actor, reason });
      });
      return { ok: true as const };
    },
  );

  // Accepting an invitation: public, since the invited person may have no account yet.
  const InvitationToken = Type.Object({ token: Type.String({ maxLength: 100 }) });

  /**
   * An open invitation whose inviter is still a member who may grant its role (as when inviting):
   * one sent by someone since removed, gone or demoted leads nowhere, with the same answer as a
   * revoked one, should a change have left it open.
   */
  async function openInvitation(token: string) {
    const row = await db
      .selectFrom('invitations as i')
      .innerJoin('organizations as o', 'o.id', 'i.org_id')
      .leftJoin('memberships as m', (join) => join.onRef('m.org_id', '=', 'i.org_id').onRef('m.person_id', '=', 'i.invited_by'))
      .select(['i.id', 'i.org_id', 'i.email', 'i.role', 'i.invited_by', 'o.name', 'm.role as inviter_role'])
      .where('i.token_hash', '=', hashToken(token))
      .where('i.accepted_at', 'is', null)
      .where('i.revoked_at', 'is', null)
      .where('i.expires_at', '>', sql<Date>`now()`)
      .executeTakeFirst();
    if (!row?.inviter_role || !mayGrant(row.inviter_role, row.role)) throw invalidInvitation();
    return row;
  }

  const throttled = perIpLimit(db);

  app.get(
    '/invitations/:token',
    {
      preValidation: throttled,
      schema: {
        tags,
        operationId: 'portalGetInvitation',
        summary: 'What an invitation link offers',
        params: InvitationToken,
        response: { 200: Type.Object({ orgName: Type.String(), email: Type.String(), role: Role, hasAccount: Type.Boolean() }), ...portalErrors(404, 429) },
      },
    },
    async (request) => {
      const invitation = await openInvitation(request.params.token);
      const person = await db.selectFrom('people').select('id').where('email', '=', invitation.email).executeTakeFirst();
      return { orgName: invitation.name, email: invitation.email, role: invitation.role, hasAccount: person !== undefined };
    },
  );

  app.post(
    '/invitations/accept',
    {
      preValidation: throttled,
      schema: {
        tags,
        operationId: 'portalAcceptInvitation',
        summary: 'Join the organization: a new account (name and password) or, signed in as the invited email, the existing one',
        body: Type.Object({ token: Type.String({ maxLength: 100 }), name: Type.Optional(Type.String({ maxLength: 120 })), password: Type.Optional(Type.String({ maxLength: 200 })) }),
        response: { 200: Type.Object({ orgId: Type.String() }), ...portalErrors(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const invitation = await openInvitation(request.body.token);
      const person = await db.selectFrom('people').select('id').where('email', '=', invitation.email).executeTakeFirst();
      let personId: string;
      if (person) {
        const session = await sessionOf(db, request);
        if (!session || session.pendingTotp) throw new ApiError('ACCESS_DENIED', `Sign in as ${invitation.email} to accept this invitation`);
        if (session.person.id !== person.id) throw new ApiError('FORBIDDEN', `This invitation is for ${invitation.email}: sign in with that account`);
        personId = person.id;
      } else {
        const name = request.body.name?.trim();
        if (!name) throw new ApiError('VALIDATION_ERROR', 'name is required to create your account');
        checkName(name, 'name');
        checkPassword(request.body.password ?? '', invitation.email);
        personId = '';
      }
      await db.transaction().execute(async (trx) => {
        // The inviter's membership first, as a removal or demotion locks it before the invitations.
        if (!(await stillGrants(trx, invitation.org_id, invitation.invited_by, invitation.role))) throw invalidInvitation();
        const claimed = await trx
          .updateTable('invitations')
          .set({ accepted_at: sql<Date>`now()` })
          .where('id', '=', invitation.id)
          .where('accepted_at', 'is', null)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (claimed.numUpdatedRows === 0n) throw invalidInvitation();
        // The mailbox received the link: a new account's address counts as verified.
        if (!personId) personId = await insertPerson(trx, { email: invitation.email, name: request.body.name!.trim(), password: request.body.password!, verified: true });
        await trx.insertInto('memberships').values({ org_id: invitation.org_id, person_id: personId, role: invitation.role }).onConflict((oc) => oc.columns(['org_id', 'person_id']).doNothing()).execute();
        await audit(trx, { orgId: invitation.org_id, actor: { kind: 'member', personId }, action: 'member.joined', target: invitation.email, after: { role: invitation.role } });
      });
      if (!person) {
        const session = await createSession(db, { personId, userAgent: request.headers['user-agent'], ip: request.ip });
        reply.setCookie(SESSION_COOKIE, session.token, sessionCookie(config.publicUrl));
      }
      return { orgId: invitation.org_id };
    },
  );
}
