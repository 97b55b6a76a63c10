import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { DB } from '../../platform/db/schema.js';
import { deriveKey, loadEncryptionKey } from '../../platform/encryption.js';
import { ApiError } from '../../platform/errors.js';
import { metrics } from '../../platform/metrics.js';
import type { IdentityType, NinRecord, RecordOf } from '../records.js';
import { REGISTRY_UNAVAILABLE, type Cover, type CoveredFind, type LookupOptions, type Registry } from '../registry/registry.js';
import { UpstreamFailure, type FaceMatchRequest, type FaceMatchType, type ProviderFaceMatch, type UpstreamRecordOf, type UpstreamType } from './adapter.js';
import { askSource, askSourceFace } from './attempt.js';
import { DEFAULT_BREAKER, type BreakerSettings } from './breaker.js';
import { UpstreamCache } from './cache.js';
import { faceMatchTypesOf } from './kinds.js';
import { reconcileSources, type LiveSource } from './sources.js';
import { configVersion, EMBEDDED, loadConfiguration } from './store.js';

export interface RouterSettings {
  breaker: BreakerSettings;
  /** How often the configuration version is polled: a CLI change is seen within this. */
  reloadIntervalMs: number;
  /** Health rows are written at most this often per source (and at once on a circuit change). */
  healthWriteIntervalMs: number;
  /** Retry-After of a 503 when no circuit is open to say better. */
  retryAfterSeconds: number;
  /** How long whether the embedded registry holds records of a type is remembered (a count per outage lookup otherwise). */
  holdingsTtlMs: number;
}

export const DEFAULT_ROUTER_SETTINGS: RouterSettings = {
  breaker: DEFAULT_BREAKER,
  reloadIntervalMs: 2_000,
  healthWriteIntervalMs: 1_000,
  retryAfterSeconds: 5,
  holdingsTtlMs: 10_000,
};

const PURGE_INTERVAL_MS = 60_000;

/**
 * The organization's face-match provider could not decide (it failed, timed out, its circuit is
 * open, or this server does not know it): 503 with Retry-After where no local fallback applies.
 */
export class FaceMatchUnavailable extends ApiError {
  constructor(retryAfterSeconds: number) {
    super('SERVICE_UNAVAILABLE', 'The face-match provider is unavailable: it failed or timed out. Please retry later', { retryAfterSeconds });
    this.name = 'FaceMatchUnavailable';
  }
}

export interface RouterOptions {
  db: Kysely<DB>;
  config: Pick<Config, 'encryptionKey' | 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'encryptionKeyPrevious'>>;
  log: FastifyBaseLogger;
  /** The embedded registry, the source named `embedded`. */
  embedded: EmbeddedSource;
  settings?: Partial<RouterSettings> | undefined;
}

/** The embedded registry as the router needs it: its lookups, with the wallet check too, and whether it holds any record of a type. */
export interface EmbeddedSource extends Registry {
  holds(type: UpstreamType): Promise<boolean>;
  findIfCovered<T extends IdentityType>(type: T, key: string, cover: Cover): Promise<CoveredFind<RecordOf[T]>>;
}

interface Routing {
  version: string;
  sources: Map<string, LiveSource>;
  orders: Map<UpstreamType, string[]>;
  ttls: Map<UpstreamType, number>;
}

/**
 * The live registry when upstreams are configured: per lookup type, the cache (when the type has
 * a TTL), then each source in order, failing over past sources that fail, time out or have an
 * open circuit. A "not found" from a source that answered is the answer, with one exception:
 * after an earlier source failed, the embedded registry's "not found" counts only if it holds
 * records of the type (an empty table knows nobody; the failed provider might have). When no
 * source could answer, 503 with Retry-After; the caller (IdentityLookups) then records and
 * charges nothing.
 */
