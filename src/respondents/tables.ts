import type { ColumnType, Generated } from 'kysely';
import type { Mode } from '../platform/db/schema.js';

/** The kinds of respondent a link can be sent to. */
export type RespondentKind = 'guarantor' | 'employer';

export interface RespondentLinksTable {
  token_hash: string;
  kind: RespondentKind;
  org_id: string;
  mode: Mode;
  verification_id: number;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  used_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  failed_attempts: ColumnType<number, number | undefined, number>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface OutboxMessagesTable {
  id: Generated<number>;
  org_id: string;
  mode: Mode;
  kind: string;
  verification_id: number;
  recipient: string;
  subject: string;
  text: string;
  html: string | null;
  link: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  sent_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  error: string | null;
}

declare module '../platform/db/schema.js' {
  interface DB {
    respondent_links: RespondentLinksTable;
    outbox_messages: OutboxMessagesTable;
  }
}
