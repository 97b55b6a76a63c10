import { sql, type Kysely } from 'kysely';
import { invalidateAuthCache } from '../platform/auth.js';
import type { DB, PayloadType, RiskLevel } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { audit, type Actor } from '../portal/audit.js';

export interface OrganizationSummary {
  id: string;
  name: string;
  enabled: boolean;
  riskLevel: RiskLevel;
  payloadType: PayloadType;
  balance: number;
  members: number;
  createdAt: string;
  /** The latest lookup or verification charged or recorded, live or test; null when none. */
  lastActivityAt: string | null;
}

/** Organizations for operators: a page, searched by name (or id), newest first. */
export async function listOrganizations(db: Kysely<DB>, filter: { q?: string | undefined; limit: number; offset: number }): Promise<{ rows: OrganizationSummary[]; total: number }> {
  const q = filter.q?.trim();
  let query = db.selectFrom('organizations as o');
  if (q) {
    const pattern = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) => eb.or([eb('o.name', 'ilike', pattern), eb(sql`o.id::text`, '=', q.toLowerCase())]));
  }
  const [rows, count] = await Promise.all([
    query
      .select([
        'o.id',
        'o.name',
        'o.enabled',
        'o.risk_level',
        'o.payload_type',
        'o.balance',
        'o.created_at',
        sql<number>`(select count(*) from memberships m where m.org_id = o.id)`.as('members'),
        // Each mode's newest usage row through the (org_id, mode, created_at) index.
        sql<Date | null>`greatest(
          (select u.created_at from usage_events u where u.org_id = o.id and u.mode = 'live' order by u.created_at desc limit 1),
          (select u.created_at from usage_events u where u.org_id = o.id and u.mode = 'test' order by u.created_at desc limit 1))`.as('last_activity'),
      ])
      .orderBy('o.created_at', 'desc')
      .orderBy('o.id')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return {
    total: Number(count.total),
    rows: rows.map((row) => ({
      id: row.id,
      name: row.name,
      enabled: row.enabled,
      riskLevel: row.risk_level,
      payloadType: row.payload_type,
      balance: Number(row.balance),
      members: Number(row.members),
      createdAt: row.created_at.toISOString(),
      lastActivityAt: row.last_activity ? new Date(row.last_activity).toISOString() : null,
    })),
  };
}

/**
 * Turns an organization's live API access off: its live secret answers 403 at once in this
 * process and within the auth cache's 5 seconds in others; test secrets keep working. Audited
 * with the reason. Turning it on again is an approval (`AccessRequests.approve`).
 */
export async function disableOrganization(db: Kysely<DB>, orgId: string, reason: string, actor: Actor): Promise<void> {
  const text = reason.trim();
  if (!text) throw new ApiError('VALIDATION_ERROR', 'reason must say why, for the audit log');
  await db.transaction().execute(async (trx) => {
    const before = await trx.selectFrom('organizations').select(['enabled']).where('id', '=', orgId).forUpdate().executeTakeFirst();
    if (!before) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId}`);
    if (!before.enabled) throw new ApiError('CONFLICT', 'This organization has no live API access to turn off');
    await trx.updateTable('organizations').set({ enabled: false }).where('id', '=', orgId).execute();
    await audit(trx, { orgId, actor, action: 'access.disabled', before: { enabled: true }, after: { enabled: false, reason: text } });
  });
  invalidateAuthCache();
}
