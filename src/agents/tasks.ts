import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { Scope } from '../platform/pagination.js';
import type { FieldTaskRef } from './service.js';
import type { FieldTaskKind } from './tables.js';
import type { VisitReport, VisitStatus } from './visit.js';

/**
 * What the agent API needs from a kind of field verification. The address and business modules
 * each provide one (their `tasks.ts`), so this module never picks their tables itself (`visitResults`
 * reads the one a source names).
 */

export interface TaskPlace {
  street: string;
  city: string;
  landmark: string;
  lga: string;
  state: string;
  country: string;
}

export interface TaskSummary {
  reference: string;
  place: TaskPlace;
  /** The person to ask for: the applicant, or a business's contact person. */
  contact: { name: string; phone: string };
  business?: { name: string; type: string; rcNumber: string };
  /** '' until the agent starts the visit. */
  visitStartedAt: string;
}

/** Where a visited verification stands, for the console's history of an agent's visits. */
export interface VisitResult {
  status: VisitStatus;
  /** '' while open. */
  completedAt: string;
  flaggedForReview: boolean;
  reviewReason: string;
}

/** What filing a report did: completed the verification, or held it for the operator's review. */
export type ReportOutcome = 'completed' | 'held';

export interface FieldTaskSource {
  kind: FieldTaskKind;
  /** The subStatus values a failed report may give. */
  reasons: readonly string[];
  defaultReason: string;
  summarize(db: Kysely<DB>, tasks: readonly FieldTaskRef[]): Promise<Map<number, TaskSummary>>;
  startVisit(trx: Transaction<DB>, scope: Scope, id: number, now: Date): Promise<void>;
  /**
   * Files an agent's visit report — every route that takes one calls this. The review check
   * (`fileVisitReport` in review.ts) sets the report's `reviewReason`; a flagged report is held
   * for the operator (the verification stays open, no webhook), any other completes it.
   */
  complete(trx: Transaction<DB>, scope: Scope, id: number, report: VisitReport, now: Date): Promise<ReportOutcome>;
  /** Completes the verification with a report as it is: an unflagged one, or one the operator approved. */
  finish(trx: Transaction<DB>, scope: Scope, id: number, report: VisitReport, now: Date): Promise<void>;
  /** Status, completion and review flag of each verification (missing ids: not found). */
  results(db: Kysely<DB>, tasks: readonly FieldTaskRef[]): Promise<Map<number, VisitResult>>;
}

/**
 * Where the tasks' verifications stand, read from the table the source names (both field
 * verification tables share these columns); a row of another organization or mode is skipped.
 */
export async function visitResults(
  db: Kysely<DB>,
  table: 'address_verifications' | 'business_verifications',
  tasks: readonly FieldTaskRef[],
): Promise<Map<number, VisitResult>> {
  const out = new Map<number, VisitResult>();
  if (tasks.length === 0) return out;
  const rows = await db
    .selectFrom(table)
    .select(['id', 'org_id', 'mode', 'status', 'completed_at', 'flagged_for_review', 'review_reason'])
    .where('id', 'in', tasks.map((task) => task.verificationId))
    .execute();
  const expected = new Map(tasks.map((task) => [task.verificationId, task]));
  for (const row of rows) {
    const task = expected.get(Number(row.id));
    if (!task || task.orgId !== row.org_id || task.mode !== row.mode) continue;
    out.set(Number(row.id), {
      status: row.status,
      completedAt: row.completed_at?.toISOString() ?? '',
      flaggedForReview: row.flagged_for_review,
      reviewReason: row.review_reason ?? '',
    });
  }
  return out;
}
