import type { Kysely } from 'kysely';
import { ADDRESS_BILLABLES } from '../../addresses/service.js';
import { BUSINESS_BILLABLES } from '../../businesses/service.js';
import { EMPLOYMENT_BILLABLES } from '../../employments/service.js';
import { GUARANTOR_BILLABLES } from '../../guarantors/service.js';
import { IDENTITY_BILLABLES } from '../../identities/lookups.js';
import type { Billable } from '../../platform/billing.js';
import type { DB } from '../../platform/db/schema.js';

/** Every check with a price, in the order the price list shows them. */
export const BILLABLES: readonly Billable[] = [
  ...Object.values(IDENTITY_BILLABLES),
  ...Object.values(ADDRESS_BILLABLES),
  ...Object.values(BUSINESS_BILLABLES),
  ...Object.values(GUARANTOR_BILLABLES),
  ...Object.values(EMPLOYMENT_BILLABLES),
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
  }));
}
