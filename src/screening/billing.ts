import type { Billable } from '../platform/billing.js';

/**
 * What screening costs by default, in kobo (`vouch price set screening` / `screening_monitoring`;
 * docs/screening.md, "Charging"): a live screening once, when it is made (a month of monitoring
 * included); a monitored subject then once a month, on each monthly anniversary of its screening.
 */
export const SCREENING_BILLABLES = {
  screening: { type: 'screening', defaultPrice: 5_000 },
  screening_monitoring: { type: 'screening_monitoring', defaultPrice: 1_000 },
} as const satisfies Record<string, Billable>;

/** A month of monitoring from `from`: the same day of the next month (the last day when it has no such day). */
export function addMonth(from: Date): Date {
  const next = new Date(from);
  next.setUTCDate(1);
  next.setUTCMonth(next.getUTCMonth() + 1);
  const lastDay = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate();
  next.setUTCDate(Math.min(from.getUTCDate(), lastDay));
  return next;
}
