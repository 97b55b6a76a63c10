import type { operations } from '../../api/schema';

export type Kind = operations['portalListVerifications']['parameters']['query']['kind'];
export type ExplorerStatus = NonNullable<operations['portalListVerifications']['parameters']['query']['status']>;
export type LookupType = NonNullable<NonNullable<operations['portalListLookups']['parameters']['query']>['type']>;
export type LookupOutcome = NonNullable<NonNullable<operations['portalListLookups']['parameters']['query']>['outcome']>;

export const KINDS: { value: Kind; tab: string; one: string }[] = [
  { value: 'address', tab: 'Addresses', one: 'Address verification' },
  { value: 'business', tab: 'Businesses', one: 'Business verification' },
  { value: 'guarantor', tab: 'Guarantors', one: 'Guarantor verification' },
  { value: 'employment', tab: 'Employments', one: 'Employment verification' },
];

export const isKind = (value: unknown): value is Kind => KINDS.some((kind) => kind.value === value);
export const kindLabel = (kind: Kind) => KINDS.find((k) => k.value === kind)?.one ?? kind;

/** The price list's names as people say them. */
export const LOOKUP_TYPE_LABELS: Record<LookupType, string> = {
  bvn_basic: 'BVN',
  bvn_premium: 'BVN (premium)',
  bvn_match: 'BVN match',
  nin: 'NIN',
  nin_phone: 'NIN by phone',
  vnin: 'Virtual NIN',
  drivers_license: 'Driver’s licence',
  vin: 'Voter’s card',
  cac: 'CAC (company)',
  tin: 'TIN',
  biometrics: 'Face match',
  address_marketplace: 'Address by identity',
};

export const lookupTypeLabel = (type: string) => LOOKUP_TYPE_LABELS[type as LookupType] ?? type;

export const OUTCOME_LABELS: Record<LookupOutcome, string> = {
  success: 'Found',
  not_found: 'Not found',
  insufficient_funds: 'Wallet short',
};

export const STATUS_LABELS: Record<ExplorerStatus, string> = {
  in_progress: 'In progress',
  verified: 'Verified',
  not_verified: 'Not verified',
  cancelled: 'Cancelled',
};
