import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { logSessionAccess } from '../../access-log/service.js';
import { listSandboxMessages } from '../../respondents/outbox.js';
import { requireMember, requireSession } from '../guard.js';
import type { AreaOptions } from '../plugin.js';
import { OrgParams, PORTAL_TAG, PortalPage, portalErrors, sessionSecurity } from '../schemas.js';

const tags = [PORTAL_TAG];

/** Deep pages of a list nobody reads that far are refused rather than scanned. */
const MAX_OFFSET = 10_000;

const SandboxMessage = Type.Object({
  id: Type.Integer(),
  kind: Type.String({ description: 'guarantor_request or employer_request' }),
  verificationId: Type.Integer({ description: 'The test verification the message asks about' }),
  to: Type.String({ description: 'Who would receive it in live mode; in test mode nobody does' }),
  subject: Type.String(),
  text: Type.String({ description: 'The plain-text body, as it would be mailed' }),
  link: Type.String({ description: "The respondent's single-use page: open it to answer the test verification as the respondent would" }),
  createdAt: Type.String({ format: 'date-time' }),
});

const SandboxQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Messages per page, 1 to 100' }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: `Messages to skip, at most ${MAX_OFFSET}` }),
});

/** What a message asks about, as the access log names the resource. */
const RESOURCE_OF: Record<string, string> = { guarantor_request: 'guarantor', employer_request: 'employment' };

/**
 * The sandbox outbox: the messages Vouch would have mailed to guarantors and employers for the
 * organization's test-mode verifications. Test mode never mails anyone outside the organization;
 * its members who may create verifications read the messages here and open the respondent
 * links themselves. Test mode only: live messages go to their recipients, never to this list.
 */
export async function sandboxRoutes(parent: FastifyInstance, { db }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const signedIn = requireSession(db);

  app.get(
    '/orgs/:orgId/sandbox/messages',
    {
      // The links answer test verifications: the roles that create and cancel them may read them.
      preValidation: [signedIn, requireMember(db, 'verifications.write')],
      schema: {
        tags,
        operationId: 'portalListSandboxMessages',
        summary: 'The sandbox outbox: test-mode messages to guarantors and employers, newest first (never sent to anyone)',
        security: sessionSecurity,
        params: OrgParams,
        querystring: SandboxQuery,
        response: { 200: PortalPage(SandboxMessage), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const orgId = request.member.orgId;
      const { rows, total } = await listSandboxMessages(db, orgId, { limit, offset });
      // The messages name the test verifications' respondents and applicants: a view of each.
      for (const [kind, resource] of Object.entries(RESOURCE_OF)) {
        const ids = rows.filter((row) => row.kind === kind).map((row) => row.verificationId);
        if (ids.length > 0) await logSessionAccess(db, request, { orgId, mode: 'test' }, resource, 'list', ids);
      }
      return { data: rows, total, limit, offset };
    },
  );
}
