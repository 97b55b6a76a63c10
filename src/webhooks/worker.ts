import type { BaseLogger } from 'pino';
import type { Database } from '../platform/db/database.js';
import { endpointLabel, metrics } from '../platform/metrics.js';
import { DELIVERY_TIMEOUT_MS, WebhookSender, type AttemptResult, type ClaimedDelivery } from './delivery.js';
import { claimDeliveries, recordResults, releaseLeases, renewLeases, resumeEndpoint, RETRY_SCHEDULE_MS, type ClaimResult } from './queue.js';
import { openCircuits, recordCircuitClosed, recordCircuitOpened } from './circuits.js';
import { DELIVERY_CHANNEL } from './events.js';
import { EndpointTraffic, type BreakerChange } from './traffic.js';

/** The logging the worker needs: Fastify's logger (inside `serve`) or a pino logger (`vouch worker`). */
export type WorkerLogger = Pick<BaseLogger, 'info' | 'warn' | 'error'>;

export interface DeliverySettings {
  /** Deliveries in flight at once (and keep-alive sockets per receiver). */
  concurrency: number;
  /**
   * Deliveries in flight to one URL while other URLs have deliveries waiting. A URL alone in the
   * queue may borrow idle slots beyond it, but never the last `endpointConcurrency` slots.
   */
  endpointConcurrency: number;
  /** A URL with an attempt in flight longer than this is slow: it keeps its share and borrows nothing. */
  slowAttemptMs: number;
  /** Consecutive failed attempts to one URL (any failure: timeout, network error, non-2xx) that open its breaker. */
  breakerThreshold: number;
  /** How long an open breaker holds the URL's deliveries (attempts not counted) before one probe decides. */
  breakerCooldownMs: number;
  /**
   * How long a claim holds a delivery before another worker may take it. The worker renews the
   * lease every third of it while the attempt is in flight and until its outcome is written, so
   * an attempt may outlast it; a killed worker stops renewing, and its deliveries go to another
   * worker within about this long (docs/webhooks.md, "Leases").
   */
  leaseMs: number;
  /** Fallback for a missed NOTIFY and the clock for retries that come due. */
  pollIntervalMs: number;
  timeoutMs: number;
  retrySchedule: readonly number[];
  allowPrivateUrls: boolean;
  /** On stop, how long deliveries in flight may finish before they are cut off and handed back. */
  stopGraceMs: number;
}

export const DEFAULT_DELIVERY_SETTINGS: Omit<DeliverySettings, 'allowPrivateUrls'> = {
  concurrency: 80,
  endpointConcurrency: 16,
  slowAttemptMs: 1_000,
  breakerThreshold: 10,
  breakerCooldownMs: 60_000,
  leaseMs: 5_000,
  pollIntervalMs: 1_000,
  timeoutMs: DELIVERY_TIMEOUT_MS,
  retrySchedule: RETRY_SCHEDULE_MS,
  stopGraceMs: 3_000,
};

/** Claims are capped so one statement stays short; results are written in batches up to this size too. */
const MAX_BATCH = 500;
const RESULT_WRITE_TRIES = 3;

/** Workers running per database in this process. */
const runningOn = new WeakMap<object, number>();

/**
 * What the last claim left behind: nothing due; a full batch (more may be due); or deliveries
 * it could not take because their URLs had used their slots.
 */
type Backlog = 'none' | 'full' | 'capped';

/**
 * The delivery loop: claim due deliveries into free slots, send them concurrently, and write
 * their outcomes in batches. Each claimed delivery is sent at once, and its lease is renewed
 * until its outcome is written. While the queue has a backlog it claims only when a quarter of the slots
 * are free (or, when URLs were capped, a quarter has been freed since), so claims stay batched;
 * otherwise, and for new deliveries of other URLs while some are capped, it claims whenever a
 * NOTIFY or the poll says so. EndpointTraffic decides how many slots each URL may take and holds
 * the deliveries of URLs whose breaker is open.
 */
