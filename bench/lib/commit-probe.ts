import pg from 'pg';
import { quantile, round } from './report.js';

/** Round trips of one statement, in milliseconds. */
export interface StatementLatency {
  count: number;
  p50: number;
  p99: number;
}

export interface CommitProbe {
  /** `select 1`: a round trip that writes nothing. */
  read: StatementLatency;
  /** A one-row insert into a table of its own, committed as every write of Vouch's is (synchronous_commit as the server has it). */
  commit: StatementLatency;
}

export const PROBE_CONNECTIONS = 4;

/**
 * What a durable commit costs on this machine's PostgreSQL beside a round trip that writes nothing,
 * at a steady rate: each logged list waits for one such commit, which the bare baseline never makes,
 * so its tail is where the lists' p99 ratio goes on a machine whose disk flushes slowly now and then
 * (docs/benchmarks.md, twenty-first session). Statements are sent at the rate whatever the answers
 * (open loop) and each is timed from when it was handed to the pool, so one queued behind slow ones
 * counts its wait. The two kinds take turns in slices of a second, so that both see the same
 * moments of the machine; the connections are opened before the first.
 */
export async function probeCommits(databaseUrl: string, options: { rate: number; seconds: number }): Promise<CommitProbe> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: PROBE_CONNECTIONS });
  try {
    await pool.query('create table if not exists bench_commit_probe (id bigserial primary key, at timestamptz not null default now())');
    await Promise.all(Array.from({ length: PROBE_CONNECTIONS }, () => pool.query('select 1')));
    const statements = { read: 'select 1', commit: 'insert into bench_commit_probe default values' } as const;
    const latencies: Record<keyof typeof statements, number[]> = { read: [], commit: [] };
    const interval = 1000 / options.rate;
    for (let slice = 0; slice < 2 * options.seconds; slice++) {
      const kind = slice % 2 === 0 ? 'read' : 'commit';
      const started = performance.now();
      const pending: Promise<void>[] = [];
      for (let sent = 0; sent < options.rate; ) {
        const now = performance.now();
        for (; sent < options.rate && started + sent * interval <= now; sent++) {
          const sentAt = performance.now();
          pending.push(pool.query(statements[kind]).then(() => void latencies[kind].push(performance.now() - sentAt)));
        }
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + sent * interval - performance.now())));
      }
      await Promise.all(pending);
    }
    return { read: summarise(latencies.read), commit: summarise(latencies.commit) };
  } finally {
    await pool.end();
  }
}

function summarise(latencies: number[]): StatementLatency {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (fraction: number) => round(quantile(sorted, fraction), 2);
  return { count: sorted.length, p50: at(0.5), p99: at(0.99) };
}
