import type { ColumnType } from 'kysely';
import type { Mode } from '../platform/db/schema.js';
import type { VisitReport } from './visit.js';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type FieldTaskKind = 'address' | 'business';

export interface FieldAgentsTable {
  id: string;
  name: string;
  email: string;
  phone: string;
  states: string[];
  /** LGAs covered, "State/LGA" (0018); a state with none listed is covered whole. */
  lgas: ColumnType<string[], string[] | undefined, string[]>;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  credential_hash: string;
  credential_hint: string;
  /** The person account the agent signs in to the field app with (0015); null until invited. */
  person_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
}

export interface FieldTasksTable {
  kind: FieldTaskKind;
  verification_id: number;
  org_id: string;
  mode: Mode;
  state: string;
  /** The canonical LGA of the place (0018). */
  lga: string;
  agent_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  assigned_at: Timestamp;
  closed_at: Timestamp;
  /** How a closed task ended (0018): its verification's final status. */
  outcome: ColumnType<'verified' | 'not_verified' | 'cancelled' | null, 'verified' | 'not_verified' | 'cancelled' | null | undefined, 'verified' | 'not_verified' | 'cancelled' | null>;
  /** A flagged report waiting for the operator's review (0018, src/agents/review.ts). */
  held_report: ColumnType<VisitReport | null, string | null | undefined, string | null>;
  held_at: Timestamp;
  /** The operator's note to the agent on a visit sent back. */
  review_note: ColumnType<string | null, string | null | undefined, string | null>;
}

declare module '../platform/db/schema.js' {
  interface DB {
    field_agents: FieldAgentsTable;
    field_tasks: FieldTasksTable;
  }
}
