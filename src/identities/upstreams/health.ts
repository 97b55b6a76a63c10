import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { CircuitState, DB } from '../../platform/db/schema.js';
import type { UpstreamFailureKind } from './adapter.js';

const SAMPLES = 256;

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * What one server saw of one source (counts since start, latency of recent calls, the circuit),
 * written to `upstream_health` for `vouch upstream status`: at once when the circuit changes,
 * otherwise at most once per `writeIntervalMs`, so a busy source costs no write per lookup.
 */
export class SourceHealth {
  successes = 0;
  notFound = 0;
  failures = 0;
  lastFailure: { kind: UpstreamFailureKind; at: Date } | undefined;
  private readonly latencies: number[] = [];
  private lastWrite = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private writing: Promise<void> | undefined;
  private writeAgain = false;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly log: FastifyBaseLogger,
    readonly source: string,
    private readonly instance: string,
    private readonly writeIntervalMs: number,
    private readonly circuit: () => { state: CircuitState; consecutiveFailures: number },
  ) {}

  answered(latencyMs: number, found: boolean): void {
    if (found) this.successes += 1;
    else this.notFound += 1;
    this.sample(latencyMs);
    this.schedule(false);
  }

  failed(kind: UpstreamFailureKind, latencyMs: number, at: Date): void {
    this.failures += 1;
    this.lastFailure = { kind, at };
    this.sample(latencyMs);
    this.schedule(false);
  }

  circuitChanged(): void {
    this.schedule(true);
  }

  latency(): { p50: number | null; p99: number | null } {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  /** Writes what is pending now (tests, shutdown). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    await this.write();
    while (this.writing) await this.writing;
  }

  private sample(latencyMs: number): void {
    this.latencies.push(Math.round(latencyMs));
    if (this.latencies.length > SAMPLES) this.latencies.shift();
  }

  private schedule(now: boolean): void {
    if (this.closed) return;
    const wait = now ? 0 : Math.max(0, this.lastWrite + this.writeIntervalMs - Date.now());
    if (wait === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      void this.write();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.write();
      }, wait);
      this.timer.unref();
    }
  }

  /**
   * One write at a time, each with the state as it is when it starts: two upserts in flight on
   * separate connections could commit out of order and leave an older state in the row.
   */
  private write(): Promise<void> {
    if (this.writing) {
      this.writeAgain = true;
      return this.writing;
    }
    this.writing = this.writeOnce().finally(() => {
      this.writing = undefined;
      if (this.writeAgain) {
        this.writeAgain = false;
        void this.write();
      }
    });
    return this.writing;
  }

  private async writeOnce(): Promise<void> {
    if (this.closed) return;
    this.lastWrite = Date.now();
    const { state, consecutiveFailures } = this.circuit();
    const { p50, p99 } = this.latency();
    const row = {
      circuit: state,
      consecutive_failures: consecutiveFailures,
      last_failure_kind: this.lastFailure?.kind ?? null,
      last_failure_at: this.lastFailure?.at ?? null,
      successes: this.successes,
      not_found: this.notFound,
      failures: this.failures,
      latency_p50_ms: p50,
      latency_p99_ms: p99,
      updated_at: new Date(),
    };
    try {
      await this.db
        .insertInto('upstream_health')
        .values({ source: this.source, instance: this.instance, ...row })
        .onConflict((oc) => oc.columns(['source', 'instance']).doUpdateSet(row))
        .execute();
    } catch (err) {
      this.log.warn({ source: this.source, err: (err as Error).message }, 'upstream health not saved');
    }
  }
}
