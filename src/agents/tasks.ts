import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { Scope } from '../platform/pagination.js';
import type { FieldTaskRef } from './service.js';
import type { FieldTaskKind } from './tables.js';
import type { VisitReport } from './visit.js';

/**
 * What the agent API needs from a kind of field verification. The address and business modules
 * each provide one (their `tasks.ts`), so this module never reads their tables.
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

export interface FieldTaskSource {
  kind: FieldTaskKind;
  /** The subStatus values a failed report may give. */
  reasons: readonly string[];
  defaultReason: string;
  summarize(db: Kysely<DB>, tasks: readonly FieldTaskRef[]): Promise<Map<number, TaskSummary>>;
  startVisit(trx: Transaction<DB>, scope: Scope, id: number, now: Date): Promise<void>;
  complete(trx: Transaction<DB>, scope: Scope, id: number, report: VisitReport, now: Date): Promise<void>;
}
