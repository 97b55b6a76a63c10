import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/errors.js';

/**
 * A fixed-window counter per key (an IP address) for the unauthenticated account routes, so one
 * client cannot try passwords or fill mailboxes without end. In memory, per process: the
 * per-account lockout (in the database) is what holds across processes.
 */
export class Throttle {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one attempt; returns the seconds to wait when the key is over its limit, else 0. */
  hit(key: string): number {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      if (this.windows.size > 50_000) this.sweep(now);
      window = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return window.count > this.limit ? Math.ceil((window.resetAt - now) / 1000) : 0;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

/** Attempts per IP address on the unauthenticated account routes, per window. */
export const ATTEMPTS_PER_IP = 30;
export const ATTEMPT_WINDOW_MS = 15 * 60 * 1000;

/** A preHandler answering 429 with Retry-After once an IP address has used up its attempts. */
export function perIpLimit(throttle: Throttle = new Throttle(ATTEMPTS_PER_IP, ATTEMPT_WINDOW_MS)) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const wait = throttle.hit(request.ip);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      throw new ApiError('RATE_LIMITED', `Too many attempts from your network: try again in ${Math.ceil(wait / 60)} minute(s)`);
    }
  };
}
