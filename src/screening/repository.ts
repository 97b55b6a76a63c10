import type { Kysely, Transaction } from 'kysely';
import type { PageViewer } from '../access-log/service.js';
import { consentColumns } from '../consent/consent.js';
import type { DB } from '../platform/db/schema.js';
import type { Page, Scope } from '../platform/pagination.js';
import { scopedTable } from '../platform/scoped-table.js';
import type { EntityMatch } from './entity.js';
import type { ScreenedList, ScreeningHitRow, ScreeningRow, ScreeningState } from './tables.js';
import type { ScreeningInput } from './validate.js';

/** The `sequences` kind that numbers an organization's screenings per mode. */
export const SCREENING_SEQUENCE = 'screening';

const screenings = scopedTable('screenings', SCREENING_SEQUENCE);

export const findScreening = screenings.find;
export const lockScreening = screenings.lock;
export const updateScreening = screenings.update;

export interface NewScreening {
  seq: number;
  input: ScreeningInput;
  lists: ScreenedList[];
  threshold: number;
  state: ScreeningState;
  price: number;
  monitoringPaidUntil: Date | null;
  now: Date;
}

export async function insertScreening(trx: Transaction<DB>, scope: Scope, n: NewScreening): Promise<ScreeningRow> {
  return trx
    .insertInto('screenings')
    .values({
      org_id: scope.orgId,
      mode: scope.mode,
      seq: n.seq,
      reference: n.input.reference,
      subject: JSON.stringify(n.input.subject),
      metadata: JSON.stringify(n.input.metadata),
      lists: JSON.stringify(n.lists),
      sources: n.input.lists ?? null,
      threshold: n.threshold,
      state: n.state,
      monitored: n.input.monitor,
      monitoring_paid_until: n.monitoringPaidUntil,
      price: n.price,
      ...consentColumns(n.input.consent),
      created_at: n.now,
      updated_at: n.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Stores matches as hits (a snapshot of each entity at its version); one already hit on the screening is skipped. */
export async function insertHits(trx: Kysely<DB>, screeningId: number, matches: readonly EntityMatch[], { now, fromMonitoring }: { now: Date; fromMonitoring: boolean }): Promise<ScreeningHitRow[]> {
  if (matches.length === 0) return [];
  return trx
    .insertInto('screening_hits')
    .values(
      matches.map(({ entity, score, matchedName, explanation }) => ({
        screening_id: screeningId,
        source: entity.source,
        entity_id: entity.id,
        list_version: entity.listVersion,
        schema: entity.schema,
        name: entity.name,
        matched_name: matchedName,
        score,
        entity: JSON.stringify({ aliases: entity.aliases, topics: entity.topics, birthDates: entity.birthDates, nationalities: entity.nationalities, programs: entity.programs }),
        explanation,
        from_monitoring: fromMonitoring,
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['screening_id', 'source', 'entity_id']).doNothing())
    .returningAll()
    .execute();
}

/** The hits of the screenings, by screening id. */
export async function hitsOf(db: Kysely<DB>, screeningIds: readonly number[]): Promise<Map<number, ScreeningHitRow[]>> {
  const out = new Map<number, ScreeningHitRow[]>(screeningIds.map((id) => [id, []]));
  if (screeningIds.length === 0) return out;
  const rows = await db.selectFrom('screening_hits').selectAll().where('screening_id', 'in', [...screeningIds]).orderBy('id').execute();
  for (const row of rows) out.get(Number(row.screening_id))?.push(row);
  return out;
}

/** A page of the scope's screenings, newest first; with a `viewer`, logged by the statement that reads it. */
export function listScreenings(db: Kysely<DB>, scope: Scope, page: Page, viewer?: PageViewer): Promise<{ rows: ScreeningRow[]; total: number }> {
  return screenings.page(db, scope, page, undefined, viewer);
}
