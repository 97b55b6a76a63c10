import { resolveLga, resolveState } from '../locations/nigeria.js';
import type { RiskLevel } from '../platform/db/schema.js';
import { normalizePhone } from '../identities/matching.js';
import { workflowConsent, type Consent } from '../consent/consent.js';
import { checkDob, checkEmail, checkPhone, checkReference, checkRiskFields, limited, Problems, text } from '../respondents/fields.js';
import type { CreateGuarantorBody } from './schemas.js';
import type { GuarantorAddress, GuarantorApplicant, GuarantorIdType } from './tables.js';

/**
 * The IDs a guarantor may be asked for. Requests spell them as the spec's field table does
 * (`BVN`, `NIN`, `Drivers license`); records use the codes the spec's records show (`FRSC` for a
 * drivers license, issued by the Federal Road Safety Corps). `FRSC` and `VIN` (voters card) are
 * accepted in requests too, so a record's values can be sent back. `PN` (passport) cannot be
 * checked: no passport registry is connected.
 */
const ID_TYPES = new Map<string, GuarantorIdType>([
  ['BVN', 'BVN'],
  ['NIN', 'NIN'],
  ['DRIVERS LICENSE', 'FRSC'],
  ['DRIVERS LICENCE', 'FRSC'],
  ['FRSC', 'FRSC'],
  ['VIN', 'VIN'],
]);

/** Case, spaces, underscores and hyphens aside: "Drivers license", "DRIVERS_LICENSE" and "drivers-license" are one. */
function enumKey(value: string): string {
  return value.trim().toUpperCase().replace(/[\s_-]+/g, ' ');
}

export const DEFAULT_ID_TYPES: readonly GuarantorIdType[] = ['BVN', 'NIN', 'FRSC'];

const APPLICANT_ID_TYPES = ['BVN', 'NIN', 'KYC'] as const;

export interface GuarantorInput {
  reference: string;
  applicant: GuarantorApplicant;
  firstname: string;
  lastname: string;
  phone: string;
  email: string;
  acceptableIdTypes: GuarantorIdType[];
  address: GuarantorAddress;
  verifyAddress: boolean;
  /** The person's consent (src/consent/consent.ts), when given. */
  consent?: Consent | undefined;
}

function acceptableIdTypes(problems: Problems, values: readonly string[] | undefined): GuarantorIdType[] {
  if (values === undefined) return [...DEFAULT_ID_TYPES];
  const codes = new Set<GuarantorIdType>();
  // "NIN,BVN" as one string is read as two values.
  const items = values.flatMap((item) => item.split(',')).map((item) => item.trim()).filter(Boolean);
  if (items.length === 0) problems.add('acceptableIdType must name at least one ID type');
  for (const value of items) {
    const code = ID_TYPES.get(enumKey(value));
    if (code) codes.add(code);
    else if (enumKey(value) === 'PN') problems.add('acceptableIdType PN (passport) cannot be checked yet; use BVN, NIN or Drivers license');
    else problems.add(`acceptableIdType "${value}" is not one of BVN, NIN, Drivers license`);
  }
  return [...codes];
}

