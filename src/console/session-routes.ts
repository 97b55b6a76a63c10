import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isUuid } from '../accounts/service.js';
import { ApiError } from '../platform/errors.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Nullable, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { requireOperator } from './guard.js';
import { CONSOLE_TAG } from './routes.js';
import { MAX_ORGANIZATIONS, summariseSessions } from './sessions.js';

const tags = [CONSOLE_TAG];
const Mode = Type.Union([Type.Literal('test'), Type.Literal('live')]);
const Rate = Nullable(Type.Number({ description: 'verified ÷ (verified + failed), 0..1; null when none completed' }));

const Counts = {
  sessions: Type.Integer({ description: 'Sessions created in the window' }),
  inProgress: Type.Integer({ description: 'Of those, still open (not opened yet, or under way)' }),
  verified: Type.Integer(),
  failed: Type.Integer(),
  expired: Type.Integer(),
  cancelled: Type.Integer(),
  passRate: Rate,
  attemptsDecided: Type.Integer({ description: 'Liveness attempts decided in the window' }),
  attemptsFailed: Type.Integer({ description: 'Of those, failed' }),
};

const ReasonCount = Type.Object({
  code: Type.String({ description: 'The closed code (docs/sessions.md)' }),
  text: Type.String({ description: 'The code in plain English' }),
  sessions: Type.Integer({ description: 'Sessions created in the window that ended with it' }),
  attempts: Type.Integer({ description: 'Liveness attempts decided in the window that failed with it' }),
  previousSessions: Type.Integer({ description: 'The same in the window before' }),
  previousAttempts: Type.Integer({ description: 'The same in the window before' }),
});

const Summary = Type.Object({
  window: Type.String(),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  previousFrom: Type.String({ format: 'date-time', description: 'The window before starts here and ends at from' }),
  orgId: Nullable(Type.String()),
  mode: Nullable(Mode),
  totals: Type.Object({ ...Counts, previousPassRate: Rate, previousSessions: Type.Integer() }),
  reasons: Type.Array(ReasonCount, { description: 'Failure reasons, most frequent first' }),
  organizations: Type.Array(
    Type.Object({ orgId: Type.String(), orgName: Type.String(), ...Counts, previousPassRate: Rate, reasons: Type.Array(ReasonCount) }),
    { description: `Per organization, the busiest first (at most ${MAX_ORGANIZATIONS})` },
  ),
});

/** The console's sessions summary (docs/operators.md, "Sessions"): operators only, counts and codes, no personal data. */
export async function consoleSessionRoutes(parent: FastifyInstance, { db }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const operatorsOnly = [requireSession(db), requireOperator];

  app.get(
    '/console/sessions/summary',
    {
      preValidation: operatorsOnly,
      schema: {
        tags,
        operationId: 'consoleSessionSummary',
        summary: 'Verification sessions in aggregate over a window: outcomes, pass rate, failure reasons ranked, per organization, each against the window before',
        security: sessionSecurity,
        querystring: Type.Object({
          window: Type.Optional(Type.Unsafe<'24h' | '7d' | '30d'>({ type: 'string', enum: ['24h', '7d', '30d'], default: '7d', description: 'The last 24 hours, 7 days (default) or 30 days' })),
          orgId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this organization (its id)' })),
          mode: Type.Optional(Mode),
        }),
        response: { 200: Summary, ...portalErrors(400, 401, 403) },
      },
    },
    async (request) => {
      const { window = '7d', orgId, mode } = request.query;
      if (orgId !== undefined && !isUuid(orgId)) throw new ApiError('VALIDATION_ERROR', `orgId must be an organization id (a UUID), got ${orgId.slice(0, 64)}`);
      return summariseSessions(db, { window, orgId, mode });
    },
  );
}