export class DeliveryWorker {
  private readonly sender: WebhookSender;
  private readonly minClaim: number;
  private readonly traffic: EndpointTraffic;
  private inFlight = 0;
  /** Attempts ended since the last claim. */
  private freed = 0;
  private readonly active = new Set<Promise<void>>();
  private stopping = false;
  /** Stop's grace is over: attempts that end now were cut off, and are handed back. */
  private cuttingOff = false;
  private woken = true;
  private backlog: Backlog = 'none';
  private wakeUp: (() => void) | undefined;
  private results: AttemptResult[] = [];
  private flushing: Promise<void> | undefined;
  /** The claim statement in flight, if any: a resume after a breaker closes waits for it. */
  private claiming: Promise<ClaimResult> | undefined;
  private loop: Promise<void> | undefined;
  /** Breaker changes written to webhook_circuits one after another, so a close never lands before its open. */
  private circuitWrites: Promise<void> = Promise.resolve();
  private unlisten: (() => Promise<void>) | undefined;
  /** Claims this worker holds (delivery id -> attempt): sent or being sent, outcome not yet written. Their leases are renewed. */
  private readonly held = new Map<number, number>();
  private renewal: NodeJS.Timeout | undefined;
  private renewing = false;

  constructor(
    private readonly database: Database,
    private readonly settings: DeliverySettings,
    private readonly logger: WorkerLogger,
  ) {
    this.sender = new WebhookSender({ allowPrivateUrls: settings.allowPrivateUrls, timeoutMs: settings.timeoutMs, maxSockets: settings.concurrency });
    this.minClaim = Math.max(1, Math.floor(settings.concurrency / 4));
    this.traffic = new EndpointTraffic(settings);
  }

