import { maskIdentifier } from './lookups.js';

/**
 * Which fields of a record or an event body hold a person's data, by name: the portal masks by
 * this one list, the verifications explorer its identity numbers, the webhook delivery log all of
 * it. A name is compared by its words (camelCase or separators), so `idNumber`, `id_number`,
 * `applicantIdNumber`, `vNin` and `driversLicenseNo` are found alike, and `bulletin` is no `tin`.
 */
export type PersonalField = 'identityNumber' | 'phone' | 'email' | 'contact' | 'birthDate' | 'photo' | 'ipAddress';

/**
 * The identity-document numbers of every record (src/identities/records.ts, the spec's records)
 * and request: BVN, NIN, vNIN, driver's licence, voter's card, TIN, and the `idNumber` of
 * applicants and guarantors. A company's registration number (`rcNumber`, `cacRegNo`) is a public
 * registry entry, shown as the business verification page shows it.
 */
export const IDENTITY_NUMBER_FIELDS = ['idnumber', 'bvn', 'nin', 'vnin', 'licenseno', 'licenceno', 'licensenumber', 'licencenumber', 'vin', 'tin', 'jittin'] as const;

const FIELDS: Record<PersonalField, readonly string[]> = {
  identityNumber: IDENTITY_NUMBER_FIELDS,
  phone: ['phone', 'phonenumber', 'mobile', 'msisdn'],
  email: ['email', 'emailaddress'],
  // The employer's attestator gives a phone or an email.
  contact: ['contact'],
  birthDate: ['birthdate', 'dob', 'dateofbirth'],
  // The person's face: a registry photo (base64, a data URL or a URL) or the applicant's. A
  // verification's `photos` (the agent's pictures of the place, signed links) are not a face.
  photo: ['photo', 'photourl', 'image', 'selfie', 'portrait', 'picture'],
  // Where the end user accepted the consent from (a session's userConsent.ip).
  ipAddress: ['ip', 'ipaddress'],
};

const BY_NAME = new Map(Object.entries(FIELDS).flatMap(([kind, names]) => names.map((name) => [name, kind as PersonalField])));

/** The kind of personal data a field of this name holds, or undefined for any other field. */
export function personalFieldOf(key: string): PersonalField | undefined {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  // The name's last words: `driversLicenseNo` is tried as `no`, `licenseno`, `driverslicenseno`.
  let tail = '';
  for (let i = words.length - 1; i >= 0; i--) {
    tail = words[i] + tail;
    const kind = BY_NAME.get(tail);
    if (kind) return kind;
  }
  return undefined;
}

/**
 * The record with every identity number masked (first three and last two characters), at any
 * depth: what the portal shows of a record to every role. A number given as a JSON number (the
 * spec allows it for a NIN) is masked as its digits.
 */
export function maskIdentityNumbers<T>(value: T): T {
  const walk = (item: unknown, key: string | undefined): unknown => {
    const identityNumber = key !== undefined && personalFieldOf(key) === 'identityNumber';
    if (typeof item === 'string') return identityNumber && item !== '' ? maskIdentifier(item) : item;
    if (typeof item === 'number') return identityNumber ? maskIdentifier(String(item)) : item;
    if (Array.isArray(item)) return item.map((element) => walk(element, key));
    if (item && typeof item === 'object') return Object.fromEntries(Object.entries(item).map(([name, field]) => [name, walk(field, name)]));
    return item;
  };
  return walk(value, undefined) as T;
}
