import { sql, type Kysely } from 'kysely';
import type { DB, Mode } from '../../platform/db/schema.js';
import { addDays, lagosDate, lagosDay, startOfDay } from './calendar.js';
import { checkLabel } from './checks.js';

export interface Tally {
  count: number;
  /** Kobo charged (0 in test mode, and for free outcomes such as not found). */
  amount: number;
}

export interface UsageReport {
  mode: Mode;
  /** The first and last day shown (Lagos calendar days, inclusive). */
  from: string;
  to: string;
  /** Every day of the range, oldest first; a day without checks is there with zeros. */
  days: (Tally & { date: string; byType: Record<string, Tally> })[];
  /** The types that had checks in the range, most used first, with their totals. */
  types: (Tally & { type: string; label: string })[];
  total: Tally;
}

interface Scope {
  orgId: string;
  mode: Mode;
}

interface DayTypeRow extends Tally {
  day: string;
  type: string;
}

/**
 * A day is counted from the cache only once it has been over for this long: a charge stamps
 * `created_at` when its transaction starts, so one that straddles midnight lands on the day
 * before after that day has ended. Transactions here last milliseconds; ten minutes is plenty.
 */
const SETTLE_MS = 10 * 60 * 1000;
/** Organizations × modes whose past days one process keeps (a few KB each). */
const MAX_CACHED = 1000;

/**
 * Checks per day and type, counted in SQL on the (org_id, mode, created_at) index. A check is a
 * recorded call that did its work: lookups found or not found, verifications created; calls
 * refused for want of funds (402) are not usage.
 */
async function countDays(db: Kysely<DB>, scope: Scope, from: string, to: string): Promise<DayTypeRow[]> {
  const rows = await db
    .selectFrom('usage_events')
    .select((eb) => [lagosDay('created_at').as('day'), 'type', eb.fn.countAll<string>().as('n'), eb.fn.sum<string>('price').as('amount')])
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('created_at', '>=', startOfDay(from))
    .where('created_at', '<', startOfDay(addDays(to, 1)))
    .where('outcome', '<>', 'insufficient_funds')
    .groupBy([sql`1`, 'type'])
    .execute();
  return rows.map((row) => ({ day: row.day, type: row.type, count: Number(row.n), amount: Number(row.amount ?? 0) }));
}

/**
 * The usage chart's figures. Usage rows are only ever appended, so a day that is over never
 * changes: each process keeps the counts of past days per organization and mode, and a request
 * counts only today's rows (a heavy integrator's 100,000 checks a month are ~3,000 a day). The
 * first view of a day counts the whole range once.
 */
export class UsageCounter {
  private readonly past = new Map<string, { from: string; through: string; rows: DayTypeRow[] }>();

  constructor(private readonly db: Kysely<DB>) {}

  async report(scope: Scope, days: number, now = new Date()): Promise<UsageReport> {
    const to = lagosDate(now);
    const from = addDays(to, -(days - 1));
    // The last day that is over and settled; the days after it are counted fresh.
    const settled = addDays(lagosDate(new Date(now.getTime() - SETTLE_MS)), -1);
    const closed = from <= settled ? await this.pastDays(scope, from, settled) : [];
    const open = await countDays(this.db, scope, from > settled ? from : addDays(settled, 1), to);
    return tally(scope.mode, from, to, days, [...closed, ...open]);
  }

  private async pastDays(scope: Scope, from: string, through: string): Promise<DayTypeRow[]> {
    const key = `${scope.orgId}:${scope.mode}`;
    const hit = this.past.get(key);
    if (hit && hit.through === through && hit.from <= from) {
      // Most recently used last: the first key is the one to evict.
      this.past.delete(key);
      this.past.set(key, hit);
      return hit.rows.filter((row) => row.day >= from);
    }
    const rows = await countDays(this.db, scope, from, through);
    this.past.delete(key);
    this.past.set(key, { from, through, rows });
    if (this.past.size > MAX_CACHED) this.past.delete(this.past.keys().next().value!);
    return rows;
  }
}

function tally(mode: Mode, from: string, to: string, days: number, rows: DayTypeRow[]): UsageReport {
  const byDay = new Map<string, UsageReport['days'][number]>();
  for (let i = 0; i < days; i++) {
    const date = addDays(from, i);
    byDay.set(date, { date, count: 0, amount: 0, byType: {} });
  }
  const byType = new Map<string, Tally>();
  const total: Tally = { count: 0, amount: 0 };
  for (const row of rows) {
    const day = byDay.get(row.day);
    if (!day) continue;
    const { count, amount } = row;
    day.byType[row.type] = { count, amount };
    day.count += count;
    day.amount += amount;
    const sum = byType.get(row.type) ?? { count: 0, amount: 0 };
    sum.count += count;
    sum.amount += amount;
    byType.set(row.type, sum);
    total.count += count;
    total.amount += amount;
  }
  const types = [...byType.entries()]
    .map(([type, sum]) => ({ type, label: checkLabel(type), ...sum }))
    .sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
  return { mode, from, to, days: [...byDay.values()], types, total };
}