  async start(): Promise<void> {
    const workers = runningOn.get(this.database.db) ?? 0;
    runningOn.set(this.database.db, workers + 1);
    // The embedded database belongs to this one process (data-folder lock), so a lease held when
    // no worker runs here was left by a killed process: void it rather than wait it out.
    try {
      if (this.database.kind === 'pglite' && workers === 0) await releaseLeases(this.database.db);
      await this.restoreCircuits();
      this.unlisten = await this.database.listen(DELIVERY_CHANNEL, () => {
        this.woken = true;
        this.wake();
      });
      this.renewal = setInterval(() => this.renewLeases(), Math.max(50, Math.floor(this.settings.leaseMs / 3)));
      this.renewal.unref();
    } catch (err) {
      runningOn.set(this.database.db, (runningOn.get(this.database.db) ?? 1) - 1);
      this.sender.close();
      throw err;
    }
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.wake();
    await this.loop;
    await this.unlisten?.().catch(() => {});
    if (this.active.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.settings.stopGraceMs)));
      await Promise.race([Promise.all(this.active), grace]);
      clearTimeout(timer);
    }
    // Whatever is still in flight is cut off now (sockets destroyed) and handed back: due again at
    // once, its attempt not counted, rather than waiting out a retry delay for the stop's sake.
    this.cuttingOff = true;
    this.sender.close();
    await Promise.all(this.active);
    while (this.flushing) await this.flushing;
    clearInterval(this.renewal);
    runningOn.set(this.database.db, (runningOn.get(this.database.db) ?? 1) - 1);
  }

  /**
   * Breakers left open by an earlier run (or another worker) keep holding their URLs here until
   * their probe time; rows of URLs no endpoint uses any more are dropped.
   */
  private async restoreCircuits(): Promise<void> {
    const db = this.database.db;
    await db.deleteFrom('webhook_circuits').where(({ not, exists, selectFrom }) => not(exists(selectFrom('webhook_endpoints as e').select('e.url').whereRef('e.url', '=', 'webhook_circuits.url')))).execute();
    for (const circuit of await openCircuits(db)) this.traffic.restore(circuit.url, circuit.probeAt.getTime(), circuit.failures);
  }

  private wake(): void {
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      if (this.shouldClaim()) await this.claim();
      else await this.idle();
    }
  }

  private shouldClaim(): boolean {
    const free = this.settings.concurrency - this.inFlight;
    if (free <= 0) return false;
    if (this.backlog === 'full') return free >= this.minClaim || this.inFlight === 0;
    if (this.backlog === 'capped') return this.woken || this.freed >= this.minClaim;
    return this.woken;
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(() => {
        this.woken = true;
        done();
      }, this.settings.pollIntervalMs);
      this.wakeUp = done;
    });
  }

  private async claim(): Promise<void> {
    this.woken = false;
    this.freed = 0;
    const limit = Math.min(this.settings.concurrency - this.inFlight, MAX_BATCH);
    const plans = this.traffic.plan(Date.now());
    // While some URL's deliveries are being moved aside, look further down the queue for others
    // (each deferral makes the loop claim again at once, so a long run of them goes in rounds).
    const window = plans.some((plan) => plan.deferMs !== null) ? Math.min(MAX_BATCH, Math.max(4 * limit, 100)) : limit;
    let claimed: ClaimResult;
    const claiming = claimDeliveries(this.database.db, {
      limit,
      window,
      leaseMs: this.settings.leaseMs,
      share: this.traffic.share,
      borrow: this.traffic.borrowable(this.inFlight),
      plans,
    });
    this.claiming = claiming;
    try {
      claimed = await claiming;
    } catch (err) {
      this.logger.error({ err }, 'claiming webhook deliveries failed');
      this.backlog = 'none';
      await this.idle();
      return;
    } finally {
      if (this.claiming === claiming) this.claiming = undefined;
    }
    const { deliveries, deferred, more } = claimed;
    this.backlog = deliveries.length === limit ? 'full' : more ? 'capped' : 'none';
    // Deliveries moved aside may have uncovered others: look again.
    if (deferred > 0) this.woken = true;
    for (const delivery of deliveries) this.dispatch(delivery);
  }

  private dispatch(delivery: ClaimedDelivery): void {
    this.inFlight++;
    this.held.set(delivery.id, delivery.attempt);
    const { url } = delivery;
    const startedAt = Date.now();
    if (url) this.traffic.started(url, startedAt);
    let recorded = false;
    const task = this.sender
      .send(delivery)
      .then((result) => {
        if (this.cuttingOff && !result.delivered) {
          this.results.push({ ...result, error: `cut off by the worker's stop (${result.error}); handed back, not counted`, handedBack: true });
          recorded = true;
          this.flush();
          return;
        }
        if (!result.delivered && delivery.attempt > this.settings.retrySchedule.length) {
          this.logger.warn({ deliveryId: delivery.id, messageId: delivery.messageId, error: result.error }, 'webhook delivery failed for good');
        }
        this.results.push(result);
        recorded = true;
        this.flush();
        if (url) {
          metrics.webhookAttempts.inc({ endpoint: endpointLabel(url), outcome: result.delivered ? 'delivered' : 'failed' });
          this.onBreakerChange(url, this.traffic.finished(url, startedAt, result.delivered, Date.now()), result);
        }
      })
      .catch((err: unknown) => {
        this.logger.error({ err, deliveryId: delivery.id }, 'webhook attempt crashed');
        // Nothing to write: let the lease run out, and another claim send it again.
        if (!recorded && this.held.get(delivery.id) === delivery.attempt) this.held.delete(delivery.id);
      })
      .finally(() => {
        this.inFlight--;
        this.freed++;
        this.active.delete(task);
        this.wake();
      });
    this.active.add(task);
  }

  private onBreakerChange(url: string, change: BreakerChange | undefined, result: AttemptResult): void {
    if (!change) return;
    // The origin only: a path or query can carry the customer's own token.
    const endpoint = endpointLabel(url);
    metrics.webhookCircuitOpen.set({ endpoint }, change.kind === 'opened' ? 1 : 0);
    this.recordCircuit(url, change, result);
    if (change.kind === 'opened') {
      this.logger.warn(
        { endpoint, failures: change.failures, cooldownMs: this.settings.breakerCooldownMs },
        'webhook endpoint keeps failing: holding its deliveries until the cool-down ends',
      );
      return;
    }
    this.logger.info({ endpoint }, 'webhook endpoint answers again: resuming its deliveries');
    if (change.heldForMs <= 0) return;
    // The hold was planned on this clock but written by the claim's statement a moment later (a
    // busy database: hundreds of ms), so its deliveries can come due just past heldForMs. A
    // cool-down's slack takes those too, rather than leaving them for one more cool-down.
    // A claim in flight was planned while the breaker held this URL and may still defer its
    // deliveries by a cool-down: resume after it has written, or it would undo the resume.
    const claimInFlight = this.claiming?.then(
      () => undefined,
      () => undefined,
    );
    const resume = Promise.resolve(claimInFlight)
      .then(() => resumeEndpoint(this.database.db, url, change.heldForMs + this.settings.breakerCooldownMs))
      .then(() => {
        this.woken = true;
        this.wake();
      })
      // Not lost: the held deliveries come due when their hold ends.
      .catch((err: unknown) => this.logger.error({ err, endpoint }, 'resuming the held webhook deliveries failed'))
      .finally(() => this.active.delete(resume));
    this.active.add(resume);
  }

  /** Tells the console (webhook_circuits) that the breaker of `url` opened or closed; a failed write is logged, never fatal. */
  private recordCircuit(url: string, change: BreakerChange, result: AttemptResult): void {
    const db = this.database.db;
    const write = (this.circuitWrites = this.circuitWrites
      .then(() =>
        change.kind === 'opened'
          ? recordCircuitOpened(db, {
              url,
              probeAt: new Date(Date.now() + this.settings.breakerCooldownMs),
              failures: change.failures,
              lastStatusCode: result.statusCode,
              lastError: result.error,
            })
          : recordCircuitClosed(db, url),
      )
      .catch((err: unknown) => this.logger.error({ err, endpoint: endpointLabel(url) }, 'recording the webhook circuit state failed'))
      .finally(() => this.active.delete(write)));
    this.active.add(write);
  }

  /**
   * Extends the leases of the claims this worker holds; one renewal at a time. A renewal that
   * fails is logged: the next one, a third of a lease later, may still be in time.
   */
  private renewLeases(): void {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    const held = [...this.held].map(([id, attempt]) => ({ id, attempt }));
    const renewal = renewLeases(this.database.db, held, this.settings.leaseMs)
      .then(() => undefined)
      .catch((err: unknown) => this.logger.warn({ err, deliveries: held.length }, 'renewing webhook delivery leases failed'))
      .finally(() => {
        this.renewing = false;
        this.active.delete(renewal);
      });
    this.active.add(renewal);
  }

  /** One writer at a time; results that arrive meanwhile go into its next batch (group commit). */
  private flush(): void {
    if (this.flushing) return;
    this.flushing = this.writeResults().finally(() => {
      this.flushing = undefined;
      if (this.results.length > 0) this.flush();
    });
  }

  private async writeResults(): Promise<void> {
    while (this.results.length > 0) {
      const batch = this.results.splice(0, MAX_BATCH);
      for (let tries = 1; ; tries++) {
        try {
          await recordResults(this.database.db, batch, this.settings.retrySchedule);
          break;
        } catch (err) {
          if (tries >= RESULT_WRITE_TRIES) {
            // No longer renewed, the leases run out and these deliveries are sent again: at least once, never lost.
            this.logger.error({ err, deliveries: batch.length }, 'recording webhook attempts failed; they will be retried');
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 500 * tries));
        }
      }
      for (const { delivery } of batch) {
        if (this.held.get(delivery.id) === delivery.attempt) this.held.delete(delivery.id);
      }
    }
  }
}
