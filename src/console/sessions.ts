import { sql, type Kysely } from 'kysely';
import type { DB, Mode } from '../platform/db/schema.js';
import { reasonText } from '../portal/verifications/session-words.js';
import '../sessions/tables.js';

/**
 * The operator's aggregate view of verification sessions (docs/operators.md, "Sessions"): over a
 * window, optionally one organization and one mode, how sessions ended, the pass rate, the
 * failure reasons ranked (of sessions, and of liveness attempts, where an attack shows first:
 * replayed frames, a face swapped in, a photo held up), each against the window before, and the
 * same per organization, so a spike at one customer stands out. Counts and codes only: no
 * personal data, so nothing here is access-logged.
 */

export const SESSION_WINDOWS = { '24h': 24 * 3600_000, '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000 } as const;
export type SessionWindow = keyof typeof SESSION_WINDOWS;

export interface OutcomeCounts {
  sessions: number;
  inProgress: number;
  verified: number;
  failed: number;
  expired: number;
  cancelled: number;
  /** verified ÷ (verified + failed); null when none completed. */
  passRate: number | null;
  attemptsDecided: number;
  attemptsFailed: number;
}

export interface ReasonCount {
  code: string;
  text: string;
  /** Sessions created in the window that ended with this reason. */
  sessions: number;
  /** Liveness attempts decided in the window that failed with it. */
  attempts: number;
  previousSessions: number;
  previousAttempts: number;
}

export interface OrganizationSessions extends OutcomeCounts {
  orgId: string;
  orgName: string;
  previousPassRate: number | null;
  reasons: ReasonCount[];
}

export interface SessionSummary {
  window: SessionWindow;
  from: string;
  to: string;
  previousFrom: string;
  orgId: string | null;
  mode: Mode | null;
  totals: OutcomeCounts & { previousPassRate: number | null; previousSessions: number };
  reasons: ReasonCount[];
  organizations: OrganizationSessions[];
}

/** How many organizations the summary lists (the most sessions first); the totals count them all. */
export const MAX_ORGANIZATIONS = 100;

interface OutcomeRow {
  org_id: string;
  org_name: string;
  sessions: string | number;
  in_progress: string | number;
  verified: string | number;
  failed: string | number;
  expired: string | number;
  cancelled: string | number;
  previous_sessions: string | number;
  previous_verified: string | number;
  previous_failed: string | number;
}

interface ReasonRow {
  org_id: string;
  code: string;
  sessions: string | number;
  attempts: string | number;
  previous_sessions: string | number;
  previous_attempts: string | number;
}

const rate = (verified: number, failed: number) => (verified + failed === 0 ? null : Math.round((verified / (verified + failed)) * 1000) / 1000);

export async function summariseSessions(db: Kysely<DB>, options: { window: SessionWindow; orgId?: string | undefined; mode?: Mode | undefined; now?: Date }): Promise<SessionSummary> {
  const to = options.now ?? new Date();
  const length = SESSION_WINDOWS[options.window];
  const from = new Date(to.getTime() - length);
  const previousFrom = new Date(from.getTime() - length);
  const scope = (alias: string) =>
    sql.join(
      [
        ...(options.orgId ? [sql`${sql.ref(`${alias}.org_id`)} = ${options.orgId}`] : []),
        ...(options.mode ? [sql`${sql.ref(`${alias}.mode`)} = ${options.mode}`] : []),
        sql`true`,
      ],
      sql` and `,
    );
  const current = (column: string) => sql`${sql.ref(column)} >= ${from}`;

  const outcomes = await sql<OutcomeRow>`
    select s.org_id, o.name as org_name,
           count(*) filter (where ${current('s.created_at')}) as sessions,
           count(*) filter (where ${current('s.created_at')} and s.status in ('created', 'in_progress')) as in_progress,
           count(*) filter (where ${current('s.created_at')} and s.status = 'verified') as verified,
           count(*) filter (where ${current('s.created_at')} and s.status = 'failed') as failed,
           count(*) filter (where ${current('s.created_at')} and s.status = 'expired') as expired,
           count(*) filter (where ${current('s.created_at')} and s.status = 'cancelled') as cancelled,
           count(*) filter (where s.created_at < ${from}) as previous_sessions,
           count(*) filter (where s.created_at < ${from} and s.status = 'verified') as previous_verified,
           count(*) filter (where s.created_at < ${from} and s.status = 'failed') as previous_failed
      from verification_sessions s join organizations o on o.id = s.org_id
     where s.created_at >= ${previousFrom} and s.created_at < ${to} and ${scope('s')}
     group by s.org_id, o.name`.execute(db);

  const attempts = await sql<{ org_id: string; decided: string | number; failed: string | number }>`
    select s.org_id, count(*) as decided, count(*) filter (where a.status = 'failed') as failed
      from session_liveness_attempts a join verification_sessions s on s.id = a.session_id
     where a.decided_at >= ${from} and a.decided_at < ${to} and ${scope('s')}
     group by s.org_id`.execute(db);

  // Session reasons by the session's creation; attempt reasons by when the attempt was decided.
  const reasons = await sql<ReasonRow>`
    select org_id, code, sum(sessions) as sessions, sum(attempts) as attempts, sum(previous_sessions) as previous_sessions, sum(previous_attempts) as previous_attempts
      from (
        select s.org_id, code.value as code,
               count(*) filter (where ${current('s.created_at')}) as sessions, 0 as attempts,
               count(*) filter (where s.created_at < ${from}) as previous_sessions, 0 as previous_attempts
          from verification_sessions s cross join lateral jsonb_array_elements_text(s.reasons) as code(value)
         where s.created_at >= ${previousFrom} and s.created_at < ${to} and s.status in ('failed', 'expired', 'cancelled') and ${scope('s')}
         group by s.org_id, code.value
        union all
        select s.org_id, code.value as code,
               0 as sessions, count(*) filter (where ${current('a.decided_at')}) as attempts,
               0 as previous_sessions, count(*) filter (where a.decided_at < ${from}) as previous_attempts
          from session_liveness_attempts a join verification_sessions s on s.id = a.session_id
               cross join lateral jsonb_array_elements_text(a.decision -> 'reasons') as code(value)
         where a.decided_at >= ${previousFrom} and a.decided_at < ${to} and a.status = 'failed' and ${scope('s')}
         group by s.org_id, code.value
      ) per_source
     group by org_id, code`.execute(db);

  const n = (value: string | number | null | undefined) => Number(value ?? 0);
  const byReason = (rows: ReasonRow[]): ReasonCount[] => {
    const merged = new Map<string, ReasonCount>();
    for (const row of rows) {
      const entry = merged.get(row.code) ?? { code: row.code, text: reasonText(row.code), sessions: 0, attempts: 0, previousSessions: 0, previousAttempts: 0 };
      entry.sessions += n(row.sessions);
      entry.attempts += n(row.attempts);
      entry.previousSessions += n(row.previous_sessions);
      entry.previousAttempts += n(row.previous_attempts);
      merged.set(row.code, entry);
    }
    return [...merged.values()]
      .filter((entry) => entry.sessions + entry.attempts + entry.previousSessions + entry.previousAttempts > 0)
      .sort((a, b) => b.sessions + b.attempts - (a.sessions + a.attempts) || b.previousSessions + b.previousAttempts - (a.previousSessions + a.previousAttempts) || a.code.localeCompare(b.code));
  };
  const attemptsOf = new Map(attempts.rows.map((row) => [row.org_id, { decided: n(row.decided), failed: n(row.failed) }]));

  const orgIds = new Set([...outcomes.rows.map((row) => row.org_id), ...attempts.rows.map((row) => row.org_id)]);
  const names = new Map(outcomes.rows.map((row) => [row.org_id, row.org_name]));
  const missing = [...orgIds].filter((id) => !names.has(id));
  if (missing.length > 0) {
    for (const org of await db.selectFrom('organizations').select(['id', 'name']).where('id', 'in', missing).execute()) names.set(org.id, org.name);
  }
  const organizations: OrganizationSessions[] = [...orgIds].map((orgId) => {
    const row = outcomes.rows.find((r) => r.org_id === orgId);
    const tries = attemptsOf.get(orgId) ?? { decided: 0, failed: 0 };
    return {
      orgId,
      orgName: names.get(orgId) ?? '',
      sessions: n(row?.sessions),
      inProgress: n(row?.in_progress),
      verified: n(row?.verified),
      failed: n(row?.failed),
      expired: n(row?.expired),
      cancelled: n(row?.cancelled),
      passRate: rate(n(row?.verified), n(row?.failed)),
      previousPassRate: rate(n(row?.previous_verified), n(row?.previous_failed)),
      attemptsDecided: tries.decided,
      attemptsFailed: tries.failed,
      reasons: byReason(reasons.rows.filter((r) => r.org_id === orgId)),
    };
  });
  organizations.sort((a, b) => b.sessions + b.attemptsDecided - (a.sessions + a.attemptsDecided) || a.orgName.localeCompare(b.orgName));

  const sum = (pick: (org: OrganizationSessions) => number) => organizations.reduce((total, org) => total + pick(org), 0);
  const verified = sum((o) => o.verified);
  const failed = sum((o) => o.failed);
  const previousVerified = outcomes.rows.reduce((t, r) => t + n(r.previous_verified), 0);
  const previousFailed = outcomes.rows.reduce((t, r) => t + n(r.previous_failed), 0);
  return {
    window: options.window,
    from: from.toISOString(),
    to: to.toISOString(),
    previousFrom: previousFrom.toISOString(),
    orgId: options.orgId ?? null,
    mode: options.mode ?? null,
    totals: {
      sessions: sum((o) => o.sessions),
      inProgress: sum((o) => o.inProgress),
      verified,
      failed,
      expired: sum((o) => o.expired),
      cancelled: sum((o) => o.cancelled),
      passRate: rate(verified, failed),
      previousPassRate: rate(previousVerified, previousFailed),
      previousSessions: outcomes.rows.reduce((t, r) => t + n(r.previous_sessions), 0),
      attemptsDecided: sum((o) => o.attemptsDecided),
      attemptsFailed: sum((o) => o.attemptsFailed),
    },
    reasons: byReason(reasons.rows),
    organizations: organizations.filter((org) => org.sessions + org.attemptsDecided + org.reasons.length > 0).slice(0, MAX_ORGANIZATIONS),
  };
}
