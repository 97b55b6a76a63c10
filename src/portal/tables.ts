import type { ColumnType, Generated, Selectable } from 'kysely';
import type { PayloadType, RiskLevel } from '../platform/db/schema.js';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type Role = 'owner' | 'admin' | 'developer' | 'viewer';
export const ROLES: readonly Role[] = ['owner', 'admin', 'developer', 'viewer'];

export interface PeopleTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  email_verified_at: NullableTimestamp;
  totp_secret: ColumnType<string | null, string | null | undefined, string | null>;
  totp_enabled_at: NullableTimestamp;
  /** The time step of the last TOTP code accepted; no code of that step or before works again (0023). */
  totp_last_step: ColumnType<number | null, number | null | undefined, number | null>;
  /** Wrong second-factor codes since the last right one; every fifth locks the second step (0023). */
  totp_failures: ColumnType<number, number | undefined, number>;
  totp_locked_until: NullableTimestamp;
  operator_role: ColumnType<'operator' | null, 'operator' | null | undefined, 'operator' | null>;
  created_at: CreatedAt;
}

export interface PortalSessionsTable {
  id: string;
  person_id: string;
  token_hash: string;
  pending_totp: ColumnType<boolean, boolean | undefined, boolean>;
  user_agent: string | null;
  ip: string | null;
  created_at: CreatedAt;
  last_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
}

/** A sign-up waiting for its mailed link; the account is made when the link is opened (0023). */
export interface PendingSignUpsTable {
  token_hash: string;
  email: string;
  name: string;
  organization_name: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

export interface PersonTokensTable {
  token_hash: string;
  person_id: string;
  purpose: 'verify_email' | 'reset_password';
  created_at: CreatedAt;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface MembershipsTable {
  org_id: string;
  person_id: string;
  role: Role;
  created_at: CreatedAt;
}

export interface InvitationsTable {
  id: string;
  org_id: string;
  email: string;
  role: Role;
  token_hash: string;
  invited_by: string | null;
  created_at: CreatedAt;
  expires_at: Timestamp;
  accepted_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export type AccessRequestStatus = 'pending' | 'approved' | 'declined';

export interface AccessRequestsTable {
  id: string;
  org_id: string;
  risk_level: RiskLevel;
  payload_type: PayloadType;
  use_case: string | null;
  status: ColumnType<AccessRequestStatus, AccessRequestStatus | undefined, AccessRequestStatus>;
  decided_risk_level: RiskLevel | null;
  decided_payload_type: PayloadType | null;
  decline_reason: string | null;
  requested_by: string | null;
  decided_by: string | null;
  created_at: CreatedAt;
  decided_at: NullableTimestamp;
}

export type FundingRequestStatus = 'pending' | 'confirmed' | 'rejected' | 'withdrawn';

export interface FundingRequestsTable {
  id: string;
  org_id: string;
  amount: number;
  reference: string;
  status: ColumnType<FundingRequestStatus, FundingRequestStatus | undefined, FundingRequestStatus>;
  requested_by: string | null;
  decided_by: string | null;
  reason: string | null;
  ledger_entry_id: number | null;
  created_at: CreatedAt;
  decided_at: NullableTimestamp;
}

/** Mail to people; recipient, subject, text, html and error are encrypted (PROTECTED_COLUMNS). */
export interface MailMessagesTable {
  id: Generated<number>;
  kind: string;
  recipient: string;
  subject: string;
  text: string;
  html: string | null;
  created_at: CreatedAt;
  /** When the mail's link stops working; the retention job deletes the mail then (0024). */
  expires_at: ColumnType<Date, Date | string | undefined, Date | string>;
  sent_at: NullableTimestamp;
  error: string | null;
}

export type ActorKind = 'member' | 'operator' | 'cli' | 'system';

export interface AuditEventsTable {
  id: Generated<number>;
  org_id: string | null;
  actor_id: string | null;
  actor_kind: ActorKind;
  action: string;
  target: string | null;
  before: ColumnType<unknown, string | null | undefined, never>;
  after: ColumnType<unknown, string | null | undefined, never>;
  created_at: CreatedAt;
}

export type Person = Selectable<PeopleTable>;

declare module '../platform/db/schema.js' {
  interface DB {
    people: PeopleTable;
    portal_sessions: PortalSessionsTable;
    person_tokens: PersonTokensTable;
    pending_sign_ups: PendingSignUpsTable;
    memberships: MembershipsTable;
    invitations: InvitationsTable;
    access_requests: AccessRequestsTable;
    funding_requests: FundingRequestsTable;
    mail_messages: MailMessagesTable;
    audit_events: AuditEventsTable;
  }
}
