import type { CircuitState } from '../../platform/db/schema.js';

export interface BreakerSettings {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit refuses before one probe is let through. */
  coolDownMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = { failureThreshold: 5, coolDownMs: 30_000 };

/**
 * One source's circuit breaker. Closed: every lookup goes through. Open: none does until the
 * cool-down has passed; then half-open lets exactly one probe through, whose outcome closes or
 * re-opens the circuit. A dead provider then costs one request per cool-down instead of a
 * timeout per lookup.
 */
export class CircuitBreaker {
  state: CircuitState = 'closed';
  consecutiveFailures = 0;
  private openedAt = 0;
  private probing = false;

  constructor(
    private readonly settings: BreakerSettings,
    private readonly onTransition: (from: CircuitState, to: CircuitState) => void,
  ) {}

  /** Whether a lookup may go to the source now; the half-open probe is handed out once. */
  allow(now: number): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') {
      if (now - this.openedAt < this.settings.coolDownMs) return false;
      this.move('half_open');
    }
    if (this.probing) return false;
    this.probing = true;
    return true;
  }

  success(): void {
    this.consecutiveFailures = 0;
    this.probing = false;
    if (this.state !== 'closed') this.move('closed');
  }

  failure(now: number): void {
    this.consecutiveFailures += 1;
    const wasProbe = this.state === 'half_open';
    this.probing = false;
    if (wasProbe || (this.state === 'closed' && this.consecutiveFailures >= this.settings.failureThreshold)) {
      this.openedAt = now;
      this.move('open');
    }
  }

  /** Milliseconds until an open circuit lets a probe through; 0 otherwise. */
  remainingMs(now: number): number {
    return this.state === 'open' ? Math.max(0, this.openedAt + this.settings.coolDownMs - now) : 0;
  }

  private move(to: CircuitState): void {
    const from = this.state;
    this.state = to;
    this.onTransition(from, to);
  }
}
