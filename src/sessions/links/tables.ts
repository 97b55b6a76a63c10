import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Mode } from '../../platform/db/schema.js';
import type { SessionIdType } from '../tables.js';

/** Verification links (migration 0037; docs/sessions.md, "Verification links"). */
export interface VerificationLinksTable {
  id: Generated<number>;
  /** `vl_...`: how the portal and the audit log name a link. */
  public_id: string;
  /** The public path /l/<code>: 128 random bits. */
  code: string;
  org_id: string;
  mode: Mode;
  name: string;
  id_types: ColumnType<SessionIdType[], string, string>;
  check_liveness: boolean;
  check_face_match: boolean;
  redirect_url: string | null;
  reference_prefix: string | null;
  metadata: ColumnType<Record<string, string>, string | undefined, string>;
  session_limit: number;
  /** The owner's cap, in kobo, on what the link's sessions may cost in all; null: no cap (0043). */
  spend_limit: ColumnType<number | null, number | null | undefined, number | null>;
  sessions_started: ColumnType<number, number | undefined, number>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  disabled_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_by: string | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export type LinkRow = Selectable<VerificationLinksTable>;

/** The ID steps of a link's sessions, counted against its limits (migration 0043; id-step-limits.ts). */
export interface LinkIdStepsTable {
  link_id: number;
  /** A blind index of the link and the client's address key, never the address. */
  address_key: string;
  tried_at: ColumnType<Date, Date | string, Date | string>;
}

declare module '../tables.js' {
  interface VerificationSessionsTable {
    /** The verification link the session was started from; null for sessions the API created (0037). */
    link_id: ColumnType<number | null, number | null | undefined, number | null>;
  }
}

declare module '../../platform/db/schema.js' {
  interface DB {
    verification_links: VerificationLinksTable;
    link_id_steps: LinkIdStepsTable;
  }
}
