import { sql, type ColumnType, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';

export interface WebhookCircuitsTable {
  url: string;
  opened_at: ColumnType<Date, Date | string | undefined, Date | string>;
  probe_at: ColumnType<Date, Date | string, Date | string>;
  failures: number;
  last_status_code: number | null;
  last_error: string | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

declare module '../platform/db/schema.js' {
  interface DB {
    webhook_circuits: WebhookCircuitsTable;
  }
}

/** An open breaker as the worker records it (migration 0019). */
export interface OpenCircuit {
  url: string;
  openedAt: Date;
  /** When the cool-down ends: the URL's next due delivery after it is the probe. */
  probeAt: Date;
  failures: number;
  lastStatusCode: number | null;
  lastError: string | null;
}

/**
 * The breaker of `url` opened (or a probe failed and it opened again): the row keeps the time
 * the outage began and takes the new probe time and the last failure.
 */
export async function recordCircuitOpened(
  db: Kysely<DB>,
  circuit: { url: string; probeAt: Date; failures: number; lastStatusCode: number | null; lastError: string | null },
): Promise<void> {
  await db
    .insertInto('webhook_circuits')
    .values({
      url: circuit.url,
      probe_at: circuit.probeAt,
      failures: circuit.failures,
      last_status_code: circuit.lastStatusCode,
      last_error: circuit.lastError?.slice(0, 500) ?? null,
    })
    .onConflict((oc) =>
      oc.column('url').doUpdateSet((eb) => ({
        probe_at: eb.ref('excluded.probe_at'),
        failures: eb.ref('excluded.failures'),
        last_status_code: eb.ref('excluded.last_status_code'),
        last_error: eb.ref('excluded.last_error'),
        updated_at: sql<Date>`now()`,
      })),
    )
    .execute();
}

/** The URL answered again: its breaker closed. */
export async function recordCircuitClosed(db: Kysely<DB>, url: string): Promise<void> {
  await db.deleteFrom('webhook_circuits').where('url', '=', url).execute();
}

export async function openCircuits(db: Kysely<DB>): Promise<OpenCircuit[]> {
  const rows = await db.selectFrom('webhook_circuits').selectAll().orderBy('opened_at').execute();
  return rows.map((row) => ({
    url: row.url,
    openedAt: row.opened_at,
    probeAt: row.probe_at,
    failures: row.failures,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
  }));
}
