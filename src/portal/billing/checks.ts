import type { Kysely } from 'kysely';
import { ADDRESS_BILLABLES } from '../../addresses/service.js';
import { BUSINESS_BILLABLES } from '../../businesses/service.js';
import { EMPLOYMENT_BILLABLES } from '../../employments/service.js';
import { GUARANTOR_BILLABLES } from '../../guarantors/service.js';
import { IDENTITY_BILLABLES } from '../../identities/lookups.js';
import { SESSION_BILLABLES } from '../../sessions/billing.js';
import { SCREENING_BILLABLES } from '../../screening/billing.js';
import { setPrice, type Billable } from '../../platform/billing.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { audit, type Actor } from '../audit.js';

/** Every check with a price, in the order the price list shows them. */
export const BILLABLES: readonly Billable[] = [
  ...Object.values(IDENTITY_BILLABLES),
  ...Object.values(ADDRESS_BILLABLES),
  ...Object.values(BUSINESS_BILLABLES),
  ...Object.values(GUARANTOR_BILLABLES),
  ...Object.values(EMPLOYMENT_BILLABLES),
  ...Object.values(SESSION_BILLABLES),
  ...Object.values(SCREENING_BILLABLES),
];

/** What a customer calls each check; the API's type names stay beside them. */
const LABELS: Record<string, string> = {
  bvn_basic: 'BVN lookup (basic)',
  bvn_premium: 'BVN lookup (premium)',
  bvn_match: 'BVN match',
  nin: 'NIN lookup',
  nin_phone: 'NIN by phone number',
  vnin: 'Virtual NIN lookup',
  drivers_license: "Driver's licence lookup",
  vin: "Voter's card lookup",
  cac: 'CAC business registry lookup',
  tin: 'TIN lookup',
  biometrics: 'Face match (biometrics)',
  address: 'Address verification',
  address_marketplace: 'Verified address lookup',
  business: 'Business verification',
  guarantor: 'Guarantor verification',
  employment: 'Employment verification',
  session: 'Verification session (ID, liveness and face match; charged at completion)',
  screening: 'Sanctions, PEP and watchlist screening (a month of monitoring included)',
  screening_monitoring: 'Screening monitoring (per monitored subject, per month after the first)',
};

export function checkLabel(type: string): string {
  return LABELS[type] ?? type;
}

export interface PriceInForce {
  type: string;
  label: string;
  /** Kobo per check in live mode. */
  amount: number;
  /** True when the operator set this price (`vouch price set`) instead of the built-in default. */
  custom: boolean;
  /** The built-in price, in force when none is set. */
  defaultPrice: number;
}

/** The price of every check in force: the operator's overrides over the built-in defaults (what `vouch price list` prints). */
export async function priceList(db: Kysely<DB>): Promise<PriceInForce[]> {
  const overrides = await db
    .selectFrom('prices')
    .select(['type', 'amount'])
    .where('type', 'in', BILLABLES.map((b) => b.type))
    .execute();
  const set = new Map(overrides.map((row) => [row.type, Number(row.amount)]));
  return BILLABLES.map((billable) => ({
    type: billable.type,
    label: checkLabel(billable.type),
    amount: set.get(billable.type) ?? billable.defaultPrice,
    custom: set.has(billable.type),
    defaultPrice: billable.defaultPrice,
  }));
}

/** ₦1,000,000 for one check: a bigger price is a typing mistake (kobo for naira), not a tariff. */
export const MAX_PRICE = 100_000_000;

/** The check a price is for; unknown types are refused with the list of known ones. */
export function billableOf(type: string): Billable {
  const billable = BILLABLES.find((b) => b.type === type);
  if (!billable) throw new ApiError('VALIDATION_ERROR', `unknown type "${type}"; one of ${BILLABLES.map((b) => b.type).join(', ')}`);
  return billable;
}

/** What `vouch price set` and the console both check before a price is set. */
export function validatePrice(type: string, amount: number): Billable {
  const billable = billableOf(type);
  if (!Number.isSafeInteger(amount) || amount < 0 || amount > MAX_PRICE) {
    throw new ApiError('VALIDATION_ERROR', `price must be a whole number of kobo from 0 to ${MAX_PRICE} (₦1 = 100 kobo)`);
  }
  return billable;
}

export interface PriceChange {
  type: string;
  label: string;
  before: number;
  after: number;
  defaultPrice: number;
}

/**
 * Sets the price of one check for this installation: `vouch price set` and the console's Prices
 * page, each with its own actor. The price row and the audit row (before → after) commit
 * together; the next live check is charged the new price (charges read the price in their own
 * statement, nothing caches it).
 */
export async function changePrice(db: Kysely<DB>, type: string, amount: number, actor: Actor): Promise<PriceChange> {
  const billable = validatePrice(type, amount);
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('prices').select('amount').where('type', '=', type).forUpdate().executeTakeFirst();
    const before = row ? Number(row.amount) : billable.defaultPrice;
    await setPrice(trx, type, amount);
    await audit(trx, { orgId: null, actor, action: 'price.set', target: type, before: { amount: before, custom: !!row }, after: { amount } });
    return { type, label: checkLabel(type), before, after: amount, defaultPrice: billable.defaultPrice };
  });
}
