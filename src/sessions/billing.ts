import type { Billable } from '../platform/billing.js';

/** What a completed live session costs by default, in kobo (`vouch price set session`; docs/sessions.md, "Charging"). */
export const SESSION_BILLABLES = {
  session: { type: 'session', defaultPrice: 20_000 },
} as const satisfies Record<string, Billable>;
