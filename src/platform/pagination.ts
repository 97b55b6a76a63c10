import { sql, type Kysely, type Transaction } from 'kysely';
import { Type } from 'typebox';
import type { DB, Mode } from './db/schema.js';
import { ApiError } from './errors.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** The list query of every workflow list endpoint, for the OpenAPI document. Values are checked by `parsePage`. */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: `Records per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})` })),
  offset: Type.Optional(Type.String({ description: 'Records to skip, newest first (default 0)' })),
});

export interface Page {
  limit: number;
  offset: number;
}

function parseCount(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ApiError('VALIDATION_ERROR', `${name} must be a whole number`);
  const value = Number(raw);
  if (value < min || value > max) throw new ApiError('VALIDATION_ERROR', `${name} must be between ${min} and ${max}`);
  return value;
}

/** Parses `limit` and `offset`: bad values are 400, never silently clamped. */
export function parsePage(query: { limit?: string | undefined; offset?: string | undefined }): Page {
  return {
    limit: parseCount('limit', query.limit, DEFAULT_LIMIT, 1, MAX_LIMIT),
    offset: parseCount('offset', query.offset, 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

export interface Scope {
  orgId: string;
  mode: Mode;
}

/**
 * The next sequence number of `kind` in the scope. Call it inside the transaction that inserts
 * the row: the counter row's lock orders concurrent creates, and a rollback gives the number back.
 */
export async function nextSequence(trx: Transaction<DB>, scope: Scope, kind: string): Promise<number> {
  const { rows } = await sql<{ value: number }>`
    insert into sequences (org_id, mode, kind, value) values (${scope.orgId}, ${scope.mode}, ${kind}, 1)
    on conflict (org_id, mode, kind) do update set value = sequences.value + 1
    returning value`.execute(trx);
  return rows[0]!.value;
}

/** How many rows of `kind` the scope has: the exact `_pagination.total`. */
export async function sequenceTotal(db: Kysely<DB>, scope: Scope, kind: string): Promise<number> {
  const row = await db
    .selectFrom('sequences')
    .select('value')
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('kind', '=', kind)
    .executeTakeFirst();
  return row?.value ?? 0;
}

/** The rows of a page, newest first, are those with `lower < seq <= upper` (none past the end). */
export function sequenceWindow(total: number, page: Page): { upper: number; lower: number } {
  const upper = total - page.offset;
  return { upper, lower: Math.max(0, upper - page.limit) };
}

export function listEnvelope<T>(data: T[], page: Page, total: number) {
  return { status: 'success' as const, _pagination: { limit: page.limit, offset: page.offset, total }, data };
}
