import { createHash } from 'node:crypto';
import type { StoredApplicant } from '../agents/visit.js';
import { formatDmy, normalizeGender, normalizePhone, parseDate } from '../identities/matching.js';
import { resolveState, resolveLga } from '../locations/nigeria.js';
import type { RiskLevel } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';

/**
 * Checks of field-verification requests (address and business) that a JSON schema cannot
 * express: enumerations read loosely, Nigerian phones, DD-MM-YYYY dates, states and LGAs, the
 * risk level's applicant fields. Every problem is collected, so one 400 names them all.
 */

export interface ApplicantInput {
  firstname?: string | undefined;
  lastname?: string | undefined;
  middlename?: string | undefined;
  dob?: string | undefined;
  phone?: string | undefined;
  email?: string | undefined;
  idType?: string | undefined;
  idNumber?: string | undefined;
  gender?: string | undefined;
  photo?: string | undefined;
}

export class Problems {
  private readonly list: string[] = [];
  add(message: string): void {
    this.list.push(message);
  }
  /** Throws 400 VALIDATION_ERROR naming every problem, if there is any. */
  throwIfAny(): void {
    if (this.list.length > 0) throw new ApiError('VALIDATION_ERROR', this.list.join('; '));
  }
}

export function text(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/;
const DMY = /^\d{2}-\d{2}-\d{4}$/;
const ELEVEN_DIGITS = /^\d{11}$/;
const LICENCE = /^[A-Z0-9]{6,20}$/;
const REFERENCE = /^[\x21-\x7e]{1,100}$/;

/** Required applicant fields of each risk level (spec: Risk levels). */
export const RISK_FIELDS: Record<RiskLevel, readonly ('lastname' | 'firstname' | 'dob')[]> = {
  NONE: [],
  LOW: ['lastname'],
  MEDIUM: ['lastname', 'firstname'],
  HIGH: ['firstname', 'lastname', 'dob'],
};

const RISK_ORDER: readonly RiskLevel[] = ['NONE', 'LOW', 'MEDIUM', 'HIGH'];

/** 403 when the organization's risk level is below the verification type's minimum (spec rule 2). */
export function requireMinimumRisk(riskLevel: RiskLevel, minimum: RiskLevel, what: string): void {
  if (RISK_ORDER.indexOf(riskLevel) < RISK_ORDER.indexOf(minimum)) {
    throw new ApiError(
      'FORBIDDEN',
      `${what} needs an account risk level of ${minimum} or higher; this account is at ${riskLevel}. Ask your account manager to change it.`,
    );
  }
}

/** How an identity number is compared: the class of document, and the number in one spelling. */
export type IdClass = 'BVN' | 'NIN' | 'PHONE' | 'FRSC';

const ID_CLASS: Record<string, IdClass> = {
  BVN: 'BVN',
  NIN: 'NIN',
  KYC: 'PHONE',
  'KYC PHONE': 'PHONE',
  'DRIVERS LICENCE': 'FRSC',
  FRSC: 'FRSC',
};

/** The idType when it is one of `allowed`, spelled exactly so (surrounding spaces aside). */
/**
 * The documented form of an idType, read in any letter case and spacing (`"bvn"`, `"Kyc  phone"`):
 * clients in the wild send the business endpoint the identity endpoints' lowercase. The record
 * keeps the documented form.
 */
function canonicalIdType(raw: string, allowed: readonly string[]): string | undefined {
  const value = raw.trim().replace(/\s+/g, ' ').toUpperCase();
  return allowed.find((option) => option.toUpperCase() === value);
}

/** The id number in its canonical form for the class, or undefined when malformed. */
export function canonicalIdNumber(idClass: IdClass, raw: string): string | undefined {
  switch (idClass) {
    case 'BVN':
    case 'NIN': {
      const digits = raw.replace(/[\s-]+/g, '');
      return ELEVEN_DIGITS.test(digits) ? digits : undefined;
    }
    case 'PHONE':
      return normalizePhone(raw);
    case 'FRSC': {
      const compact = raw.replace(/[\s-]+/g, '').toUpperCase();
      return LICENCE.test(compact) ? compact : undefined;
    }
  }
}

const ID_NUMBER_HINT: Record<IdClass, string> = {
  BVN: 'an 11-digit BVN',
  NIN: 'an 11-digit NIN',
  PHONE: 'a valid Nigerian phone number',
  FRSC: "a drivers licence number (6 to 20 letters and digits)",
};

/** SHA-256 of "<class>:<number>": what the address-by-identity lookup searches; never the number. */
export function identityKey(idClass: IdClass, idNumber: string): string {
  return createHash('sha256').update(`${idClass}:${idNumber}`).digest('hex');
}

export interface ApplicantRules {
  /** Fields required whatever the risk level. */
  required: readonly (keyof ApplicantInput)[];
  riskLevel: RiskLevel;
  idTypes: readonly string[];
}

export interface CheckedApplicant {
  applicant: StoredApplicant;
  /** The identity key, when an idType and idNumber were given. */
  identityKey: string | undefined;
}

/** Validates the applicant (or contact person) object; problems are added as `applicant.<field> ...`. */
export function checkApplicant(raw: ApplicantInput | undefined, rules: ApplicantRules, problems: Problems): CheckedApplicant {
  const input = raw ?? {};
  const out: StoredApplicant = {};
  const required = new Set<keyof ApplicantInput>([...rules.required, ...RISK_FIELDS[rules.riskLevel]]);
  for (const field of required) {
    if (text(input[field]) === undefined) {
      const byRisk = (RISK_FIELDS[rules.riskLevel] as readonly string[]).includes(field) && !rules.required.includes(field);
      const why = byRisk ? ` for this account's risk level (${rules.riskLevel})` : '';
      problems.add(`applicant.${field} is required${why}`);
    }
  }
  for (const field of ['firstname', 'lastname', 'middlename'] as const) {
    const value = text(input[field]);
    if (value === undefined) continue;
    if (value.length > 100) problems.add(`applicant.${field} must be at most 100 characters`);
    else out[field] = value;
  }
  const dob = text(input.dob);
  if (dob !== undefined) {
    const date = DMY.test(dob) ? parseDate(dob) : undefined;
    if (!date) problems.add('applicant.dob must be a valid date written DD-MM-YYYY');
    else out.birthdate = formatDmy(date);
  }
  const phone = text(input.phone);
  if (phone !== undefined) {
    const normalized = normalizePhone(phone);
    if (!normalized) problems.add('applicant.phone must be a valid Nigerian phone number');
    else out.phone = normalized;
  }
  const email = text(input.email);
  if (email !== undefined) {
    if (!EMAIL.test(email) || email.length > 254) problems.add('applicant.email must be an email address');
    else out.email = email.toLowerCase();
  }
  const gender = text(input.gender);
  if (gender !== undefined) {
    const normalized = normalizeGender(gender);
    if (!normalized) problems.add('applicant.gender must be M, F, Male or Female');
    else out.gender = normalized;
  }
  const photo = text(input.photo);
  if (photo !== undefined) {
    if (!/^https?:\/\/\S+$/i.test(photo) || photo.length > 2048) problems.add('applicant.photo must be an http(s) URL');
    else out.photo = photo;
  }
  let key: string | undefined;
  const idTypeRaw = text(input.idType);
  const idNumberRaw = text(input.idNumber);
  if (idTypeRaw !== undefined) {
    const idType = canonicalIdType(idTypeRaw, rules.idTypes);
    if (!idType) {
      problems.add(`applicant.idType must be one of ${rules.idTypes.join(', ')}`);
    } else {
      out.idType = idType;
      if (idNumberRaw === undefined) {
        if (!required.has('idNumber')) problems.add('applicant.idNumber is required with applicant.idType');
      } else {
        const idClass = ID_CLASS[idType]!;
        const idNumber = canonicalIdNumber(idClass, idNumberRaw);
        if (!idNumber) problems.add(`applicant.idNumber must be ${ID_NUMBER_HINT[idClass]} for idType ${idType}`);
        else {
          out.idNumber = idNumber;
          key = identityKey(idClass, idNumber);
        }
      }
    }
  } else if (idNumberRaw !== undefined && !required.has('idType')) {
    problems.add('applicant.idType is required with applicant.idNumber');
  }
  return { applicant: out, identityKey: key };
}

export interface PlaceInput {
  street?: string | undefined;
  city?: string | undefined;
  landmark?: string | undefined;
  lga?: string | undefined;
  state?: string | undefined;
  country?: string | undefined;
}

export interface Place {
  street: string;
  city: string;
  landmark: string;
  lga: string;
  state: string;
  country: string;
}

/** Validates street, state (36 states + FCT) and lga (one of that state's 774), read loosely; answers canonical names. */
export function checkPlace(input: PlaceInput, problems: Problems): Place {
  const street = text(input.street);
  if (street === undefined) problems.add('street is required');
  else if (street.length > 300) problems.add('street must be at most 300 characters');
  const stateRaw = text(input.state);
  const lgaRaw = text(input.lga);
  let state: string | undefined;
  let lga: string | undefined;
  if (stateRaw === undefined) problems.add('state is required');
  else {
    state = resolveState(stateRaw);
    if (!state) problems.add(`state "${stateRaw}" is not a Nigerian state (one of the 36 states or FCT)`);
  }
  if (lgaRaw === undefined) problems.add('lga is required');
  else if (state) {
    lga = resolveLga(state, lgaRaw);
    if (!lga) problems.add(`lga "${lgaRaw}" is not a local government area of ${state}`);
  }
  const country = text(input.country);
  if (country !== undefined && !/^(nigeria|ng|nga)$/i.test(country)) problems.add('country must be Nigeria');
  const city = text(input.city) ?? '';
  const landmark = text(input.landmark) ?? '';
  if (city.length > 100) problems.add('city must be at most 100 characters');
  if (landmark.length > 300) problems.add('landmark must be at most 300 characters');
  return { street: street ?? '', city, landmark, lga: lga ?? '', state: state ?? '', country: 'Nigeria' };
}

/** The caller's reference, or undefined to generate one; problems when malformed. */
export function checkReference(raw: string | undefined, problems: Problems): string | undefined {
  if (raw === undefined) return undefined;
  const reference = raw.trim();
  if (reference === '') return undefined;
  if (!REFERENCE.test(reference)) problems.add('reference must be 1 to 100 visible ASCII characters without spaces');
  return reference;
}
