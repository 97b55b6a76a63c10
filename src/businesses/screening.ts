import type { Kysely, Transaction } from 'kysely';
import type { AuthContext } from '../platform/auth.js';
import type { DB } from '../platform/db/schema.js';
import { companySubject, notScreenedReason, type LookupScreeningData } from '../identities/screening.js';
import { organizationScreening } from '../screening/organization-setting.js';
import type { ScreeningService } from '../screening/service.js';
import type { BusinessRecord } from './render.js';
import { createBusinessVerification, generateBusinessReference, type LocatedBusiness } from './service.js';

/**
 * A business verification of an organization that screens every one (the Screenings page's third
 * switch, `organization_screening.businesses`; docs/screening.md) screens its company when it is
 * created: the screening (charged at the screening price live, the sandbox list in test mode) and
 * the verification (with its own charge and, through `keep`, the Idempotency-Key's answer) commit
 * in one transaction, and the answer carries `screening`.
 *
 * A screening that cannot be made does not stop the verification, as with lookups: with no list
 * loaded, a name that cannot be screened, or a wallet that cannot pay both, the verification is
 * created alone and `screening.status` is `NOT_SCREENED` with why. Anything the verification
 * itself refuses (409, and 402 when it cannot be paid alone) is answered as without screening.
 */

export interface CreatedBusiness {
  status: 'success';
  data: BusinessRecord;
}

type Keep = (trx: Transaction<DB>, answer: CreatedBusiness) => Promise<void>;

export async function createBusinessMaybeScreened(
  db: Kysely<DB>,
  screening: Pick<ScreeningService, 'create'> | undefined,
  auth: AuthContext,
  located: LocatedBusiness,
  keep: Keep,
): Promise<CreatedBusiness> {
  const scope = { orgId: auth.orgId, mode: auth.mode };
  const create = async (trx: Transaction<DB>, reference: string, screened?: LookupScreeningData): Promise<CreatedBusiness> => {
    const options = { chargeable: true, generateReference: () => reference, ...(screened?.id ? { screeningId: screened.id } : {}) };
    const record = await createBusinessVerification(trx, scope, located, options);
    const answer: CreatedBusiness = { status: 'success', data: screened ? { ...record, screening: screened } : record };
    await keep(trx, answer);
    return answer;
  };

  const subject = companySubject(located.name);
  const reference = located.reference ?? generateBusinessReference();
  if (!screening || !subject || !(await organizationScreening(db, auth.orgId)).businesses) {
    return db.transaction().execute((trx) => create(trx, reference));
  }

  let answer: CreatedBusiness | undefined;
  try {
    // The verification's own consent (when the organization requires one) was given for this check.
    await screening.create({ ...auth, consentRequired: false }, { subject, reference, metadata: { businessVerification: reference } }, async (trx, made) => {
      answer = await create(trx as Transaction<DB>, reference, { id: made.id, status: made.status.status, hits: made.hits.length });
    });
    return answer!;
  } catch (err) {
    // The screening's charge, or the verification's after it: made alone, the verification says which it was.
    const why = notScreenedReason(err, { unpaid: 'The wallet cannot pay the screening as well: fund the account and screen the company with POST /v1/verifications/screenings', name: "The company's name" });
    if (why === undefined) throw err;
    return db.transaction().execute((trx) => create(trx, reference, { id: null, status: 'NOT_SCREENED', hits: 0, message: why }));
  }
}
