import { sql, type RawBuilder } from 'kysely';
import { ApiError } from '../../platform/errors.js';

/**
 * Billing counts days as its customers live them: in West Africa Time (Africa/Lagos, UTC+01:00
 * all year, no daylight saving). A fixed offset, so the arithmetic needs no time-zone database
 * in either PostgreSQL or PGlite.
 */
export const TIME_ZONE = 'Africa/Lagos';
const OFFSET_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The calendar day (YYYY-MM-DD) in Lagos of an instant. */
export function lagosDate(instant: Date): string {
  return new Date(instant.getTime() + OFFSET_MS).toISOString().slice(0, 10);
}

/** The instant a Lagos calendar day starts. */
export function startOfDay(date: string): Date {
  return new Date(Date.parse(`${date}T00:00:00Z`) - OFFSET_MS);
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** SQL: the Lagos calendar day of a timestamptz column, as YYYY-MM-DD. */
export function lagosDay(column: string): RawBuilder<string> {
  return sql<string>`to_char((${sql.ref(column)} at time zone 'UTC') + interval '1 hour', 'YYYY-MM-DD')`;
}

/** A real calendar date (the schema checks the shape; this refuses 2025-02-30). */
function checkDate(name: string, value: string): void {
  const parsed = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value) {
    throw new ApiError('VALIDATION_ERROR', `${name} must be a calendar date as YYYY-MM-DD, got ${value}`);
  }
}

/**
 * `from` and `to` (inclusive Lagos days) as the half-open instant range [since, until); either
 * may be absent. A `to` before `from` is the caller's mistake, not an empty answer.
 */
export function dayRange(from: string | undefined, to: string | undefined): { since?: Date; until?: Date } {
  if (from) checkDate('from', from);
  if (to) checkDate('to', to);
  if (from && to && from > to) throw new ApiError('VALIDATION_ERROR', `from (${from}) must not be after to (${to})`);
  return { ...(from ? { since: startOfDay(from) } : {}), ...(to ? { until: startOfDay(addDays(to, 1)) } : {}) };
}
