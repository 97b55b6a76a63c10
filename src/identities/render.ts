import type { PayloadType } from '../platform/db/schema.js';
import { datesMatch, gendersMatch, namesMatch, phonesMatch, emailsMatch } from './matching.js';
import type {
  BvnRecord,
  CacRecord,
  DriversLicenseRecord,
  NinRecord,
  TinRecord,
  VinRecord,
  VninRecord,
} from './records.js';

/** Turns registry records into the spec's `data` records, with field matches and payload rules. */

export interface SuppliedApplicant {
  firstname?: string | undefined;
  lastname?: string | undefined;
  dob?: string | undefined;
}

interface PersonRecord {
  firstname: string;
  lastname: string;
  birthdate?: string | undefined;
}

/** The three-key field matches; a field the caller did not send is `false` (not verified). */
export function fieldMatches(applicant: SuppliedApplicant, record: PersonRecord) {
  return {
    firstname: namesMatch(applicant.firstname, record.firstname),
    lastname: namesMatch(applicant.lastname, record.lastname),
    dob: datesMatch(applicant.dob, record.birthdate),
  };
}

const PREMIUM_FIELDS = [
  'maritalStatus',
  'lgaOfResidence',
  'lgaOfOrigin',
  'residentialAddress',
  'stateOfOrigin',
  'enrollmentBank',
  'enrollmentBranch',
  'nameOnCard',
  'title',
  'levelOfAccount',
] as const;

export function renderBvn(record: BvnRecord, applicant: SuppliedApplicant, premium: boolean) {
  const matches = fieldMatches(applicant, record);
  const data: Record<string, unknown> = {
    bvn: record.bvn,
    firstname: record.firstname,
    lastname: record.lastname,
    middlename: record.middlename ?? '',
    gender: record.gender,
    phone: record.phone,
    birthdate: record.birthdate,
    photo: record.photo ?? '',
    fieldMatches: premium ? matches : { firstname: matches.firstname, lastname: matches.lastname },
  };
  if (premium) for (const field of PREMIUM_FIELDS) data[field] = record[field] ?? '';
  return data;
}

export interface BvnMatchInput extends SuppliedApplicant {
  gender?: string | undefined;
  phoneNumber?: string | undefined;
  emailAddress?: string | undefined;
}

export function renderBvnMatch(record: BvnRecord, input: BvnMatchInput) {
  return {
    bvn: record.bvn,
    fieldMatches: {
      ...fieldMatches(input, record),
      gender: gendersMatch(input.gender, record.gender),
      phoneNumber: phonesMatch(input.phoneNumber, record.phone),
      emailAddress: emailsMatch(input.emailAddress, record.email),
    },
  };
}

/** HALF accounts receive the NIN record without the phone and the photo (docs/identity-lookups.md, "Payload types"). */
export function renderNin(record: NinRecord, applicant: SuppliedApplicant, payload: PayloadType) {
  return {
    fieldMatches: fieldMatches(applicant, record),
    nin: record.nin,
    firstname: record.firstname,
    lastname: record.lastname,
    middlename: record.middlename ?? '',
    ...(payload === 'FULL' ? { phone: record.phone ?? '' } : {}),
    gender: record.gender,
    birthdate: record.birthdate,
    ...(payload === 'FULL' ? { photo: record.photo ?? '' } : {}),
  };
}

export function renderVnin(record: VninRecord, applicant: SuppliedApplicant, payload: PayloadType) {
  return {
    id: record.id,
    firstname: record.firstname,
    lastname: record.lastname,
    birthdate: record.birthdate,
    gender: record.gender,
    ...(payload === 'FULL' ? { phone: record.phone ?? '', photo: record.photo ?? '' } : {}),
    vNin: record.vNin,
    fieldMatches: fieldMatches(applicant, record),
  };
}

export function renderDriversLicense(record: DriversLicenseRecord, applicant: SuppliedApplicant) {
  return {
    fieldMatches: fieldMatches(applicant, record),
    licenseNo: record.licenseNo,
    firstname: record.firstname,
    lastname: record.lastname,
    issuedDate: record.issuedDate,
    expiryDate: record.expiryDate,
    stateOfIssue: record.stateOfIssue,
    gender: record.gender,
    birthdate: record.birthdate,
    photo: record.photo ?? '',
  };
}

export function renderVin(record: VinRecord) {
  return {
    fullname: record.fullname,
    vin: record.vin,
    gender: record.gender,
    occupation: record.occupation ?? '',
    pollingUnitCode: record.pollingUnitCode ?? '',
    firstName: record.firstName,
    lastName: record.lastName,
  };
}

export function renderCac(record: CacRecord) {
  return {
    rcNumber: String(record.rcNumber),
    companyName: record.companyName,
    companyType: record.companyType ?? '',
    registrationDate: record.registrationDate ?? '',
    branchAddress: record.branchAddress ?? '',
    headOfficeAddress: record.headOfficeAddress ?? '',
    companyEmail: record.companyEmail ?? '',
    city: record.city ?? '',
    lga: record.lga ?? '',
    state: record.state ?? '',
    classification: record.classification ?? '',
    affiliates: record.affiliates ?? 0,
    shareCapital: record.shareCapital ?? '',
    shareCapitalInWords: record.shareCapitalInWords ?? '',
    status: record.status,
  };
}

export function renderTin(record: TinRecord) {
  return {
    tin: record.tin,
    taxpayerName: record.taxpayerName,
    cacRegNo: record.cacRegNo ?? '',
    entityType: record.entityType ?? '',
    jittin: record.jittin ?? '',
    taxOffice: record.taxOffice ?? '',
    phone: record.phone ?? '',
    email: record.email ?? '',
  };
}
