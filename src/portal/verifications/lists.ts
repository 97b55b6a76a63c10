import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { PageViewer } from '../../access-log/service.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { pageBySequence, type Page, type Scope } from '../../platform/pagination.js';
import { MAX_FILTERED_OFFSET, pageWithCappedCount, type CappedTotal } from './counting.js';
import { explorerStatusOf, KIND_TABLES, type ExplorerStatus, type ListSource, type VerificationKind } from './kinds.js';

export interface VerificationFilters {
  status?: ExplorerStatus | undefined;
  q?: string | undefined;
}

export interface VerificationListRow {
  kind: VerificationKind;
  id: number;
  reference: string;
  status: ExplorerStatus;
  subject: string;
  createdAt: string;
  completedAt: string | null;
}

const COMMON_COLUMNS = ['id', 'reference', 'created_at', 'completed_at', 'cancelled_at'] as const;
const ID = /^\d{1,15}$/;

/**
 * One kind's verifications of the scope, newest first. Unfiltered, a page is a range of the
 * dense `seq` and the total is exact at any depth (the list endpoints' own way); with a status
 * or a search, rows come from the 0009 indexes and the total is counted up to COUNT_CAP.
 */
export async function listVerifications(
  db: Kysely<DB>,
  scope: Scope,
  kind: VerificationKind,
  filters: VerificationFilters,
  page: Page,
  viewer?: PageViewer,
): Promise<CappedTotal & { rows: VerificationListRow[] }> {
  const spec = KIND_TABLES[kind];
  const columns = [...COMMON_COLUMNS, spec.stateColumn, ...spec.columns];
  const q = filters.q?.trim();
  const toRow = (source: Record<string, unknown>): VerificationListRow => {
    const row = { applicant: null, name: null, firstname: null, lastname: null, employer_name: null, ...source, raw_state: source[spec.stateColumn] } as ListSource;
    const ended = row.completed_at ?? row.cancelled_at;
    return {
      kind,
      id: Number(row.id),
      reference: row.reference,
      status: explorerStatusOf(row.raw_state),
      subject: spec.subject(row),
      createdAt: new Date(row.created_at).toISOString(),
      completedAt: ended ? new Date(ended).toISOString() : null,
    };
  };

  if (!filters.status && !q) {
    const { rows, total } = await pageBySequence<Record<string, unknown>>(db, { table: spec.table, kind: spec.sequence, columns }, scope, page, viewer);
    return { rows: rows.map(toRow), total, totalCapped: false };
  }
  if (page.offset > MAX_FILTERED_OFFSET) {
    throw new ApiError('VALIDATION_ERROR', `offset can be at most ${MAX_FILTERED_OFFSET} with a status or a search; narrow them to reach older verifications`);
  }
  // The table is one of four known names; Kysely cannot type a query over a name chosen at run time.
  let query = (db as unknown as Kysely<Record<string, Record<string, unknown>>>)
    .selectFrom(spec.table)
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode);
  if (filters.status) query = query.where(sql<boolean>`${spec.explorerStatus} = ${filters.status}`);
  if (q) {
    const prefix = `${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = ID.test(q)
      ? query.where((eb) => eb.or([eb('id', '=', Number(q)), eb('reference', 'like', prefix)]))
      : query.where('reference', 'like', prefix);
  }
  const { rows, ...count } = await pageWithCappedCount(
    db,
    query,
    query.select([...columns, 'seq']).orderBy('seq', 'desc').limit(page.limit).offset(page.offset) as SelectQueryBuilder<any, any, Record<string, unknown> & { id: unknown }>,
    sql`order by page.seq desc`,
    viewer ? { scope, viewer } : undefined,
  );
  return { rows: rows.map(toRow), ...count };
}