function applicantOf(problems: Problems, body: CreateGuarantorBody, riskLevel: RiskLevel, now: Date): GuarantorApplicant {
  const input = body.applicant ?? {};
  checkRiskFields(problems, riskLevel, input);
  const rawIdType = text(input.idType);
  const idType = rawIdType === undefined ? undefined : APPLICANT_ID_TYPES.find((type) => type === enumKey(rawIdType));
  const idNumber = text(input.idNumber);
  if (rawIdType !== undefined && idType === undefined) problems.add('applicant.idType must be one of BVN, NIN, KYC');
  if ((rawIdType === undefined) !== (idNumber === undefined)) problems.add('applicant.idType and applicant.idNumber go together');
  if (idNumber !== undefined && (idType === 'BVN' || idType === 'NIN') && !/^\d{11}$/.test(idNumber)) {
    problems.add(`applicant.idNumber must be an ${idType} of 11 digits`);
  }
  if (idNumber !== undefined && idType === 'KYC' && !normalizePhone(idNumber)) {
    problems.add('applicant.idNumber must be a Nigerian phone number for idType KYC');
  }
  return {
    idType: idType ?? '',
    idNumber: idNumber ?? '',
    firstname: limited(problems, 'applicant.firstname', input.firstname, 100) ?? '',
    middlename: limited(problems, 'applicant.middlename', input.middlename, 100) ?? '',
    lastname: limited(problems, 'applicant.lastname', input.lastname, 100) ?? '',
    phone: checkPhone(problems, 'applicant.phone', input.phone) ?? '',
    gender: limited(problems, 'applicant.gender', input.gender, 20) ?? '',
    birthdate: checkDob(problems, 'applicant.dob', input.dob, now) ?? '',
    photo: '',
  };
}

function addressOf(problems: Problems, body: CreateGuarantorBody, verifyAddress: boolean): GuarantorAddress {
  const street = limited(problems, 'street', body.street, 300);
  const rawState = text(body.state);
  const rawLga = text(body.lga);
  if (verifyAddress) {
    for (const [field, value] of [['street', street], ['state', rawState], ['lga', rawLga]] as const) {
      if (value === undefined) problems.add(`${field} is required when verifyAddress is true`);
    }
  }
  let state = rawState ?? '';
  let lga = rawLga ?? '';
  if (rawState !== undefined) {
    const canonical = resolveState(rawState);
    if (canonical) state = canonical;
    else problems.add(`state "${rawState}" is not a Nigerian state (36 states and FCT)`);
    if (canonical && rawLga !== undefined) {
      const canonicalLga = resolveLga(canonical, rawLga);
      if (canonicalLga) lga = canonicalLga;
      else problems.add(`lga "${rawLga}" is not a local government area of ${canonical}`);
    }
  } else if (rawLga !== undefined) {
    problems.add('state is required with lga');
  }
  const city = limited(problems, 'city', body.city, 100) ?? '';
  const landmark = limited(problems, 'landmark', body.landmark, 300) ?? '';
  return { street: street ?? '', city, lga, state, landmark, country: 'Nigeria' };
}

/** Checks a create request and returns it in stored form; throws one 400 naming every problem. */
export function validateGuarantor(body: CreateGuarantorBody, riskLevel: RiskLevel, now: Date, consentRequired = false): GuarantorInput {
  const problems = new Problems();
  const verifyAddress = body.verifyAddress ?? false;
  const firstname = limited(problems, 'firstname', body.firstname, 100);
  const lastname = limited(problems, 'lastname', body.lastname, 100);
  if (firstname === undefined) problems.add('firstname must not be blank');
  if (lastname === undefined) problems.add('lastname must not be blank');
  const email = checkEmail(problems, 'email', body.email);
  if (email === undefined) problems.add('email must not be blank');
  const input: GuarantorInput = {
    reference: checkReference(problems, body.reference, 'gua'),
    applicant: applicantOf(problems, body, riskLevel, now),
    firstname: firstname ?? '',
    lastname: lastname ?? '',
    phone: checkPhone(problems, 'phone', body.phone) ?? '',
    email: email ?? '',
    acceptableIdTypes: acceptableIdTypes(problems, body.acceptableIdType ?? body.acceptableIdTypes),
    address: addressOf(problems, body, verifyAddress),
    verifyAddress,
    consent: workflowConsent(body.consent, consentRequired, problems),
  };
  problems.throwIfAny();
  return input;
}

export function formattedAddress(address: GuarantorAddress): string {
  const parts = [address.street, address.city, address.lga, address.state].filter((part) => part !== '');
  return parts.length > 0 ? [...parts, address.country].join(', ') : '';
}
