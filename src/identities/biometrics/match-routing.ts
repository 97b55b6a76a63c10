import type { ColumnType, Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { audit, type Actor } from '../../portal/audit.js';
import type { FaceMatchType } from '../upstreams/adapter.js';
import { faceMatchTypesOf } from '../upstreams/kinds.js';
import { notFound } from '../../platform/not-found.js';

/**
 * Which engine decides an organization's live face matches (issue 50, part 6): the local model,
 * or an upstream source's selfie match through the lookup gateway (src/identities/upstreams),
 * alone or with the other engine behind it. An operator sets it (`vouch upstream face-match`);
 * test mode always uses the local engine, as no upstream is asked in test mode.
 */

/**
 * - `local`: the local model decides (the default).
 * - `upstream`: the source decides; when it cannot (failure, timeout, open circuit) the match is
 *   a 503 with Retry-After, uncharged.
 * - `upstream-then-local`: the source first; when it cannot decide (failure, open circuit, or it
 *   does not know the identity), the local model does.
 * - `local-then-upstream`: the local model first; when it cannot compare (no photo on record, one
 *   that does not decode, or no face in it), the source does.
 */
export const FACE_MATCH_ENGINES = ['local', 'upstream', 'upstream-then-local', 'local-then-upstream'] as const;
export type FaceMatchEngine = (typeof FACE_MATCH_ENGINES)[number];

/** One row per organization whose matches an upstream takes part in (0045); no row: `local`. */
export interface FaceMatchRoutingTable {
  org_id: string;
  engine: Exclude<FaceMatchEngine, 'local'>;
  source: string;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

declare module '../../platform/db/schema.js' {
  interface DB {
    face_match_routing: FaceMatchRoutingTable;
  }
}

export type FaceMatchRouting =
  | { engine: 'local' }
  | {
      engine: Exclude<FaceMatchEngine, 'local'>;
      source: string;
      /** The identities the source can compare (its kind's, within its types): other identities stay with the local engine. */
      faceTypes: readonly FaceMatchType[];
    };

/** What an operator asks for: the faces types are the source's, read when the routing is. */
export type RoutingChoice = { engine: 'local' } | { engine: Exclude<FaceMatchEngine, 'local'>; source: string };

export const LOCAL_ROUTING: FaceMatchRouting = { engine: 'local' };

/** A routing an operator cannot set: one line saying why (the CLI prints it). */
export class FaceMatchRoutingError extends Error {
  override name = 'FaceMatchRoutingError';
}

/** The organization's routing as it is now; `local` without a row. */
export async function faceMatchRoutingOf(db: Kysely<DB>, orgId: string): Promise<FaceMatchRouting> {
  const row = await db
    .selectFrom('face_match_routing as r')
    .innerJoin('upstream_sources as s', 's.name', 'r.source')
    .select(['r.engine', 'r.source', 's.kind', 's.types'])
    .where('r.org_id', '=', orgId)
    .executeTakeFirst();
  return row ? { engine: row.engine, source: row.source, faceTypes: faceMatchTypesOf(row.kind, row.types) } : LOCAL_ROUTING;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RoutingView {
  orgId: string;
  engine: FaceMatchEngine;
  source: string | null;
  updatedAt: string | null;
}

/** Every organization whose face matches an upstream takes part in, oldest change first. */
export async function listFaceMatchRouting(db: Kysely<DB>): Promise<RoutingView[]> {
  const rows = await db.selectFrom('face_match_routing').selectAll().orderBy('updated_at').orderBy('org_id').execute();
  return rows.map((row) => ({ orgId: row.org_id, engine: row.engine, source: row.source, updatedAt: new Date(row.updated_at).toISOString() }));
}

export async function showFaceMatchRouting(db: Kysely<DB>, orgId: string): Promise<RoutingView> {
  if (!UUID.test(orgId)) throw notFound(new FaceMatchRoutingError(`no organization with id ${orgId.slice(0, 40)}`));
  const row = await db
    .selectFrom('organizations as o')
    .leftJoin('face_match_routing as r', 'r.org_id', 'o.id')
    .select(['r.engine', 'r.source', 'r.updated_at'])
    .where('o.id', '=', orgId)
    .executeTakeFirst();
  if (!row) throw notFound(new FaceMatchRoutingError(`no organization with id ${orgId.slice(0, 40)}`));
  return { orgId, engine: row.engine ?? 'local', source: row.source ?? null, updatedAt: row.updated_at ? new Date(row.updated_at).toISOString() : null };
}

export function parseEngine(value: string): FaceMatchEngine {
  if (!(FACE_MATCH_ENGINES as readonly string[]).includes(value)) throw new FaceMatchRoutingError(`engine must be one of ${FACE_MATCH_ENGINES.join(', ')}`);
  return value as FaceMatchEngine;
}

/**
 * Sets the organization's routing, audited (`organization.face_match_engine_changed`, before and
 * after) in the same transaction. An upstream engine needs a source that can compare a selfie
 * for at least one of the types it serves. Its next live face match goes the new way.
 */
export async function setFaceMatchRouting(db: Kysely<DB>, orgId: string, routing: RoutingChoice, actor: Actor): Promise<RoutingView> {
  return db.transaction().execute(async (trx) => {
    const before = await showFaceMatchRouting(trx, orgId);
    if (routing.engine === 'local') {
      await trx.deleteFrom('face_match_routing').where('org_id', '=', orgId).execute();
    } else {
      const source = await trx.selectFrom('upstream_sources').select(['name', 'kind', 'types']).where('name', '=', routing.source).executeTakeFirst();
      if (!source) throw notFound(new FaceMatchRoutingError(`no upstream named "${routing.source}"`));
      const types = faceMatchTypesOf(source.kind, source.types);
      if (types.length === 0) throw new FaceMatchRoutingError(`upstream "${source.name}" (kind ${source.kind}) offers no face match for the types it serves (${source.types.join(', ')})`);
      const now = new Date();
      await trx
        .insertInto('face_match_routing')
        .values({ org_id: orgId, engine: routing.engine, source: routing.source, updated_at: now })
        .onConflict((oc) => oc.column('org_id').doUpdateSet({ engine: routing.engine, source: routing.source, updated_at: now }))
        .execute();
    }
    const after = await showFaceMatchRouting(trx, orgId);
    const pick = (view: RoutingView) => ({ engine: view.engine, source: view.source });
    await audit(trx, { orgId, actor, action: 'organization.face_match_engine_changed', target: 'face match engine', before: pick(before), after: pick(after) });
    return after;
  });
}

/** The organizations whose face matches go to a source (`vouch upstream remove` refuses while any do). */
export async function organizationsRoutedTo(db: Kysely<DB>, source: string): Promise<number> {
  const row = await db.selectFrom('face_match_routing').select((eb) => eb.fn.countAll<string>().as('count')).where('source', '=', source).executeTakeFirstOrThrow();
  return Number(row.count);
}
