import type { ColumnType, Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { audit, type Actor } from '../portal/audit.js';

/**
 * An organization's standing request for screening (issue 51, part 3): screen the person of every
 * verification session of theirs (unless a session says `checks.screening: false`), the person or
 * company of every identity lookup that finds one, and the company of every business verification
 * when it is created. Off by default; the customer turns it on in the portal
 * (Screenings → Screen automatically; owners and admins). Read at each session
 * creation and each lookup: no restart.
 */

/** One row per organization that set it (0048, 0049); no row: all off. */
export interface OrganizationScreeningTable {
  org_id: string;
  sessions: boolean;
  lookups: boolean;
  businesses: ColumnType<boolean, boolean | undefined, boolean>;
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
  /** Every identity lookup that finds a person or company screens them (the answer carries the screening). */
  lookups: boolean;
  /** Every business verification screens its company when created (the answer carries the screening). */
  businesses: boolean;
}

export const SCREENING_OFF: OrganizationScreening = { sessions: false, lookups: false, businesses: false };

export async function organizationScreening(db: Kysely<DB>, orgId: string): Promise<OrganizationScreening> {
  const row = await db.selectFrom('organization_screening').select(['sessions', 'lookups', 'businesses']).where('org_id', '=', orgId).executeTakeFirst();
  return row ? { sessions: row.sessions, lookups: row.lookups, businesses: row.businesses } : SCREENING_OFF;
}

/** Sets it in one transaction with its audit entry (`businesses` left out: unchanged); answers the setting now in force. */
export async function setOrganizationScreening(
  db: Kysely<DB>,
  orgId: string,
  change: Omit<OrganizationScreening, 'businesses'> & Partial<Pick<OrganizationScreening, 'businesses'>>,
  actor: Actor,
): Promise<OrganizationScreening> {
  return db.transaction().execute(async (trx) => {
    const before = await organizationScreening(trx, orgId);
    // A client that knows only the first two switches (the portal before 0049) leaves the third as it was.
    const next: OrganizationScreening = { ...change, businesses: change.businesses ?? before.businesses };
    await trx
      .insertInto('organization_screening')
      .values({ org_id: orgId, sessions: next.sessions, lookups: next.lookups, businesses: next.businesses, updated_at: new Date() })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ sessions: next.sessions, lookups: next.lookups, businesses: next.businesses, updated_at: new Date() }))
      .execute();
    if (before.sessions !== next.sessions || before.lookups !== next.lookups || before.businesses !== next.businesses) {
      await audit(trx, { orgId, actor, action: 'organization.screening_changed', target: 'screening of sessions, lookups and business verifications', before, after: next });
    }
    return next;
  });
}
