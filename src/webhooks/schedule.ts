/**
 * Attempt n (1-based) that fails waits RETRY_SCHEDULE_MS[n - 1] (±RETRY_JITTER) before the next;
 * a failure after the last entry is final. 12 attempts spread over about 71 hours.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 86_400_000,
];

/** ±20 %, so deliveries that failed together (a receiver outage) do not all come back together. */
export const RETRY_JITTER = 0.2;

/** From the first attempt to the last when every wait draws its longest jitter: about 85 hours. */
export const MAX_RETRY_SPAN_MS = RETRY_SCHEDULE_MS.reduce((sum, wait) => sum + wait, 0) * (1 + RETRY_JITTER);
