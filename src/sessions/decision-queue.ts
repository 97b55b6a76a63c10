import type { Mode } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { KeyedCounts } from '../platform/keyed-counts.js';

/**
 * Who decides next on the liveness engine's one model thread (docs/sessions.md, "Limits";
 * docs/security.md, the second review). A decision costs about 1.5 s of that thread, and every
 * decision running at once shares it, so first come, first served let whoever sends the most
 * frames set everyone's wait: a free test account and one live account held every place and
 * another organization's end user waited 77 s through 15 refusals.
 *
 * So decisions run `running` at a time and the rest wait in a queue per organization, served in
 * turn (round robin), an organization with fewer decisions running first: a live end user whose
 * organization has nothing running goes before the next decision of any that has, however much
 * they send, and waits only for the decisions running. Test mode, which anyone
 * can use for free, is served only when no live decision waits, except one turn in `testEvery`
 * so that it is never starved. One organization may hold `perOrg` decisions (waiting and running)
 * and test mode `testTotal` across all organizations; past that, and after `waitMs` in the queue,
 * 503 with Retry-After, before anything is stored or a try spent: the page sends the frames again.
 */

export interface DecisionQueueLimits {
  /** Decisions on the engine at once. */
  running: number;
  /** Decisions one organization may hold, waiting and running, in both modes. */
  perOrg: number;
  /** Test-mode decisions held, waiting and running, across all organizations. */
  testTotal: number;
  /** Of consecutive turns while live decisions wait, one in this many goes to test mode. */
  testEvery: number;
  /** The longest a decision waits for its turn. */
  waitMs: number;
}

export const DECISION_LIMITS: DecisionQueueLimits = { running: 2, perOrg: 4, testTotal: 4, testEvery: 4, waitMs: 60_000 };

const RETRY_AFTER_SECONDS = 5;
const busy = (message: string) => new ApiError('SERVICE_UNAVAILABLE', message, { retryAfterSeconds: RETRY_AFTER_SECONDS });

interface Waiter {
  orgId: string;
  mode: Mode;
  start: (release: () => void) => void;
  fail: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Queues by organization, in the order they take turns: a served organization goes to the back. */
class Rotation {
  private readonly queues = new Map<string, Waiter[]>();
  /** Waiters, all organizations together. */
  size = 0;

  add(waiter: Waiter): void {
    this.size += 1;
    const queue = this.queues.get(waiter.orgId);
    if (queue) queue.push(waiter);
    else this.queues.set(waiter.orgId, [waiter]);
  }

  /**
   * The first waiter of the organization whose turn it is: in rotation order, the first of those
   * with the fewest decisions running, so that an organization arriving while others' decisions
   * run goes before their next ones.
   */
  next(runningOf: (orgId: string) => number): Waiter | undefined {
    let chosen: [string, Waiter[]] | undefined;
    for (const entry of this.queues) {
      if (!chosen || runningOf(entry[0]) < runningOf(chosen[0])) chosen = entry;
      if (runningOf(chosen[0]) === 0) break;
    }
    if (!chosen) return undefined;
    const [orgId, queue] = chosen;
    const waiter = queue.shift()!;
    this.size -= 1;
    this.queues.delete(orgId);
    if (queue.length > 0) this.queues.set(orgId, queue);
    return waiter;
  }

  remove(waiter: Waiter): void {
    const queue = this.queues.get(waiter.orgId);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) {
      queue.splice(at, 1);
      this.size -= 1;
    }
    if (queue.length === 0) this.queues.delete(waiter.orgId);
  }
}

export class DecisionQueue {
  private runningNow = 0;
  private testHeld = 0;
  private liveTurnsSinceTest = 0;
  private readonly heldByOrg = new KeyedCounts();
  private readonly runningByOrg = new KeyedCounts();
  private readonly live = new Rotation();
  private readonly test = new Rotation();

  constructor(private readonly limits: DecisionQueueLimits = DECISION_LIMITS) {}

  /**
   * Refuses at once (503) when the organization, or test mode, holds all it may: asked before a
   * frames form is read, and again by `take`.
   */
  admit(orgId: string, mode: Mode): void {
    if (this.heldByOrg.get(orgId) >= this.limits.perOrg) {
      throw busy('Many selfies of this organization are being checked right now: send these frames again in a few seconds');
    }
    if (mode === 'test' && this.testHeld >= this.limits.testTotal) {
      throw busy('Many test selfies are being checked right now: send these frames again in a few seconds');
    }
  }

  /** Waits for this decision's turn; the function returned ends it (once). */
  async take(orgId: string, mode: Mode): Promise<() => void> {
    this.admit(orgId, mode);
    this.hold(orgId, mode, 1);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        orgId,
        mode,
        start: resolve,
        fail: reject,
        timer: setTimeout(() => {
          (mode === 'live' ? this.live : this.test).remove(waiter);
          this.hold(orgId, mode, -1);
          reject(busy('Many selfies are being checked right now: send these frames again in a few seconds'));
        }, this.limits.waitMs),
      };
      waiter.timer.unref();
      (mode === 'live' ? this.live : this.test).add(waiter);
      this.pump();
    });
  }

  /** Decisions running and waiting, for tests and the bench. */
  get state(): { running: number; waitingLive: number; waitingTest: number } {
    return { running: this.runningNow, waitingLive: this.live.size, waitingTest: this.test.size };
  }

  private hold(orgId: string, mode: Mode, change: 1 | -1): void {
    if (change === 1) this.heldByOrg.add(orgId);
    else this.heldByOrg.remove(orgId);
    if (mode === 'test') this.testHeld += change;
  }

  private pump(): void {
    while (this.runningNow < this.limits.running) {
      const waiter = this.nextWaiter();
      if (!waiter) return;
      clearTimeout(waiter.timer);
      this.runningNow += 1;
      this.runningByOrg.add(waiter.orgId);
      let ended = false;
      waiter.start(() => {
        if (ended) return;
        ended = true;
        this.runningNow -= 1;
        this.runningByOrg.remove(waiter.orgId);
        this.hold(waiter.orgId, waiter.mode, -1);
        this.pump();
      });
    }
  }

  private nextWaiter(): Waiter | undefined {
    const runningOf = (orgId: string) => this.runningByOrg.get(orgId);
    const testsTurn = this.test.size > 0 && (this.live.size === 0 || this.liveTurnsSinceTest >= this.limits.testEvery - 1);
    if (testsTurn) {
      this.liveTurnsSinceTest = 0;
      return this.test.next(runningOf);
    }
    const waiter = this.live.next(runningOf);
    if (waiter) this.liveTurnsSinceTest += 1;
    return waiter;
  }
}
