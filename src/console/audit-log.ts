import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { csvRow } from '../portal/billing/csv.js';
import { cappedCount, type CappedTotal } from '../portal/verifications/counting.js';
import type { ActorKind } from '../portal/tables.js';

export interface AuditFilter {
  orgId?: string | undefined;
  /** Who acted: part of their email or name. */
  actor?: string | undefined;
  actorKind?: ActorKind | undefined;
  /** An action (`funding.confirmed`), or a family of them ending in a dot (`funding.`). */
  action?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** Part of the target, or of the email or name of the person it names. */
  q?: string | undefined;
}

export interface AuditEventView {
  id: number;
  createdAt: string;
  orgId: string | null;
  orgName: string | null;
  actor: {
    kind: ActorKind;
    personId: string | null;
    /** Null for the command line and the system, and for a person since deleted. */
    name: string | null;
    email: string | null;
  };
  action: string;
  target: string | null;
  /** The person the target names (team changes name people by id), when it does. */
  targetPerson: { name: string; email: string } | null;
  before: unknown;
  after: unknown;
}

const UUID_TEXT = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** `%text%` for ILIKE, the text's own % _ and \ taken literally. */
function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function filtered(db: Kysely<DB>, filter: AuditFilter) {
  let query = db
    .selectFrom('audit_events as a')
    .leftJoin('people as p', 'p.id', 'a.actor_id')
    .leftJoin('organizations as o', 'o.id', 'a.org_id')
    // A target that is a person's id (member.role_changed, member.removed) reads as that person.
    .leftJoin('people as tp', (join) => join.on('tp.id', '=', sql<string>`case when a.target ~ ${UUID_TEXT} then a.target::uuid end`));
  if (filter.orgId) query = query.where('a.org_id', '=', filter.orgId);
  if (filter.actorKind) query = query.where('a.actor_kind', '=', filter.actorKind);
  if (filter.actor?.trim()) {
    const pattern = containing(filter.actor.trim());
    query = query.where((eb) => eb.or([eb('p.email', 'ilike', pattern), eb('p.name', 'ilike', pattern)]));
  }
  if (filter.action) {
    query = filter.action.endsWith('.')
      ? query.where('a.action', 'like', `${filter.action.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
      : query.where('a.action', '=', filter.action);
  }
  if (filter.since) query = query.where('a.created_at', '>=', filter.since);
  if (filter.until) query = query.where('a.created_at', '<', filter.until);
  if (filter.q?.trim()) {
    const pattern = containing(filter.q.trim());
    query = query.where((eb) => eb.or([eb('a.target', 'ilike', pattern), eb('tp.email', 'ilike', pattern), eb('tp.name', 'ilike', pattern)]));
  }
  return query;
}

function selectEvents(db: Kysely<DB>, filter: AuditFilter) {
  return filtered(db, filter).select([
    'a.id',
    'a.created_at',
    'a.org_id',
    'o.name as org_name',
    'a.actor_kind',
    'a.actor_id',
    'p.name as actor_name',
    'p.email as actor_email',
    'a.action',
    'a.target',
    'tp.name as target_name',
    'tp.email as target_email',
    'a.before',
    'a.after',
  ]);
}

type EventRow = Awaited<ReturnType<ReturnType<typeof selectEvents>['executeTakeFirstOrThrow']>>;

function view(row: EventRow): AuditEventView {
  return {
    id: Number(row.id),
    createdAt: row.created_at.toISOString(),
    orgId: row.org_id,
    orgName: row.org_name,
    actor: { kind: row.actor_kind, personId: row.actor_id, name: row.actor_name, email: row.actor_email },
    action: row.action,
    target: row.target,
    targetPerson: row.target_email ? { name: row.target_name ?? '', email: row.target_email } : null,
    before: row.before ?? null,
    after: row.after ?? null,
  };
}

/** A page of the audit log, newest first, with its count (up to COUNT_CAP). */
export async function auditPage(db: Kysely<DB>, filter: AuditFilter, page: { limit: number; offset: number }): Promise<{ rows: AuditEventView[] } & CappedTotal> {
  const [rows, counted] = await Promise.all([
    selectEvents(db, filter).orderBy('a.id', 'desc').limit(page.limit).offset(page.offset).execute(),
    cappedCount(db, filtered(db, filter).select('a.id')),
  ]);
  return { rows: rows.map(view), ...counted };
}

/**
 * The actions the log holds, in order: a loose index scan of audit_events_action (one index
 * probe per distinct action), so it stays cheap however long the log grows.
 */
export async function auditActions(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ action: string }>`
    with recursive actions(action) as (
      (select action from audit_events order by action limit 1)
      union all
      select (select a.action from audit_events a where a.action > actions.action order by a.action limit 1)
        from actions where actions.action is not null
    )
    select action from actions where action is not null`.execute(db);
  return rows.map((row) => row.action);
}

export const AUDIT_CSV_HEADER = [
  'id',
  'created_at',
  'organization_id',
  'organization',
  'actor_kind',
  'actor_name',
  'actor_email',
  'action',
  'target',
  'target_person',
  'before',
  'after',
] as const;

/** How many audit rows the export reads at a time: a long log is never held in memory whole. */
export const AUDIT_CSV_BATCH = 1000;

const json = (value: unknown) => (value === null || value === undefined ? '' : JSON.stringify(value));

/**
 * The filtered audit log as CSV lines, newest first (as the console shows it), read in batches
 * by id (keyset: each batch is one index range however deep the export goes). The cells are the
 * ledger export's (RFC 4180, formula-like text neutralised); before and after are JSON.
 */
export async function* auditCsv(db: Kysely<DB>, filter: AuditFilter, batch = AUDIT_CSV_BATCH): AsyncGenerator<string> {
  yield csvRow(AUDIT_CSV_HEADER);
  let before: number | undefined;
  for (;;) {
    let query = selectEvents(db, filter);
    if (before !== undefined) query = query.where('a.id', '<', before);
    const rows = await query.orderBy('a.id', 'desc').limit(batch).execute();
    for (const row of rows) {
      const event = view(row);
      yield csvRow([
        event.id,
        event.createdAt,
        event.orgId ?? '',
        event.orgName ?? '',
        event.actor.kind,
        event.actor.name ?? (event.actor.kind === 'cli' ? 'command line' : ''),
        event.actor.email ?? '',
        event.action,
        event.target ?? '',
        event.targetPerson?.email ?? '',
        json(event.before),
        json(event.after),
      ]);
    }
    if (rows.length < batch) return;
    before = Number(rows.at(-1)!.id);
  }
}
