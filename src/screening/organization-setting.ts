import type { ColumnType, Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { audit, type Actor } from '../portal/audit.js';

/**
 * An organization's standing request for screening (issue 51, part 3): screen the person of every
 * verification session of theirs (unless a session says `checks.screening: false`), and of every
 * identity lookup that finds one. Off by default; the customer turns it on in the portal
 * (Screenings → Screen automatically; owners and admins). Read at each session
 * creation and each lookup: no restart.
 */

/** One row per organization that set it (0048); no row: both off. */
export interface OrganizationScreeningTable {
  org_id: string;
  sessions: boolean;
  lookups: boolean;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

declare module '../platform/db/schema.js' {
  interface DB {
    organization_screening: OrganizationScreeningTable;
  }
}

export interface OrganizationScreening {
  /** Every new session screens its person unless it asks otherwise. */
  sessions: boolean;
  /** Every identity lookup that finds a person screens them (the answer carries the screening). */
  lookups: boolean;
}

export const SCREENING_OFF: OrganizationScreening = { sessions: false, lookups: false };

export async function organizationScreening(db: Kysely<DB>, orgId: string): Promise<OrganizationScreening> {
  const row = await db.selectFrom('organization_screening').select(['sessions', 'lookups']).where('org_id', '=', orgId).executeTakeFirst();
  return row ? { sessions: row.sessions, lookups: row.lookups } : SCREENING_OFF;
}

/** Sets it in one transaction with its audit entry; answers the setting now in force. */
export async function setOrganizationScreening(db: Kysely<DB>, orgId: string, next: OrganizationScreening, actor: Actor): Promise<OrganizationScreening> {
  return db.transaction().execute(async (trx) => {
    const before = await organizationScreening(trx, orgId);
    await trx
      .insertInto('organization_screening')
      .values({ org_id: orgId, sessions: next.sessions, lookups: next.lookups, updated_at: new Date() })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ sessions: next.sessions, lookups: next.lookups, updated_at: new Date() }))
      .execute();
    if (before.sessions !== next.sessions || before.lookups !== next.lookups) {
      await audit(trx, { orgId, actor, action: 'organization.screening_changed', target: 'screening of sessions and lookups', before, after: next });
    }
    return next;
  });
}
