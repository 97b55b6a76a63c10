import { ApiError } from '../platform/errors.js';
import { KeyedCounts } from '../platform/keyed-counts.js';
import { ATTEMPT_TTL_MS } from './liveness.js';

/**
 * Frames uploads in flight (config: VOUCH_FRAME_UPLOADS_PER_ADDRESS, VOUCH_FRAME_UPLOADS_PER_PROCESS).
 * An upload holds up to a whole frames form (7.6 MB) in memory until its decision is made: these
 * bound that memory to a small multiple of the form, however many uploads are started.
 */
export interface FrameUploadLimits {
  /**
   * Per client address (an IPv6 client by its /64): one person sends one attempt at a time; a
   * shared address (an office, a carrier's NAT, common on mobile networks) a few at once.
   */
  perAddress: number;
  /** In this process: the decisions (4 at once, about 1.5 s each) get through fewer than 3 a second. */
  perProcess: number;
}

/** A refused upload is sent again by the page: a place is usually free within seconds. */
export const UPLOAD_RETRY_AFTER_SECONDS = 5;

/**
 * How long a frames upload may take from its admission to its last byte, in place of the 5 minutes
 * every request has (REQUEST_TIMEOUT_MS): an attempt's whole life. Frames still arriving after that
 * arrive after their attempt expired, and would be refused then (409): cutting them off costs no
 * upload that could have passed, and frees the place it holds.
 */
export const FRAME_UPLOAD_TIMEOUT_MS = ATTEMPT_TTL_MS;

/**
 * Counts the frames uploads in flight in this process: per client address, in all, and per
 * attempt (one upload each). A place is taken before a byte of the form is read, and given back
 * when its answer is sent or its connection closes, whichever comes first.
 */
export class FrameUploadPlaces {
  private readonly byAddress = new KeyedCounts();
  private readonly attempts = new Set<string>();
  private total = 0;

  /** `timeoutMs`: how long an upload may take to arrive (tests shorten it). */
  constructor(
    private readonly limits: FrameUploadLimits,
    readonly timeoutMs = FRAME_UPLOAD_TIMEOUT_MS,
  ) {}

  /**
   * Takes a place for an upload of `attemptId` from `address` (an addressKey), or refuses at once:
   * 409 while another upload of the attempt is in flight, 429 past the address's limit, 503 when
   * the process is full (both with Retry-After). The returned function gives the place back;
   * calling it again does nothing.
   */
  take(address: string, attemptId: string): () => void {
    if (this.attempts.has(attemptId)) throw new ApiError('CONFLICT', 'The frames of this attempt are already being sent; wait for their answer');
    if (this.byAddress.get(address) >= this.limits.perAddress) {
      throw new ApiError('RATE_LIMITED', `At most ${this.limits.perAddress} frame uploads at once from one address; send these again in a few seconds`, {
        retryAfterSeconds: UPLOAD_RETRY_AFTER_SECONDS,
      });
    }
    if (this.total >= this.limits.perProcess) {
      throw new ApiError('SERVICE_UNAVAILABLE', 'Many selfies are being sent right now: send these frames again in a few seconds', {
        retryAfterSeconds: UPLOAD_RETRY_AFTER_SECONDS,
      });
    }
    this.attempts.add(attemptId);
    this.byAddress.add(address);
    this.total += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.attempts.delete(attemptId);
      this.total -= 1;
      this.byAddress.remove(address);
    };
  }

  /** Uploads in flight: from the address, and in all. */
  inUse(address: string): { address: number; total: number } {
    return { address: this.byAddress.get(address), total: this.total };
  }
}
