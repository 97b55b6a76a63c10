import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../platform/db/schema.js';
import { requireSession } from '../portal/guard.js';
import { Nullable, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { listSourceStatuses } from '../screening/lists/status.js';
import { requireOperator } from './guard.js';
import { CONSOLE_TAG } from './routes.js';

const Instant = (description: string) => Nullable(Type.String({ format: 'date-time', description }));

const ListSource = Type.Object({
  name: Type.String(),
  format: Type.String({ description: 'un-xml, ofac-xml, ofac-csv, uk-csv, eu-xml, ftm or csv' }),
  url: Nullable(Type.String({ description: 'Where the worker fetches it; null: imported by hand only' })),
  enabled: Type.Boolean(),
  every: Nullable(Type.String({ description: 'The sync interval, like 15m; null without a URL' })),
  version: Type.Integer({ description: 'The serving version; 0 before the first import' }),
  entities: Type.Integer(),
  loadedAt: Instant('When the serving version was loaded'),
  lastSuccessAt: Instant('The last sync that fetched the list (changed or not)'),
  lastFailureAt: Instant('The last sync that failed'),
  lastError: Nullable(Type.String({ description: "The last failure's reason" })),
  lastOutcome: Nullable(Type.String({ description: 'updated, unchanged, not_modified or failed' })),
  nextSyncAt: Instant('When the worker fetches it next; null without a URL or when disabled'),
  maxShrink: Type.Number({ description: 'The share of entities a new version may lose before it is refused' }),
});

const Volume = Type.Object({
  orgId: Type.String(),
  orgName: Type.String(),
  screenings30d: Type.Integer({ description: 'Screenings made in the last 30 days' }),
  pendingHits: Type.Integer({ description: 'Hits not reviewed yet' }),
  confirmedMatches: Type.Integer({ description: 'Hits reviewed true matches' }),
  monitored: Type.Integer({ description: 'Screenings monitored now' }),
});

const DAY_MS = 86_400_000;

/**
 * The console's watchlists (issue 51, part 3; docs/screening-lists.md): each source's freshness as
 * `vouch lists list` shows it, and the screening volumes per organization of a mode. Operators only.
 */
export async function consoleScreeningRoutes(parent: FastifyInstance, { db }: { db: Kysely<DB> }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const operatorsOnly = [requireSession(db), requireOperator];

  app.get(
    '/console/screening/lists',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleListScreeningSources',
        summary: 'Each watchlist source: its format and URL, the serving version and its entities, and how fresh it is (last success, last failure and its error, next sync)',
        security: sessionSecurity,
        response: { 200: Type.Object({ data: Type.Array(ListSource) }), ...portalErrors(401, 403) },
      },
    },
    async () => ({ data: await listSourceStatuses(db) }),
  );

  app.get(
    '/console/screening/volumes',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleScreeningVolumes',
        summary: "Per organization that has screened in the mode: screenings of the last 30 days, hits waiting for review, confirmed matches and monitored subjects",
        description: 'Counts only, never a subject. Organizations with the most hits waiting come first.',
        security: sessionSecurity,
        querystring: Type.Object({ mode: Type.Optional(Type.Union([Type.Literal('test'), Type.Literal('live')], { description: 'live (default) or test' })) }),
        response: { 200: Type.Object({ data: Type.Array(Volume) }), ...portalErrors(400, 401, 403) },
      },
    },
    async (request) => {
      const mode = request.query.mode ?? 'live';
      const since = new Date(Date.now() - 30 * DAY_MS);
      const screenings = db
        .selectFrom('screenings')
        .where('mode', '=', mode)
        .groupBy('org_id')
        .select((eb) => [
          'org_id',
          eb.fn.countAll<string>().filterWhere('created_at', '>=', since).as('recent'),
          eb.fn.countAll<string>().filterWhere('monitored', '=', true).as('monitored'),
        ]);
      const hits = db
        .selectFrom('screening_hits as h')
        .innerJoin('screenings as s', 's.id', 'h.screening_id')
        .where('s.mode', '=', mode)
        .groupBy('s.org_id')
        .select((eb) => [
          's.org_id',
          eb.fn.countAll<string>().filterWhere('h.decision', 'is', null).as('pending'),
          eb.fn.countAll<string>().filterWhere('h.decision', '=', 'true_match').as('confirmed'),
        ]);
      const rows = await db
        .selectFrom(screenings.as('v'))
        .innerJoin('organizations as o', 'o.id', 'v.org_id')
        .leftJoin(hits.as('h'), 'h.org_id', 'v.org_id')
        .select(['o.id', 'o.name', 'v.recent', 'v.monitored', 'h.pending', 'h.confirmed'])
        .orderBy('h.pending', (ob) => ob.desc().nullsLast())
        .orderBy('v.recent', 'desc')
        .orderBy('o.name')
        .execute();
      return {
        data: rows.map((row) => ({
          orgId: row.id,
          orgName: row.name,
          screenings30d: Number(row.recent),
          pendingHits: Number(row.pending ?? 0),
          confirmedMatches: Number(row.confirmed ?? 0),
          monitored: Number(row.monitored),
        })),
      };
    },
  );
}
