import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { requireMember, requireSession } from '../portal/guard.js';
import { OrgParams, PORTAL_TAG, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { organizationScreening, setOrganizationScreening } from './organization-setting.js';

const ScreeningSetting = Type.Object({
  sessions: Type.Boolean({ description: 'Screen the person of every verification session (unless the session asks checks.screening: false)' }),
  lookups: Type.Boolean({ description: 'Screen the person or company of every identity lookup that finds one' }),
  businesses: Type.Boolean({ description: 'Screen the company of every business verification when it is created' }),
});

const ScreeningSettingBody = Type.Object(
  {
    sessions: Type.Boolean({ description: 'Screen the person of every verification session' }),
    lookups: Type.Boolean({ description: 'Screen the person or company of every identity lookup' }),
    businesses: Type.Optional(Type.Boolean({ description: 'Screen the company of every business verification when it is created; left out: unchanged' })),
  },
  { additionalProperties: false },
);

/**
 * Changing what is screened changes what the organization is charged for and what it tells the
 * NFIU, so only owners and admins may; the roles table has no permission of that name, so the
 * role is checked here, after `requireMember` placed the caller in the organization.
 */
async function ownersAndAdmins(request: FastifyRequest): Promise<void> {
  const { role } = request.member;
  if (role !== 'owner' && role !== 'admin') {
    throw new ApiError('FORBIDDEN', `Your role (${role}) does not allow this; ask an owner or admin of the organization`);
  }
}

/**
 * The organization's standing request for screening (docs/screening.md, "Screening inside
 * sessions and lookups"): every member reads it; owners and admins change it, audited as
 * organization.screening_changed. The CSRF defence (Origin and a JSON body) is the portal API's own.
 */
export async function screeningSettingRoutes(parent: FastifyInstance, { db }: { db: Kysely<DB> }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = [PORTAL_TAG];

  app.get(
    '/orgs/:orgId/screening-setting',
    {
      preValidation: [requireSession(db), requireMember(db, 'org.read')],
      schema: {
        tags,
        operationId: 'portalGetScreeningSetting',
        summary: "Whether the organization's verification sessions, identity lookups and business verifications screen their person or company",
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: ScreeningSetting, ...portalErrors(401, 404) },
      },
    },
    async (request) => organizationScreening(db, request.member.orgId),
  );

  app.put(
    '/orgs/:orgId/screening-setting',
    {
      preValidation: [requireSession(db), requireMember(db, 'org.read'), ownersAndAdmins],
      schema: {
        tags,
        operationId: 'portalSetScreeningSetting',
        summary: 'Turn screening of every verification session, identity lookup and business verification on or off (owners and admins)',
        description: '`sessions` and `lookups` are sent; `businesses` left out stays as it is. Read at each new session, lookup and business verification: no restart. Audited with the setting before and after.',
        security: sessionSecurity,
        params: OrgParams,
        body: ScreeningSettingBody,
        response: { 200: ScreeningSetting, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const person = request.portal.person;
      return setOrganizationScreening(db, request.member.orgId, request.body, { kind: 'member', personId: person.id });
    },
  );
}
