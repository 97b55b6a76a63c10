import type { ColumnType } from 'kysely';
import type { Mode } from '../platform/db/schema.js';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type FieldTaskKind = 'address' | 'business';

export interface FieldAgentsTable {
  id: string;
  name: string;
  email: string;
  phone: string;
  states: string[];
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
  agent_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  assigned_at: Timestamp;
  closed_at: Timestamp;
}

declare module '../platform/db/schema.js' {
  interface DB {
    field_agents: FieldAgentsTable;
    field_tasks: FieldTasksTable;
  }
}
