import { sql, type Kysely } from 'kysely';
import type { DB, Mode, PayloadType, RiskLevel } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import type { AccessRequestView } from '../portal/access/service.js';
import type { UsageCounter } from '../portal/billing/usage.js';
import type { WebhookSigning } from '../webhooks/endpoints.js';
import type { Role } from '../portal/tables.js';
import { cappedCount } from '../portal/verifications/counting.js';

/** How many of an organization's newest deliveries per mode the webhook health reads (their attempts). */
export const HEALTH_WINDOW = 1000;
/** Secrets listed: the current ones and the latest rolled ones. */
const SECRETS_SHOWN = 20;
const USAGE_DAYS = 30;

export type WebhookState = 'no_endpoint' | 'idle' | 'healthy' | 'failing' | 'circuit_open';

export interface WebhookHealth {
  mode: Mode;
  url: string | null;
  /** How its deliveries are signed; null without an endpoint. */
  signing: WebhookSigning | null;
  state: WebhookState;
  /** Failed attempts since the last successful one (within the window). */
  consecutiveFailures: number;
  /** The URL's breaker, when a delivery worker has opened it (webhook_circuits): deliveries held until the probe. */
  circuit: { openedAt: string; probeAt: string } | null;
  /** The first of those failures: when the endpoint started failing; null when it is not. */
  failingSince: string | null;
  lastSuccessAt: string | null;
  lastFailure: { at: string; statusCode: number | null; error: string | null } | null;
  /** Deliveries waiting (pending), counted up to the cap. */
  backlog: number;
  backlogCapped: boolean;
  oldestPendingAt: string | null;
}

export interface UsageSummary {
  mode: Mode;
  from: string;
  to: string;
  types: { type: string; label: string; count: number; amount: number }[];
  total: { count: number; amount: number };
}

export interface OrganizationDetail {
  id: string;
  name: string;
  email: string | null;
  createdAt: string;
  balance: number;
  access: {
    enabled: boolean;
    riskLevel: RiskLevel;
    payloadType: PayloadType;
    rateLimitPerMinute: number | null;
    pendingRequest: AccessRequestView | null;
  };
  members: { personId: string; name: string; email: string; role: Role; joinedAt: string }[];
  secrets: { mode: Mode; hint: string; status: 'active' | 'expiring' | 'revoked'; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }[];
  webhooks: WebhookHealth[];
  usage: UsageSummary[];
}

const ROLE_ORDER: Record<Role, number> = { owner: 0, admin: 1, developer: 2, viewer: 3 };

/**
 * Everything an operator looks at about one organization, read from its own rows only (every
 * query is scoped by its id). Never a secret's value: hints and times only.
 */
