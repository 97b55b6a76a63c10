import type { Kysely } from 'kysely';
import type { CircuitState, DB } from '../../platform/db/schema.js';
import { listSources, type SourceView } from './store.js';

/** How long a server's health row counts as current: servers write at least on every lookup burst. */
const FRESH_MS = 10 * 60 * 1000;

export interface SourceStatus {
  name: string;
  kind: string;
  types: string[];
  /** The circuit as the most recently reporting server sees it; null before any lookup. */
  circuit: CircuitState | null;
  consecutiveFailures: number;
  lastFailure: { kind: string; at: string } | null;
  /** Summed over the servers that reported in the last ten minutes, since each started. */
  successes: number;
  notFound: number;
  failures: number;
  latencyMs: { p50: number | null; p99: number | null };
  updatedAt: string | null;
  instances: number;
}

export async function sourceStatuses(db: Kysely<DB>, now = new Date()): Promise<SourceStatus[]> {
  const sources = await listSources(db);
  const rows = await db
    .selectFrom('upstream_health')
    .selectAll()
    .where('updated_at', '>', new Date(now.getTime() - FRESH_MS))
    .orderBy('updated_at', 'desc')
    .execute();
  return sources.map((source: SourceView) => {
    const mine = rows.filter((row) => row.source === source.name);
    const latest = mine[0];
    return {
      name: source.name,
      kind: source.kind,
      types: source.types,
      circuit: latest?.circuit ?? null,
      consecutiveFailures: latest?.consecutive_failures ?? 0,
      lastFailure: latest?.last_failure_kind && latest.last_failure_at ? { kind: latest.last_failure_kind, at: new Date(latest.last_failure_at).toISOString() } : null,
      successes: mine.reduce((sum, row) => sum + Number(row.successes), 0),
      notFound: mine.reduce((sum, row) => sum + Number(row.not_found), 0),
      failures: mine.reduce((sum, row) => sum + Number(row.failures), 0),
      latencyMs: { p50: latest?.latency_p50_ms ?? null, p99: latest?.latency_p99_ms ?? null },
      updatedAt: latest ? new Date(latest.updated_at).toISOString() : null,
      instances: mine.length,
    };
  });
}

/** `list`'s one-word status: what the operator looks at first. */
export function summary(status: SourceStatus | undefined): string {
  if (!status?.circuit) return 'no lookups yet';
  return status.circuit === 'closed' ? 'healthy' : `circuit ${status.circuit.replace('_', '-')}`;
}
