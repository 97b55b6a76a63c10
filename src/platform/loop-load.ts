import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export interface LoopLoadOptions {
  /** The shortest window a reading covers, in ms. */
  windowMs: number;
  /** Busy once a window's utilization reaches this share. */
  busyAt: number;
  /** Busy until a window's utilization falls below this share. */
  idleBelow: number;
}

/**
 * The decryption thread's thresholds (src/platform/crypto/keyring.ts). Opening a list page's
 * values is about 40 % of the event loop's work for that list, so a loop at 0.7 with them is at
 * about 0.42 without them: the idle threshold sits below that, or moving the work off the loop
 * would move it back at the next window.
 */
export const LOOP_LOAD_DEFAULTS: LoopLoadOptions = { windowMs: 100, busyAt: 0.7, idleBelow: 0.35 };

/** The event loop's utilization since the previous call (`performance.eventLoopUtilization`). */
export type UtilizationMeter = () => number;

export function eventLoopMeter(): UtilizationMeter {
  let since: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, since).utilization;
    since = now;
    return share;
  };
}

/**
 * Whether this thread's event loop has been busy lately: the share of the last window it spent
 * running code rather than waiting for something to do. Two thresholds, so that a decision that
 * lightens the loop (sending work elsewhere while busy) does not undo itself at the next window.
 * Read on demand, without a timer: a window closes at the first reading `windowMs` or more after
 * the previous one, so a loop idle for a minute reads as idle at its next call.
 */
export class LoopLoad {
  private busy = false;
  private readAt: number;

  constructor(
    private readonly options: LoopLoadOptions = LOOP_LOAD_DEFAULTS,
    private readonly meter: UtilizationMeter = eventLoopMeter(),
    private readonly now: () => number = () => performance.now(),
  ) {
    this.readAt = now();
  }

  isBusy(): boolean {
    const at = this.now();
    if (at - this.readAt >= this.options.windowMs) {
      this.readAt = at;
      const share = this.meter();
      this.busy = this.busy ? share >= this.options.idleBelow : share >= this.options.busyAt;
    }
    return this.busy;
  }
}