export async function organizationDetail(db: Kysely<DB>, usage: UsageCounter, orgId: string, now = new Date()): Promise<OrganizationDetail> {
  const org = await db
    .selectFrom('organizations')
    .select(['id', 'name', 'email', 'created_at', 'balance', 'enabled', 'risk_level', 'payload_type', 'rate_limit_per_minute'])
    .where('id', '=', orgId)
    .executeTakeFirst();
  if (!org) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId}`);

  const [pending, members, secrets, webhooks, test, live] = await Promise.all([
    db.selectFrom('access_requests').selectAll().where('org_id', '=', orgId).where('status', '=', 'pending').orderBy('created_at', 'desc').limit(1).executeTakeFirst(),
    db
      .selectFrom('memberships as m')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .select(['p.id', 'p.name', 'p.email', 'm.role', 'm.created_at'])
      .where('m.org_id', '=', orgId)
      .orderBy('m.created_at')
      .execute(),
    // The columns named: never secret_hash, never test_value.
    db
      .selectFrom('api_secrets')
      .select(['mode', 'hint', 'created_at', 'last_used_at', 'revoked_at'])
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .limit(SECRETS_SHOWN)
      .execute(),
    Promise.all((['test', 'live'] as const).map((mode) => webhookHealth(db, orgId, mode))),
    usage.report({ orgId, mode: 'test' }, USAGE_DAYS, now),
    usage.report({ orgId, mode: 'live' }, USAGE_DAYS, now),
  ]);

  return {
    id: org.id,
    name: org.name,
    email: org.email,
    createdAt: org.created_at.toISOString(),
    balance: Number(org.balance),
    access: {
      enabled: org.enabled,
      riskLevel: org.risk_level,
      payloadType: org.payload_type,
      rateLimitPerMinute: org.rate_limit_per_minute === null ? null : Number(org.rate_limit_per_minute),
      pendingRequest: pending
        ? {
            id: pending.id,
            status: pending.status,
            riskLevel: pending.risk_level,
            payloadType: pending.payload_type,
            useCase: pending.use_case,
            decidedRiskLevel: pending.decided_risk_level,
            decidedPayloadType: pending.decided_payload_type,
            declineReason: pending.decline_reason,
            createdAt: pending.created_at.toISOString(),
            decidedAt: pending.decided_at?.toISOString() ?? null,
          }
        : null,
    },
    members: members
      .map((m) => ({ personId: m.id, name: m.name, email: m.email, role: m.role, joinedAt: m.created_at.toISOString() }))
      .sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role] || a.joinedAt.localeCompare(b.joinedAt)),
    secrets: secrets.map((s) => ({
      mode: s.mode,
      hint: s.hint,
      status: s.revoked_at === null ? 'active' : s.revoked_at > now ? 'expiring' : 'revoked',
      createdAt: s.created_at.toISOString(),
      lastUsedAt: s.last_used_at?.toISOString() ?? null,
      revokedAt: s.revoked_at?.toISOString() ?? null,
    })),
    webhooks,
    usage: [test, live].map((report) => ({
      mode: report.mode,
      from: report.from,
      to: report.to,
      types: report.types,
      total: report.total,
    })),
  };
}

const iso = (value: Date | string | null | undefined) => (value ? new Date(value).toISOString() : null);

/**
 * One mode's endpoint health: its breaker as the delivery workers record it (webhook_circuits,
 * by URL), and the attempts of its newest deliveries: failures since the last success, the last
 * of each, and the backlog.
 */
export async function webhookHealth(db: Kysely<DB>, orgId: string, mode: Mode): Promise<WebhookHealth> {
  const [endpoint, health, backlog, oldest] = await Promise.all([
    db
      .selectFrom('webhook_endpoints as e')
      .leftJoin('webhook_circuits as c', 'c.url', 'e.url')
      .select(['e.url', 'e.signing', 'c.opened_at', 'c.probe_at'])
      .where('e.org_id', '=', orgId)
      .where('e.mode', '=', mode)
      .executeTakeFirst(),
    sql<{
      last_success_at: Date | string | null;
      failures: string | number;
      failing_since: Date | string | null;
      last_failure_at: Date | string | null;
      last_failure_status: number | null;
      last_failure_error: string | null;
    }>`
      with recent as (
        select id from webhook_deliveries where org_id = ${orgId} and mode = ${mode} order by id desc limit ${HEALTH_WINDOW}
      ), tried as (
        select a.attempted_at, a.status_code, a.error, coalesce(a.status_code between 200 and 299, false) as ok
        from webhook_attempts a where a.delivery_id in (select id from recent)
      ), success as (
        select max(attempted_at) as at from tried where ok
      ), failing as (
        select count(*) as n, min(t.attempted_at) as since
        from tried t cross join success s
        where not t.ok and (s.at is null or t.attempted_at > s.at)
      ), last_failure as (
        select attempted_at, status_code, error from tried where not ok order by attempted_at desc limit 1
      )
      select s.at as last_success_at, f.n as failures, f.since as failing_since,
        lf.attempted_at as last_failure_at, lf.status_code as last_failure_status, lf.error as last_failure_error
      from success s cross join failing f left join last_failure lf on true`.execute(db),
    cappedCount(db, db.selectFrom('webhook_deliveries').select('id').where('org_id', '=', orgId).where('mode', '=', mode).where('status', '=', 'pending')),
    db
      .selectFrom('webhook_deliveries')
      .select('created_at')
      .where('org_id', '=', orgId)
      .where('mode', '=', mode)
      .where('status', '=', 'pending')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst(),
  ]);
  const row = health.rows[0]!;
  const failures = Number(row.failures);
  const lastSuccessAt = iso(row.last_success_at);
  const lastFailureAt = iso(row.last_failure_at);
  const circuit = endpoint?.opened_at && endpoint.probe_at ? { openedAt: endpoint.opened_at.toISOString(), probeAt: endpoint.probe_at.toISOString() } : null;
  let state: WebhookState;
  if (!endpoint) state = 'no_endpoint';
  else if (circuit) state = 'circuit_open';
  else if (failures > 0) state = 'failing';
  else if (lastSuccessAt) state = 'healthy';
  else state = 'idle';
  return {
    mode,
    url: endpoint?.url ?? null,
    signing: endpoint?.signing ?? null,
    state,
    consecutiveFailures: failures,
    circuit,
    // An open breaker's outage began when it opened, perhaps before the attempts in the window.
    failingSince: circuit?.openedAt ?? (failures > 0 ? iso(row.failing_since) : null),
    lastSuccessAt,
    lastFailure: lastFailureAt ? { at: lastFailureAt, statusCode: row.last_failure_status === null ? null : Number(row.last_failure_status), error: row.last_failure_error } : null,
    backlog: backlog.total,
    backlogCapped: backlog.totalCapped,
    oldestPendingAt: oldest ? oldest.created_at.toISOString() : null,
  };
}
