import type { Kysely } from 'kysely';
import { isUuid } from '../accounts/service.js';
import { invalidateAuthCache } from '../platform/auth.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { audit, type Actor } from '../portal/audit.js';

/** Whether an organization requires consent on every lookup and workflow creation (404 for no such organization). */
export async function consentRequired(db: Kysely<DB>, orgId: string): Promise<boolean> {
  const row = isUuid(orgId) ? await db.selectFrom('organizations').select('consent_required').where('id', '=', orgId).executeTakeFirst() : undefined;
  if (!row) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId.slice(0, 40)}`);
  return row.consent_required;
}

/**
 * Makes consent required (or optional again) for an organization, with its audit row in the
 * same transaction. Takes effect at once in this process, within seconds in others (the API's
 * secret cache).
 */
export async function setConsentRequired(db: Kysely<DB>, orgId: string, required: boolean, actor: Actor): Promise<{ orgId: string; consentRequired: boolean }> {
  const before = await consentRequired(db, orgId);
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('organizations').set({ consent_required: required }).where('id', '=', orgId).execute();
    if (before !== required) {
      await audit(trx, { orgId, actor, action: 'consent.setting_changed', before: { consentRequired: before }, after: { consentRequired: required } });
    }
  });
  invalidateAuthCache();
  return { orgId, consentRequired: required };
}
