import { sql, type Kysely } from 'kysely';
import { ADDRESS_BILLABLES } from '../../addresses/service.js';
import { IDENTITY_BILLABLES, maskIdentifier } from '../../identities/lookups.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import type { Page, Scope } from '../../platform/pagination.js';
import { pageWithCappedCount, type CappedTotal } from './counting.js';

/**
 * Identity lookups as the explorer lists them: the usage events of the lookup types (every
 * identity type, and the address-by-identity lookup), whose subject is the masked number. The
 * migration 0009 indexes name these types too: a test keeps the lists equal.
 */
export const LOOKUP_TYPES = [...Object.values(IDENTITY_BILLABLES).map((billable) => billable.type), ADDRESS_BILLABLES.address_marketplace.type] as const;
export type LookupType = (typeof LOOKUP_TYPES)[number];

/** What a lookup came to (src/platform/billing.ts and src/identities/lookups.ts record these). */
export const LOOKUP_OUTCOMES = ['success', 'not_found', 'insufficient_funds'] as const;
export type LookupOutcome = (typeof LOOKUP_OUTCOMES)[number];

export interface LookupFilters {
  type?: LookupType | undefined;
  outcome?: LookupOutcome | undefined;
  q?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export interface LookupRow {
  id: number;
  type: string;
  subject: string;
  outcome: LookupOutcome;
  price: number;
  createdAt: string;
}

/** The shortest number stored with a visible head and tail (maskIdentifier hides shorter ones whole). */
const MASKED_MIN_LENGTH = 7;

/**
 * What `q` means: a lookup type names the type; a masked number (with `*`) is matched as
 * shown; a whole number is masked the way lookups store it and matched so (the number itself
 * is never stored, so this is the only way to find it); anything shorter is the start of the
 * masked number as shown ("223" finds 223******01). Escapes LIKE's wildcards.
 */
export function subjectSearch(q: string): { type: LookupType } | { subjects: string[] } | { prefix: string } {
  const text = q.trim();
  const asType = LOOKUP_TYPES.find((type) => type === text.toLowerCase());
  if (asType) return { type: asType };
  if (text.includes('*')) return { subjects: [text] };
  if (text.length >= MASKED_MIN_LENGTH) {
    const compact = text.replace(/[\s-]+/g, '');
    return { subjects: [...new Set([maskIdentifier(text), maskIdentifier(compact)])] };
  }
  return { prefix: text.replace(/[\\%_]/g, (c) => `\\${c}`) };
}

function instant(name: string, raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined;
  const at = new Date(raw);
  if (Number.isNaN(at.getTime())) throw new ApiError('VALIDATION_ERROR', `${name} is not a real date: use ISO 8601, e.g. 2026-01-31 or 2026-01-31T09:00:00Z`);
  return at;
}

/** The scope's lookups, newest first, with their count (up to COUNT_CAP). */
export async function listLookups(db: Kysely<DB>, scope: Scope, filters: LookupFilters, page: Page): Promise<CappedTotal & { rows: LookupRow[] }> {
  const from = instant('from', filters.from);
  const to = instant('to', filters.to);
  if (from && to && from >= to) throw new ApiError('VALIDATION_ERROR', 'from must be before to');
  // The types inline, not as parameters: the partial indexes of 0009 are only used when the
  // planner can see that the query's types are theirs.
  const lookupTypes = sql<boolean>`type in (${sql.join(LOOKUP_TYPES.map((type) => sql.lit(type)))})`;
  let query = db.selectFrom('usage_events').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where(lookupTypes);
  if (filters.type) query = query.where('type', '=', filters.type);
  if (filters.outcome) query = query.where('outcome', '=', filters.outcome);
  if (from) query = query.where('created_at', '>=', from);
  if (to) query = query.where('created_at', '<', to);
  if (filters.q?.trim()) {
    const search = subjectSearch(filters.q);
    if ('type' in search) query = query.where('type', '=', search.type);
    else if ('subjects' in search) query = query.where('subject', 'in', search.subjects);
    else query = query.where('subject', 'like', `${search.prefix}%`);
  }
  const { rows, ...count } = await pageWithCappedCount(
    db,
    query,
    query.select(['id', 'type', 'subject', 'outcome', 'price', 'created_at']).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset),
    sql`order by page.created_at desc, page.id desc`,
  );
  return {
    ...count,
    rows: rows.map((row) => ({
      id: Number(row.id),
      type: row.type,
      subject: row.subject,
      outcome: row.outcome as LookupOutcome,
      price: Number(row.price),
      createdAt: row.created_at.toISOString(),
    })),
  };
}
