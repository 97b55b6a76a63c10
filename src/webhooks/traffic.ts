/**
 * Per-endpoint fairness and circuit breaking for one worker process. Endpoints are keyed by URL
 * (two organizations that share a URL share its slots and its breaker). The state lives in this
 * process only: each worker applies the limits to its own attempts, and tells the others only
 * through the deliveries it moves later (see claimDeliveries).
 */

export interface TrafficSettings {
  /** Deliveries in flight at once in this worker. */
  concurrency: number;
  /** Deliveries in flight to one URL while other URLs have deliveries waiting. */
  endpointConcurrency: number;
  /** An attempt in flight longer than this marks its URL slow: it keeps its share but borrows no slots. */
  slowAttemptMs: number;
  timeoutMs: number;
  /** Consecutive failed attempts to one URL that open its breaker. */
  breakerThreshold: number;
  /** How long an open breaker holds a URL's deliveries before one probe may go. */
  breakerCooldownMs: number;
}

/** What a claim may do with one URL's due deliveries; a URL without a plan gets the share and may borrow. */
export interface EndpointPlan {
  url: string;
  /** Deliveries it may take within the URL's share. */
  quota: number;
  /**
   * Null: it may borrow slots beyond its quota. Otherwise (slow, or its breaker open) it takes
   * no more than its quota, and its due deliveries beyond it move this much later, attempt not
   * counted.
   */
  deferMs: number | null;
}

export type BreakerChange =
  | { kind: 'opened'; failures: number }
  /** After an outage; its deliveries held until up to `heldForMs` from now may go at once. */
  | { kind: 'closed'; heldForMs: number };

interface EndpointState {
  /** Start times of this URL's attempts in flight. */
  starts: number[];
  consecutiveFailures: number;
  breaker: 'closed' | 'open' | 'probing';
  /** While open: when the cool-down ends and a probe may go. */
  openUntil: number;
  /** The latest time its deliveries were held until during this outage. */
  heldUntil: number;
}

/** Stop remembering idle, healthy URLs beyond this many. */
const MAX_TRACKED = 10_000;

export class EndpointTraffic {
  private readonly endpoints = new Map<string, EndpointState>();
  readonly share: number;

  constructor(private readonly settings: TrafficSettings) {
    this.share = Math.max(1, Math.min(settings.endpointConcurrency, settings.concurrency));
  }

  /**
   * How many deliveries a claim may take whatever their URL's share, given `inFlight`: borrowing
   * never takes the last `share` slots, which stay for URLs within their share, so a newly due
   * delivery of another organization finds a slot at once unless those are taken too.
   */
  borrowable(inFlight: number): number {
    return Math.max(0, this.settings.concurrency - this.share - inFlight);
  }

  /** The plans of the URLs whose limits differ from the default: in flight, slow or broken. */
  plan(now: number): EndpointPlan[] {
    const plans: EndpointPlan[] = [];
    const { breakerCooldownMs, slowAttemptMs, timeoutMs } = this.settings;
    for (const [url, state] of this.endpoints) {
      const inFlight = state.starts.length;
      if (state.breaker === 'open' && now < state.openUntil) {
        plans.push(this.hold(url, state, now, state.openUntil - now));
      } else if (state.breaker !== 'closed') {
        // Cool-down over: one probe (none while one, or an attempt from before, is still out).
        const probe = state.breaker === 'open' && inFlight === 0 ? 1 : 0;
        plans.push({ ...this.hold(url, state, now, breakerCooldownMs), quota: probe });
      } else if (inFlight > 0) {
        const slow = now - Math.min(...state.starts) > slowAttemptMs;
        // A slow URL's extra deliveries step aside until its attempts in flight end, at the latest
        // by their timeout, so that the deliveries queued behind them are seen and sent.
        plans.push({ url, quota: Math.max(0, this.share - inFlight), deferMs: slow ? timeoutMs : null });
      }
    }
    return plans;
  }

  private hold(url: string, state: EndpointState, now: number, ms: number): EndpointPlan {
    const deferMs = Math.max(1, Math.ceil(ms));
    state.heldUntil = Math.max(state.heldUntil, now + deferMs);
    return { url, quota: 0, deferMs };
  }

  /**
   * A breaker another run of a worker left open (webhook_circuits): held until `openUntil`, then
   * one probe decides, as if this worker had opened it.
   */
  restore(url: string, openUntil: number, failures: number): void {
    const state = this.state(url);
    state.breaker = 'open';
    state.openUntil = openUntil;
    state.consecutiveFailures = Math.max(state.consecutiveFailures, failures);
  }

  /** An attempt to `url` starts; after a cool-down, the first one is the probe. */
  started(url: string, now: number): void {
    const state = this.state(url);
    state.starts.push(now);
    if (state.breaker === 'open' && now >= state.openUntil) state.breaker = 'probing';
  }

  /** An attempt to `url` that started at `startedAt` ended; says when the breaker opened or closed. */
  finished(url: string, startedAt: number, delivered: boolean, now: number): BreakerChange | undefined {
    const state = this.state(url);
    const index = state.starts.indexOf(startedAt);
    if (index >= 0) state.starts.splice(index, 1);
    let change: BreakerChange | undefined;
    if (delivered) {
      // Any answer that worked closes the breaker: a probe, or an attempt from before the outage.
      if (state.breaker !== 'closed') change = { kind: 'closed', heldForMs: Math.max(0, state.heldUntil - now) };
      state.consecutiveFailures = 0;
      state.breaker = 'closed';
      state.heldUntil = 0;
    } else {
      state.consecutiveFailures++;
      const opens = state.breaker === 'probing' || (state.breaker === 'closed' && state.consecutiveFailures >= this.settings.breakerThreshold);
      if (opens) {
        state.breaker = 'open';
        state.openUntil = now + this.settings.breakerCooldownMs;
        change = { kind: 'opened', failures: state.consecutiveFailures };
      }
    }
    if (state.starts.length === 0 && state.breaker === 'closed' && state.consecutiveFailures === 0) this.endpoints.delete(url);
    return change;
  }

  private state(url: string): EndpointState {
    let state = this.endpoints.get(url);
    if (!state) {
      if (this.endpoints.size >= MAX_TRACKED) this.forgetIdle();
      state = { starts: [], consecutiveFailures: 0, breaker: 'closed', openUntil: 0, heldUntil: 0 };
      this.endpoints.set(url, state);
    }
    return state;
  }

  /** Drops URLs with nothing in flight and a closed breaker (their failure counts start again). */
  private forgetIdle(): void {
    for (const [url, state] of this.endpoints) {
      if (state.starts.length === 0 && state.breaker === 'closed') this.endpoints.delete(url);
    }
  }
}
