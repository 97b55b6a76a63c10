import { LookupBusy } from '../lookups.js';

/** Face matches that may be in progress at once (config: VOUCH_FACE_MATCH_PER_ORG, VOUCH_FACE_MATCH_PER_PROCESS). */
export interface FaceMatchCaps {
  perOrg: number;
  perProcess: number;
}

/** A match holds the face-model thread 0.1–0.4 s: a place is usually free again within a second. */
const RETRY_AFTER_SECONDS = 1;
/** How often a waiting match looks for a free place. */
const POLL_MS = 50;

/**
 * Counts the face matches in progress in this process, per organization and in all. A match
 * beyond either cap is refused at once (429 for the organization's own cap, 503 when the process
 * is full, both with Retry-After) instead of waiting in a queue without bound behind the one face
 * model thread: one organization cannot make every other one's matches slow.
 */
export class FaceMatchCapacity {
  private readonly byOrg = new Map<string, number>();
  private total = 0;

  constructor(private readonly caps: FaceMatchCaps) {}

  /** Runs the organization's match in a place of its own, given back however the work ends. */
  async run<T>(orgId: string, work: () => Promise<T>): Promise<T> {
    const release = this.reserve(orgId);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /**
   * Takes a place for the organization now, or refuses (429 past its own cap, 503 when the process
   * is full). The returned function gives it back; calling it again does nothing.
   */
  reserve(orgId: string): () => void {
    const mine = this.byOrg.get(orgId) ?? 0;
    if (mine >= this.caps.perOrg) {
      throw new LookupBusy(
        'RATE_LIMITED',
        `Too many face matches at once: this account may run ${this.caps.perOrg} together; retry in ${RETRY_AFTER_SECONDS} s`,
        { retryAfterSeconds: RETRY_AFTER_SECONDS },
      );
    }
    if (this.total >= this.caps.perProcess) {
      throw new LookupBusy('SERVICE_UNAVAILABLE', `The server is busy with other face matches; retry in ${RETRY_AFTER_SECONDS} s`, {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
    }
    this.byOrg.set(orgId, mine + 1);
    this.total += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= 1;
      const left = (this.byOrg.get(orgId) ?? 1) - 1;
      if (left === 0) this.byOrg.delete(orgId);
      else this.byOrg.set(orgId, left);
    };
  }

  /**
   * A place for work that cannot simply be refused and sent again by an API client (a session's
   * match after its liveness decision, which cost seconds of CPU): polls for a place every
   * POLL_MS for up to `waitMs`, then refuses as `reserve` does. The organization's own API calls
   * are still refused at once while its places are taken, so neither side gets more than its cap.
   */
  async waitForPlace(orgId: string, waitMs: number): Promise<() => void> {
    const until = Date.now() + waitMs;
    for (;;) {
      try {
        return this.reserve(orgId);
      } catch (err) {
        if (!(err instanceof LookupBusy) || Date.now() + POLL_MS > until) throw err;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    }
  }

  /** Places in use: the organization's, and the process's. */
  inUse(orgId: string): { org: number; total: number } {
    return { org: this.byOrg.get(orgId) ?? 0, total: this.total };
  }
}
