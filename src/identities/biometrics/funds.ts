import type { Kysely } from 'kysely';
import { recordUsage, type UsageInput } from '../../platform/billing.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';

/**
 * A face match is the one lookup whose work costs more than its database round trips: a live
 * wallet that cannot pay is refused before the photo is fetched, decoded or shown to the model.
 * This is only a look: the charge after the match still re-checks the balance under the wallet's
 * row lock, so concurrent requests can never overdraw it. Records the refusal as the charge would.
 */
export async function refuseUnfunded(db: Kysely<DB>, usage: UsageInput): Promise<void> {
  if (usage.mode === 'test') return;
  const wallet = await db
    .selectFrom('organizations as o')
    .select((eb) =>
      eb(
        'o.balance',
        '>=',
        eb.fn.coalesce(
          eb.selectFrom('prices').select('amount').where('type', '=', usage.billable.type),
          eb.val(usage.billable.defaultPrice),
        ),
      ).as('funded'),
    )
    .where('o.id', '=', usage.orgId)
    .executeTakeFirst();
  if (wallet?.funded) return;
  await recordUsage(db, usage, 'insufficient_funds');
  throw new ApiError('PAYMENT_REQUIRED', 'Insufficient balance: the account must be funded before this verification can run');
}