export class UpstreamRouter implements Registry {
  private routing: Routing = { version: '', sources: new Map(), orders: new Map(), ttls: new Map() };
  private readonly settings: RouterSettings;
  private readonly instance = `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private key: Buffer | undefined;
  private cache: UpstreamCache | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastPurge = 0;
  private reloading: Promise<void> | undefined;
  private readonly holdings = new Map<UpstreamType, { holds: boolean; until: number }>();

  private constructor(private readonly options: RouterOptions) {
    this.settings = { ...DEFAULT_ROUTER_SETTINGS, ...options.settings };
  }

  static async start(options: RouterOptions): Promise<UpstreamRouter> {
    const router = new UpstreamRouter(options);
    await router.reload();
    router.timer = setInterval(() => void router.poll(), router.settings.reloadIntervalMs);
    router.timer.unref();
    return router;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.reloading;
    for (const source of this.routing.sources.values()) source.health.close();
  }

  /** Writes every source's pending health now (tests; `status` otherwise sees it within a second). */
  async flushHealth(): Promise<void> {
    await Promise.all([...this.routing.sources.values()].map((source) => source.health.flush()));
  }

  find<T extends IdentityType>(type: T, key: string, options?: LookupOptions): Promise<RecordOf[T] | undefined> {
    return this.lookup(type, key, options) as Promise<RecordOf[T] | undefined>;
  }

  findNinByPhone(phone: string, options?: LookupOptions): Promise<NinRecord | undefined> {
    return this.lookup('nin_phone', phone, options);
  }

  /**
   * Only when the embedded registry is the type's one source and no cache is kept for it (no
   * upstream configured for the type: the router then asks nothing else): the wallet check goes
   * with the embedded read. Otherwise undefined, and the caller checks the wallet before `find`
   * can reach an upstream or the cache.
   */
  findIfCovered<T extends IdentityType>(type: T, key: string, cover: Cover, options?: LookupOptions): Promise<CoveredFind<RecordOf[T]>> | undefined {
    if (this.routing.ttls.get(type) || this.orderOf(type).some((name) => name !== EMBEDDED)) return undefined;
    return this.options.embedded.findIfCovered(type, key, cover).then((answer) => {
      if (answer.covered) options?.onAnswer?.(EMBEDDED);
      return answer;
    });
  }

  /** The sources of a type in the order they are asked. */
  orderOf(type: UpstreamType): string[] {
    const explicit = this.routing.orders.get(type);
    if (explicit) return explicit;
    const upstreams = [...this.routing.sources.values()].filter((source) => source.types.includes(type)).map((source) => source.name);
    return [...upstreams, EMBEDDED];
  }

  private async lookup<T extends UpstreamType>(type: T, key: string, options: LookupOptions = {}): Promise<UpstreamRecordOf[T] | undefined> {
    const { log, embedded } = this.options;
    const ttl = this.routing.ttls.get(type);
    const cache = ttl ? this.cache : undefined;
    if (cache && !options.noCache) {
      const cached = await cache.get(type, key, new Date());
      if (cached) {
        options.onAnswer?.('cache');
        return cached as UpstreamRecordOf[T];
      }
    }
    const failed: LiveSource[] = [];
    let embeddedHeldNone = false;
    for (const name of this.orderOf(type)) {
      if (name === EMBEDDED) {
        const record = (await (type === 'nin_phone' ? embedded.findNinByPhone(key) : embedded.find(type as IdentityType, key))) as UpstreamRecordOf[T] | undefined;
        if (record !== undefined || failed.length === 0 || (await this.embeddedHolds(type))) {
          options.onAnswer?.(EMBEDDED);
          return record;
        }
        embeddedHeldNone = true;
        continue;
      }
      const source = this.routing.sources.get(name);
      if (!source) continue;
      failed.push(source);
      if (!source.breaker.allow(Date.now())) continue;
      const started = performance.now();
      try {
        const record = await askSource(source, type, key);
        metrics.upstreamLookups.inc({ source: name, outcome: record === undefined ? 'not_found' : 'found' });
        this.answered(source, started, record !== undefined);
        if (record !== undefined && cache && ttl) {
          await cache.put(type, key, record, source.name, new Date(Date.now() + ttl * 1000)).catch((err: Error) => log.warn({ source: name, err: err.message }, 'upstream cache write failed'));
        }
        options.onAnswer?.(source.name);
        return record;
      } catch (err) {
        if (!(err instanceof UpstreamFailure)) throw err;
        metrics.upstreamLookups.inc({ source: name, outcome: err.kind });
        this.failedOn(source, started, err, type, 'upstream lookup failed');
      }
    }
    throw this.unavailable(type, failed, embeddedHeldNone);
  }

  /** The identities the named source can compare selfies with (`faceMatchTypesOf`); empty for a source this server does not know. */
  faceMatchTypesOf(name: string): readonly FaceMatchType[] {
    const source = this.routing.sources.get(name);
    return source ? faceMatchTypesOf(source.kind, source.types) : [];
  }

  /**
   * One face match asked of one named source, through its breaker, deadline, retry rule and
   * health as a lookup is: the provider's verdict, or undefined for its "no such identity". A
   * failure, an open circuit or a source this server does not know throws FaceMatchUnavailable
   * (503 with Retry-After, unless the caller falls back to the local engine).
   */
  async compareFace(name: string, request: Omit<FaceMatchRequest, 'signal'>): Promise<ProviderFaceMatch | undefined> {
    const source = this.routing.sources.get(name);
    if (!source || !this.faceMatchTypesOf(name).includes(request.type)) throw this.faceUnavailable(name, request.type, source);
    if (!source.breaker.allow(Date.now())) throw this.faceUnavailable(name, request.type, source);
    const started = performance.now();
    try {
      const verdict = await askSourceFace(source, request);
      metrics.upstreamFaceMatches.inc({ source: name, outcome: verdict === undefined ? 'not_found' : verdict.match ? 'match' : 'no_match' });
      this.answered(source, started, verdict !== undefined);
      return verdict;
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      metrics.upstreamFaceMatches.inc({ source: name, outcome: err.kind });
      this.failedOn(source, started, err, request.type, 'upstream face match failed');
      throw this.faceUnavailable(name, request.type, source);
    }
  }

  /** A source's answer (found or not): health, then the breaker. */
  private answered(source: LiveSource, started: number, found: boolean): void {
    const elapsed = performance.now() - started;
    metrics.upstreamDuration.observe({ source: source.name }, elapsed / 1000);
    // Health first: a circuit change writes the health row at once, and it must hold this call.
    source.health.answered(elapsed, found);
    source.breaker.success();
  }

  /** A source's failure: health, the breaker, and one warning that names no key, photo or record. */
  private failedOn(source: LiveSource, started: number, err: UpstreamFailure, type: UpstreamType, message: string): void {
    const elapsed = performance.now() - started;
    const latencyMs = Math.round(elapsed);
    metrics.upstreamDuration.observe({ source: source.name }, elapsed / 1000);
    source.health.failed(err.kind, latencyMs, new Date());
    source.breaker.failure(Date.now());
    // The reason says what was wrong with the answer, never the key or the record.
    this.options.log.warn({ source: source.name, kind: source.kind, type, failure: err.kind, reason: err.message, latencyMs }, message);
  }

  private faceUnavailable(name: string, type: FaceMatchType, source: LiveSource | undefined): FaceMatchUnavailable {
    const open = source?.breaker.remainingMs(Date.now()) ?? 0;
    const retryAfterSeconds = open > 0 ? Math.max(1, Math.ceil(open / 1000)) : this.settings.retryAfterSeconds;
    // A failure was logged where it happened and an open circuit when it opened: only a source
    // this server does not know (a configuration not yet reloaded, or one it cannot use) is news.
    if (!source) this.options.log.error({ source: name, type }, 'face matches are routed to an upstream this server does not know');
    return new FaceMatchUnavailable(retryAfterSeconds);
  }

  /** Whether the embedded registry holds any record of the type, remembered for `holdingsTtlMs`. */
  private async embeddedHolds(type: UpstreamType): Promise<boolean> {
    const now = Date.now();
    const known = this.holdings.get(type);
    if (known && known.until > now) return known.holds;
    const holds = await this.options.embedded.holds(type);
    this.holdings.set(type, { holds, until: now + this.settings.holdingsTtlMs });
    return holds;
  }

  private unavailable(type: UpstreamType, sources: LiveSource[], embeddedHeldNone: boolean): ApiError {
    const now = Date.now();
    const open = sources.map((source) => source.breaker.remainingMs(now)).filter((ms) => ms > 0);
    const retryAfterSeconds = open.length === sources.length && open.length > 0 ? Math.max(1, Math.ceil(Math.min(...open) / 1000)) : this.settings.retryAfterSeconds;
    // embeddedHeldNone: the embedded registry was asked too, but holds no record of the type, so its "not found" was no answer.
    this.options.log.error({ type, sources: sources.map((source) => source.name), embeddedHeldNone, retryAfterSeconds }, 'no upstream could answer');
    return new ApiError('SERVICE_UNAVAILABLE', REGISTRY_UNAVAILABLE, { retryAfterSeconds });
  }

  private async poll(): Promise<void> {
    try {
      if ((await configVersion(this.options.db)) !== this.routing.version) await this.reload();
      if (this.cache && Date.now() - this.lastPurge > PURGE_INTERVAL_MS) {
        this.lastPurge = Date.now();
        await this.cache.purge(new Date());
      }
    } catch (err) {
      this.options.log.warn({ err: (err as Error).message }, 'upstream configuration not reloaded');
    }
  }

  /**
   * Reads the configuration now, after any read already under way, which may have started before
   * the caller's change (tests, after they change the sources: a poll's timing is not a wait).
   */
  async catchUp(): Promise<void> {
    await this.reloading;
    await this.reload();
  }

  /** Reads the configuration and swaps it in whole; concurrent calls share one read. */
  reload(): Promise<void> {
    this.reloading ??= this.read().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  private async read(): Promise<void> {
    const { db, log, config } = this.options;
    const stored = await loadConfiguration(db);
    if (stored.sources.length > 0 && !this.key) {
      this.key = loadEncryptionKey(config, { create: false });
      if (this.key) this.cache = new UpstreamCache(db, deriveKey(this.key, 'upstream-cache'));
    }
    const sources = reconcileSources(
      { db, log, instance: this.instance, breaker: this.settings.breaker, healthWriteIntervalMs: this.settings.healthWriteIntervalMs, key: () => this.key, previousKey: () => config.encryptionKeyPrevious },
      stored.sources,
      this.routing.sources,
    );
    this.routing = { version: stored.version, sources, orders: stored.orders, ttls: stored.ttls };
    if (stored.sources.length > 0) log.info({ sources: stored.sources.map((source) => source.name) }, 'upstream configuration loaded');
  }
}
