import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { isUuid } from '../accounts/service.js';
import type { DB, Mode } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { can, type Permission } from './roles.js';
import { loadSession, loadSessionIn, SESSION_COOKIE, type LoadedSession } from './sessions.js';
import type { Role } from './tables.js';

export interface MemberContext {
  orgId: string;
  role: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person of a portal request (set by `requireSession`). */
    portal: LoadedSession;
    /** The caller's membership in the `:orgId` of the path (set by `requireMember`). */
    member: MemberContext;
  }
}

/** The session of the request's cookie, even one that still owes its TOTP code; undefined when none. */
export async function sessionOf(db: Kysely<DB>, request: FastifyRequest): Promise<LoadedSession | undefined> {
  const token = request.cookies[SESSION_COOKIE];
  return token ? loadSession(db, token) : undefined;
}

/** A preHandler: a signed-in person (password and, when enabled, TOTP) or 401. */
export function requireSession(db: Kysely<DB>) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const session = await sessionOf(db, request);
    if (!session) throw new ApiError('ACCESS_DENIED', 'Sign in to continue: your session has ended or was never started');
    if (session.pendingTotp) throw new ApiError('ACCESS_DENIED', 'Enter the code from your authenticator app to finish signing in');
    request.portal = session;
  };
}

/**
 * A preHandler for `/api/orgs/:orgId/...`: the person must be a member of that organization
 * (404 otherwise, the same answer as for an organization that does not exist) and their role must
 * allow `permission` (403). Membership is read on every request, so a removed member is out at once.
 */
export function requireMember(db: Kysely<DB>, permission: Permission) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const orgId = (request.params as { orgId?: string }).orgId ?? '';
    const notFound = new ApiError('NOT_FOUND_ERROR', 'No such organization among yours');
    if (!isUuid(orgId)) throw notFound;
    const row = await db
      .selectFrom('memberships')
      .select('role')
      .where('org_id', '=', orgId)
      .where('person_id', '=', request.portal.person.id)
      .executeTakeFirst();
    if (!row) throw notFound;
    if (!can(row.role, permission)) {
      throw new ApiError('FORBIDDEN', `Your role (${row.role}) does not allow this; ask an owner or admin of the organization`);
    }
    request.member = { orgId, role: row.role };
  };
}

/**
 * `requireSession` and `requireMember(permission)` as one preHandler and one query (the session
 * joined with the membership of the path's organization), with the same answers in the same
 * order: 401 without a finished sign-in, 404 when not a member, 403 when the role does not allow
 * it. For the lists the portal reads on every page.
 */
export function requireMemberSession(db: Kysely<DB>, permission: Permission) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const orgId = (request.params as { orgId?: string }).orgId ?? '';
    const token = request.cookies[SESSION_COOKIE];
    const loaded = token ? await loadSessionIn(db, token, isUuid(orgId) ? orgId : undefined) : undefined;
    if (!loaded) throw new ApiError('ACCESS_DENIED', 'Sign in to continue: your session has ended or was never started');
    if (loaded.session.pendingTotp) throw new ApiError('ACCESS_DENIED', 'Enter the code from your authenticator app to finish signing in');
    request.portal = loaded.session;
    const role = loaded.role;
    if (!isUuid(orgId) || !role) throw new ApiError('NOT_FOUND_ERROR', 'No such organization among yours');
    if (!can(role, permission)) {
      throw new ApiError('FORBIDDEN', `Your role (${role}) does not allow this; ask an owner or admin of the organization`);
    }
    request.member = { orgId, role };
  };
}

/** The `mode` query parameter of mode-scoped portal routes: `test` unless it says `live`. */
export function modeOf(query: unknown): Mode {
  const mode = (query as { mode?: string } | undefined)?.mode;
  if (mode === undefined || mode === 'test') return 'test';
  if (mode === 'live') return 'live';
  throw new ApiError('VALIDATION_ERROR', 'mode must be test or live');
}
