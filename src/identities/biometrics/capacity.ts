import { KeyedCounts } from '../../platform/keyed-counts.js';
import { LookupBusy } from '../lookups.js';

/** Face matches that may be in progress at once (config: VOUCH_FACE_MATCH_PER_ORG, VOUCH_FACE_MATCH_PER_PROCESS). */
export interface FaceMatchCaps {
  perOrg: number;
  perProcess: number;
}

/** A match holds the face-model thread 0.1–0.4 s: a place is usually free again within a second. */
const RETRY_AFTER_SECONDS = 1;
/**
 * Counts the face matches in progress in this process, per organization and in all. A match
 * beyond either cap is refused at once (429 for the organization's own cap, 503 when the process
 * is full, both with Retry-After) instead of waiting in a queue without bound behind the one face
 * model thread: one organization cannot make every other one's matches slow.
 */
export class FaceMatchCapacity {
  private readonly byOrg = new KeyedCounts();
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
    if (this.byOrg.get(orgId) >= this.caps.perOrg) {
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
    return this.hold(orgId);
  }

  /**
   * A place for work that must not be refused (a verification session's match after its liveness
   * decision, which cost seconds of CPU: refusing it would have the attempt decided again). Counted
   * like the others, so the organization's API calls see it, but taken even past the caps: how many
   * such matches run at once is already bounded by the liveness decision queue
   * (src/sessions/decision-queue.ts), and each holds the place a fraction of a second.
   */
  hold(orgId: string): () => void {
    this.byOrg.add(orgId);
    this.total += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= 1;
      this.byOrg.remove(orgId);
    };
  }

  /** Places in use: the organization's, and the process's. */
  inUse(orgId: string): { org: number; total: number } {
    return { org: this.byOrg.get(orgId), total: this.total };
  }
}
