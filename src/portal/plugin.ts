import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { consoleAccessLogRoutes } from '../access-log/routes.js';
import type { Config } from '../config.js';
import { agentOfPerson } from '../agents/accounts.js';
import type { FieldTaskSource } from '../agents/tasks.js';
import type { FileStore } from '../files/store.js';
import type { FileUrls } from '../files/urls.js';
import type { GuarantorService } from '../guarantors/service.js';
import type { IdentityLookups } from '../identities/lookups.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { requestOrigin } from '../platform/request-origin.js';
import { routedPath } from '../platform/routed-path.js';
import type { Respondents } from '../respondents/service.js';
import { consoleAgentRoutes } from '../console/agent-routes.js';
import { consoleRetentionRoutes } from '../privacy/routes.js';
import { consoleAuditRoutes } from '../console/audit-routes.js';
import { consoleDeliveryRoutes } from '../console/delivery-routes.js';
import { consoleFundingRoutes } from '../console/funding-routes.js';
import { consoleOrganizationRoutes } from '../console/organization-routes.js';
import { consoleRoutes } from '../console/routes.js';
import { consoleSessionRoutes } from '../console/session-routes.js';
import { fieldRoutes } from '../field/routes.js';
import { accessRoutes } from './access/routes.js';
import { authRoutes } from './auth/routes.js';
import { billingRoutes } from './billing/routes.js';
import { brandingRoutes } from './branding/routes.js';
import { requireSession, sessionOf } from './guard.js';
import { keyRoutes } from './keys/routes.js';
import { linkRoutes } from './links/routes.js';
import { PeopleMail } from './mail.js';
import { permissionsOf } from './roles.js';
import { sandboxRoutes } from './sandbox/routes.js';
import { screeningPortalRoutes } from '../screening/portal.js';
import { screeningMonitoredRoutes } from '../screening/monitored-routes.js';
import { screeningSettingRoutes } from '../screening/setting-routes.js';
import { consoleScreeningRoutes } from '../console/screening-routes.js';
import { PORTAL_TAG, portalErrors, Role, sessionSecurity } from './schemas.js';
import { teamRoutes } from './team/routes.js';
import { verificationRoutes } from './verifications/routes.js';
import { webhookRoutes } from './webhooks/routes.js';

export interface PortalOptions {
  db: Kysely<DB>;
  config: Config;
  urls: FileUrls;
  lookups: IdentityLookups;
  respondents: Respondents;
  guarantors: GuarantorService;
  /** Where visit photos live (the console deletes a sent-back report's photos). */
  store: FileStore;
  /** Address and business verifications as field tasks (the console's review queue completes them). */
  fieldSources: readonly FieldTaskSource[];
}

/** What each area's routes plugin gets: the options plus the one mailer to people of the app. */
export interface AreaOptions extends PortalOptions {
  mail: PeopleMail;
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The one /api route that takes files (its pattern): the field app's visit report, multipart. Its
 * Origin is checked like every other; a cross-site form cannot send the Idempotency-Key header it
 * requires, and the session cookie is SameSite=Lax, which no cross-site POST carries.
 */
const MULTIPART_ROUTE = '/api/field/tasks/:kind/:id/report';

/**
 * CSRF defence of the cookie-authenticated API: a state-changing call's Origin must be this
 * server's own, and a body must be JSON (a form post from another site cannot send that content
 * type without a CORS preflight, which we never allow). A hook of the whole app (see app.ts), so that even a
 * path with no route answers 403 before 404 and learns nothing. Decided on the routed path: the
 * router decodes `/%61pi/...` to the same routes as `/api/...`.
 */
export function checkOrigin(config: Config) {
  const publicOrigin = new URL(config.publicUrl).origin;
  return async (request: FastifyRequest): Promise<void> => {
    if (!UNSAFE_METHODS.has(request.method)) return;
    const path = routedPath(request);
    if (!path.startsWith('/api/')) return;
    const origin = request.headers.origin;
    // Compared whole (scheme, host and port), with PUBLIC_URL's origin or the one this server is reached at.
    if (!origin || (origin !== publicOrigin && origin !== requestOrigin(request))) {
      throw new ApiError('FORBIDDEN', 'This request must come from the Vouch web app (its Origin header is missing or foreign)');
    }
    const type = request.headers['content-type'] ?? '';
    const hasBody = request.headers['content-length'] !== undefined ? request.headers['content-length'] !== '0' : request.headers['transfer-encoding'] !== undefined;
    const upload = path === MULTIPART_ROUTE && /^multipart\/form-data\b/i.test(type);
    if (hasBody && !/^application\/json\b/i.test(type) && !upload) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send a JSON body with content-type: application/json');
    }
  };
}

