import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

export type Mode = 'test' | 'live';
export type RiskLevel = 'NONE' | 'LOW' | 'MEDIUM' | 'HIGH';
export type PayloadType = 'FULL' | 'HALF';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface OrganizationsTable {
  id: string;
  name: string;
  email: string | null;
  risk_level: ColumnType<RiskLevel, RiskLevel | undefined, RiskLevel>;
  payload_type: ColumnType<PayloadType, PayloadType | undefined, PayloadType>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  balance: ColumnType<number, number | undefined, number>;
  /** Requests per minute for each of its secrets; null means the server's default (0013). */
  rate_limit_per_minute: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: CreatedAt;
}

export interface ApiSecretsTable {
  id: string;
  org_id: string;
  mode: Mode;
  secret_hash: string;
  hint: string;
  created_at: CreatedAt;
  /** When the secret stops working; a rolled secret may keep working until a time in the future. */
  revoked_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  last_used_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The person who made it in the portal; null for the CLI and sign-up. */
  created_by: ColumnType<string | null, string | null | undefined, never>;
  /** The plain value of a test secret, which the portal shows; always null for live secrets. */
  test_value: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface PricesTable {
  type: string;
  amount: number;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface LedgerEntriesTable {
  id: Generated<number>;
  org_id: string;
  kind: 'credit' | 'charge' | 'refund' | 'debit';
  amount: number;
  balance_after: number;
  description: string;
  created_at: CreatedAt;
  /** The operator who made this money action (a confirmed funding, a credit or debit); null otherwise (0017). */
  actor_person_id: ColumnType<string | null, string | null | undefined, never>;
}

export interface UsageEventsTable {
  id: Generated<number>;
  org_id: string;
  mode: Mode;
  type: string;
  subject: string;
  outcome: string;
  price: ColumnType<number, number | undefined, number>;
  ledger_entry_id: number | null;
  created_at: CreatedAt;
  /** Which source answered a lookup: `embedded`, `cache`, `sandbox` or an upstream's name (0011). */
  source: ColumnType<string | null, string | null | undefined, string | null>;
  /** How long the registry part of a lookup took (0011). */
  latency_ms: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface RegistryRecordsTable {
  type: string;
  key: string;
  phone: string | null;
  record: ColumnType<Record<string, unknown>, string, string>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface SequencesTable {
  org_id: string;
  mode: Mode;
  kind: string;
  value: ColumnType<number, number | undefined, number>;
}

export interface SettingsTable {
  name: string;
  value: string;
  created_at: CreatedAt;
}

export interface WebhookEndpointsTable {
  org_id: string;
  mode: Mode;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  message_id: string;
  org_id: string;
  mode: Mode;
  event_type: string;
  /** The body as sent; null for an event that happened while the scope had no endpoint (0024): it is never sent. */
  payload: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  status: ColumnType<WebhookDeliveryStatus, WebhookDeliveryStatus | undefined, WebhookDeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>;
  locked_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  last_status_code: number | null;
  last_error: string | null;
  created_at: CreatedAt;
  delivered_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The verification the event reports on (kind and id), null for events about none (0009). */
  resource_kind: ColumnType<string | null, string | null | undefined, string | null>;
  resource_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The trace and id of the request that caused the event, null outside one (0050). */
  traceparent: ColumnType<string | null, string | null | undefined, string | null>;
  request_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempted_at: CreatedAt;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /** The first 500 characters of the receiver's answer (0008); null without an answer. */
  response_excerpt: Generated<string | null>;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

/** An upstream provider account (0011); the secret is AES-256-GCM ciphertext. */
export interface UpstreamSourcesTable {
  name: string;
  kind: string;
  url: string;
  secret_encrypted: string;
  types: string[];
  timeout_ms: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
}

export interface UpstreamOrdersTable {
  type: string;
  sources: string[];
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface UpstreamCacheTtlsTable {
  type: string;
  seconds: number;
}

export interface UpstreamCacheTable {
  type: string;
  key_hash: string;
  record: ColumnType<Record<string, unknown>, string, string>;
  source: string;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

export interface UpstreamHealthTable {
  source: string;
  instance: string;
  circuit: CircuitState;
  consecutive_failures: number;
  last_failure_kind: string | null;
  last_failure_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  successes: number;
  not_found: number;
  failures: number;
  latency_p50_ms: number | null;
  latency_p99_ms: number | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface SchemaMigrationsTable {
  version: string;
  applied_at: CreatedAt;
}

export interface DB {
  organizations: OrganizationsTable;
  api_secrets: ApiSecretsTable;
  prices: PricesTable;
  ledger_entries: LedgerEntriesTable;
  usage_events: UsageEventsTable;
  registry_records: RegistryRecordsTable;
  schema_migrations: SchemaMigrationsTable;
  sequences: SequencesTable;
  settings: SettingsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  upstream_sources: UpstreamSourcesTable;
  upstream_orders: UpstreamOrdersTable;
  upstream_cache_ttls: UpstreamCacheTtlsTable;
  upstream_cache: UpstreamCacheTable;
  upstream_health: UpstreamHealthTable;
}

export type Organization = Selectable<OrganizationsTable>;
export type NewOrganization = Insertable<OrganizationsTable>;
