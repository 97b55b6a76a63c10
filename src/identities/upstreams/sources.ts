import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { decryptSecret, decryptSecretWithEither } from '../../platform/encryption.js';
import { CIRCUIT_VALUES, metrics } from '../../platform/metrics.js';
import { UpstreamFailure, type UpstreamAdapter, type UpstreamType } from './adapter.js';
import { CircuitBreaker, type BreakerSettings } from './breaker.js';
import { SourceHealth } from './health.js';
import { upstreamKind } from './kinds.js';
import type { StoredConfiguration } from './store.js';

/** One configured upstream as a running server holds it: its adapter, breaker and health. */
export interface LiveSource {
  name: string;
  kind: string;
  types: readonly UpstreamType[];
  timeoutMs: number;
  adapter: UpstreamAdapter;
  breaker: CircuitBreaker;
  health: SourceHealth;
  /** What the row was when the adapter was made: a changed row makes a new adapter. */
  fingerprint: string;
}

/** A source that cannot be used (no key, unknown kind): every lookup fails, visibly, as `refused`. */
function unusable(reason: string): UpstreamAdapter {
  return {
    find: () => Promise.reject(new UpstreamFailure('refused', reason)),
  };
}

export interface SourceFactory {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  instance: string;
  breaker: BreakerSettings;
  healthWriteIntervalMs: number;
  /** The installation key, or undefined when none is configured. */
  key: () => Buffer | undefined;
  /** During a change of VOUCH_ENCRYPTION_KEY, the previous key: credentials not yet re-encrypted by `vouch keys rotate` are read with it. */
  previousKey?: () => Buffer | undefined;
}

/**
 * The running sources for a freshly read configuration. A source whose row did not change keeps
 * its breaker and health (a reload must not close an open circuit); a removed one is closed.
 */
export function reconcileSources(
  factory: SourceFactory,
  stored: StoredConfiguration['sources'],
  previous: ReadonlyMap<string, LiveSource>,
): Map<string, LiveSource> {
  const next = new Map<string, LiveSource>();
  for (const row of stored) {
    const fingerprint = JSON.stringify([row.kind, row.url, row.secretEncrypted, row.types, row.timeoutMs]);
    const old = previous.get(row.name);
    if (old && old.fingerprint === fingerprint) {
      next.set(row.name, old);
      continue;
    }
    next.set(row.name, old ? { ...old, adapter: makeAdapter(factory, row), types: row.types, timeoutMs: row.timeoutMs, fingerprint } : newSource(factory, row, fingerprint));
  }
  for (const [name, source] of previous) {
    if (next.has(name)) continue;
    source.health.close();
    metrics.upstreamCircuit.remove({ source: name });
  }
  return next;
}

function newSource(factory: SourceFactory, row: StoredConfiguration['sources'][number], fingerprint: string): LiveSource {
  const { db, log, instance } = factory;
  let health: SourceHealth | undefined;
  const breaker = new CircuitBreaker(factory.breaker, (from, to) => {
    const level = to === 'open' ? 'error' : 'warn';
    log[level]({ source: row.name, kind: row.kind, from, to }, `upstream circuit ${to}`);
    metrics.upstreamCircuit.set({ source: row.name }, CIRCUIT_VALUES[to]);
    health?.circuitChanged();
  });
  metrics.upstreamCircuit.set({ source: row.name }, CIRCUIT_VALUES.closed);
  health = new SourceHealth(db, log, row.name, instance, factory.healthWriteIntervalMs, () => ({ state: breaker.state, consecutiveFailures: breaker.consecutiveFailures }));
  return { name: row.name, kind: row.kind, types: row.types, timeoutMs: row.timeoutMs, adapter: makeAdapter(factory, row), breaker, health, fingerprint };
}

function makeAdapter(factory: SourceFactory, row: StoredConfiguration['sources'][number]): UpstreamAdapter {
  const kind = upstreamKind(row.kind);
  if (!kind) return unusable(`kind ${row.kind} is not known to this Vouch version`);
  const key = factory.key();
  if (!key) {
    factory.log.error({ source: row.name }, 'upstream credentials cannot be read: VOUCH_ENCRYPTION_KEY is not set');
    return unusable('VOUCH_ENCRYPTION_KEY is not set, so the stored credentials cannot be read');
  }
  let secret: string;
  try {
    const previous = factory.previousKey?.();
    secret = previous ? decryptSecretWithEither(key, previous, row.secretEncrypted) : decryptSecret(key, row.secretEncrypted);
  } catch (err) {
    factory.log.error({ source: row.name, reason: (err as Error).message }, 'upstream credentials cannot be read');
    return unusable((err as Error).message);
  }
  return kind.create({ url: row.url, secret });
}
