import type { operations } from '../../api/schema';

/** The usage report as the server answers it (generated types, not a copy). */
export type UsageReport = operations['portalGetUsage']['responses'][200]['content']['application/json'];
export type UsageDay = UsageReport['days'][number];
export type UsageType = UsageReport['types'][number];
/** What the chart stacks: how many checks, or what they cost. */
export type UsageMetric = 'count' | 'amount';