/** The web app's JSON API under `/api`: session cookies, never API secrets; errors in style A. */
export async function portalApi(parent: FastifyInstance, options: PortalOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  await app.register(cookie);

  app.get(
    '/session',
    {
      schema: {
        tags: [PORTAL_TAG],
        summary: 'Whether the request carries a signed-in session: 200 either way',
        description:
          "The web app's first question on load. Signed out is an answer, not a failure: a 401 here would be logged as an error in the browser's console on every signed-out visit. Ask /api/me for the person once signedIn is true.",
        operationId: 'portalSession',
        response: {
          200: Type.Object({ signedIn: Type.Boolean({ description: 'A session that finished signing in (password and, when enabled, the authenticator code)' }) }),
          // The portal API's per-address limit covers this route like every other under /api.
          ...portalErrors(429),
        },
      },
    },
    async (request) => {
      const session = await sessionOf(options.db, request);
      return { signedIn: session !== undefined && !session.pendingTotp };
    },
  );

  app.get(
    '/me',
    {
      preHandler: requireSession(options.db),
      schema: {
        tags: [PORTAL_TAG],
        summary: 'The signed-in person and the organizations they belong to',
        operationId: 'portalMe',
        security: sessionSecurity,
        response: {
          200: Type.Object({
            person: Type.Object({
              id: Type.String(),
              email: Type.String(),
              name: Type.String(),
              emailVerified: Type.Boolean(),
              totpEnabled: Type.Boolean(),
              operator: Type.Boolean(),
              fieldAgent: Type.Boolean({ description: 'An active field agent: their app is /field' }),
            }),
            memberships: Type.Array(
              Type.Object({
                orgId: Type.String(),
                orgName: Type.String(),
                role: Role,
                enabled: Type.Boolean(),
                permissions: Type.Array(Type.String()),
                consentRequired: Type.Boolean({ description: 'The organization requires consent on every identity lookup and verification it creates (set by the operator)' }),
              }),
            ),
          }),
          ...portalErrors(401),
        },
      },
    },
    async (request) => {
      const rows = await options.db
        .selectFrom('memberships as m')
        .innerJoin('organizations as o', 'o.id', 'm.org_id')
        .select(['o.id', 'o.name', 'o.enabled', 'o.consent_required', 'm.role'])
        .where('m.person_id', '=', request.portal.person.id)
        .orderBy('m.created_at')
        .execute();
      const agent = await agentOfPerson(options.db, request.portal.person.id);
      return {
        person: { ...request.portal.person, fieldAgent: agent?.active === true },
        memberships: rows.map((row) => ({
          orgId: row.id,
          orgName: row.name,
          role: row.role,
          enabled: row.enabled,
          permissions: permissionsOf(row.role),
          consentRequired: row.consent_required,
        })),
      };
    },
  );

  // Each area gets the options without the plugin's own prefix (Fastify would add it twice).
  const { db, config, urls, lookups, respondents, guarantors, store, fieldSources } = options;
  const mail = new PeopleMail(db, config, app.log);
  app.addHook('onClose', () => mail.close());
  const areaOptions: AreaOptions = { db, config, urls, lookups, respondents, guarantors, store, fieldSources, mail };
  for (const area of [authRoutes, teamRoutes, accessRoutes, keyRoutes, webhookRoutes, verificationRoutes, billingRoutes, consoleRoutes, consoleFundingRoutes, consoleDeliveryRoutes, consoleAuditRoutes, consoleOrganizationRoutes, fieldRoutes, consoleAgentRoutes, consoleRetentionRoutes, consoleAccessLogRoutes, consoleSessionRoutes, sandboxRoutes]) {
    await app.register(area, areaOptions);
  }
  // Verification links (src/sessions/links; docs/sessions.md, "Verification links").
  await app.register(linkRoutes, areaOptions);
  // The verification flow's branding and session defaults (docs/sessions.md, "Branding").
  await app.register(brandingRoutes, areaOptions);
  // Screenings: lists, detail, hit review and the confirmed-matches CSV (src/screening; docs/screening.md).
  await app.register(screeningPortalRoutes, { db });
  // The monitored subjects, the organization's screening setting, and the console's watchlists and volumes.
  await app.register(screeningMonitoredRoutes, { db });
  await app.register(screeningSettingRoutes, { db });
  await app.register(consoleScreeningRoutes, { db });
}
