import { createHash } from 'node:crypto';
import { UpstreamFailure, type UpstreamRecordOf, type UpstreamType } from '../adapter.js';
import type { BvnRecord, CacRecord, DriversLicenseRecord, NinRecord, TinRecord, VinRecord, VninRecord } from '../../records.js';
import { compact, optionalDate, optionalPhoto, optionalText, requiredDate, requiredText, toGender, type Entity } from './fields.js';
import { parseCacKey } from './requests.js';

/**
 * Dojah's `entity` objects → our records, one function per lookup. Field names are the ones in
 * Dojah's documentation (docs/upstreams-dojah.md lists each mapping and its source). Only known
 * fields are read: the records allow no others.
 */

type Mapper<T extends UpstreamType> = (entity: Entity, key: string) => UpstreamRecordOf[T];

function malformed(message: string): UpstreamFailure {
  return new UpstreamFailure('malformed', message);
}

/** GET /api/v1/kyc/bvn/advance */
export function mapBvn(entity: Entity, key: string): BvnRecord {
  const bvn = optionalText(entity, 'bvn') ?? key;
  if (!/^\d{11}$/.test(bvn)) throw malformed('entity.bvn is not an 11-digit BVN');
  return compact({
    bvn,
    firstname: requiredText(entity, 'first_name'),
    lastname: requiredText(entity, 'last_name'),
    middlename: optionalText(entity, 'middle_name'),
    gender: toGender(requiredText(entity, 'gender')),
    phone: requiredText(entity, 'phone_number1', 'phone_number'),
    birthdate: requiredDate(entity, 'date_of_birth'),
    photo: optionalPhoto(entity, 'image'),
    email: optionalText(entity, 'email'),
    nationality: optionalText(entity, 'nationality'),
    maritalStatus: optionalText(entity, 'marital_status'),
    lgaOfResidence: optionalText(entity, 'lga_of_residence'),
    lgaOfOrigin: optionalText(entity, 'lga_of_origin'),
    residentialAddress: optionalText(entity, 'residential_address'),
    stateOfOrigin: optionalText(entity, 'state_of_origin'),
    enrollmentBank: optionalText(entity, 'enrollment_bank'),
    enrollmentBranch: optionalText(entity, 'enrollment_branch'),
    nameOnCard: optionalText(entity, 'name_on_card'),
    title: optionalText(entity, 'title'),
    levelOfAccount: optionalText(entity, 'level_of_account'),
  });
}

/**
 * GET /api/v1/kyc/nin. Dojah's API reference spells the fields `first_name`, `surname`,
 * `birth_date`, `telephone`, `picture` and does not echo the NIN; its SDK samples spell them
 * `firstname`, `surname`, `birthdate`, `telephoneno`, `photo` with `nin`. Both are read.
 */
export function mapNin(entity: Entity, key: string): NinRecord {
  const nin = optionalText(entity, 'nin') ?? key;
  if (!/^\d{11}$/.test(nin)) throw malformed('entity.nin is not an 11-digit NIN');
  return compact({
    nin,
    firstname: requiredText(entity, 'first_name', 'firstname'),
    lastname: requiredText(entity, 'surname', 'last_name', 'lastname'),
    middlename: optionalText(entity, 'middle_name', 'middlename'),
    phone: optionalText(entity, 'telephone', 'telephoneno', 'phone_number'),
    gender: toGender(requiredText(entity, 'gender')),
    birthdate: requiredDate(entity, 'birth_date', 'birthdate', 'date_of_birth'),
    photo: optionalPhoto(entity, 'picture', 'photo', 'image'),
    nationality: optionalText(entity, 'nationality'),
  });
}

/**
 * GET /api/v1/kyc/phone_number (the "advance" phone lookup, which answers the NIMC record held
 * for the number, camelCase). The NIN is required: without it the answer is not a NIN record.
 */
export function mapNinByPhone(entity: Entity): NinRecord {
  const nin = requiredText(entity, 'nin');
  if (!/^\d{11}$/.test(nin)) throw malformed('entity.nin is not an 11-digit NIN');
  return compact({
    nin,
    firstname: requiredText(entity, 'firstName'),
    lastname: requiredText(entity, 'lastName'),
    middlename: optionalText(entity, 'middleName'),
    phone: optionalText(entity, 'msisdn'),
    gender: toGender(requiredText(entity, 'gender')),
    birthdate: requiredDate(entity, 'birthDate'),
    photo: optionalPhoto(entity, 'picture'),
  });
}

/**
 * GET /api/v1/kyc/vnin. Dojah has no numeric record id: ours is derived from the vNIN so the
 * same vNIN always answers the same id. The photo is a data URL, as the vNIN record's photo is a
 * URL (the embedded registry answers the same shape), and the gender stays a letter (`M`/`F`).
 */
export function mapVnin(entity: Entity, key: string): VninRecord {
  const vNin = (optionalText(entity, 'vnin') ?? key).toUpperCase();
  if (!/^[A-Z0-9]{16}$/.test(vNin)) throw malformed('entity.vnin is not a 16-character vNIN');
  const photo = optionalPhoto(entity, 'photo');
  return compact({
    id: idOf(vNin),
    vNin,
    firstname: requiredText(entity, 'firstname'),
    lastname: requiredText(entity, 'surname'),
    birthdate: requiredDate(entity, 'dateOfBirth', 'birthdate'),
    gender: toGender(requiredText(entity, 'gender')).charAt(0).toUpperCase(),
    phone: optionalText(entity, 'mobile', 'telephoneno'),
    photo: photo === undefined ? undefined : `data:image/jpeg;base64,${photo}`,
  });
}

function idOf(vNin: string): number {
  return (createHash('sha256').update(vNin).digest().readUInt32BE(0) & 0x7fffffff) || 1;
}

/** GET /api/v1/kyc/dl */
export function mapDriversLicense(entity: Entity, key: string): DriversLicenseRecord {
  const licenseNo = optionalText(entity, 'licenseNo') ?? key;
  if (!/^[A-Za-z0-9]{6,20}$/.test(licenseNo)) throw malformed('entity.licenseNo is not a licence number');
  return compact({
    licenseNo,
    firstname: requiredText(entity, 'firstName'),
    lastname: requiredText(entity, 'lastName'),
    middlename: optionalText(entity, 'middleName'),
    issuedDate: requiredDate(entity, 'issuedDate'),
    expiryDate: requiredDate(entity, 'expiryDate'),
    stateOfIssue: requiredText(entity, 'stateOfIssue'),
    gender: toGender(requiredText(entity, 'gender')),
    birthdate: requiredDate(entity, 'birthDate'),
    photo: optionalPhoto(entity, 'photo'),
  });
}

/**
 * GET /api/v1/kyc/vin. The generated SDK's copy of the sample has a colon at the end of most
 * keys (`"gender:"`), an artefact of its conversion; both spellings are read. INEC writes the
 * full name surname first (`SALIU MOSHOOD KOLAWOLE`), so the last name is the first word.
 */
export function mapVin(entity: Entity, key: string): VinRecord {
  const field = (name: string) => optionalText(entity, name, `${name}:`);
  const vin = (field('voter_identification_number') ?? key).toUpperCase();
  if (!/^[A-Z0-9]{9,25}$/.test(vin)) throw malformed('entity.voter_identification_number is not a VIN');
  const fullname = field('full_name');
  if (fullname === undefined) throw malformed('entity.full_name missing');
  const gender = field('gender');
  if (gender === undefined) throw malformed('entity.gender missing');
  const [lastName = '', firstName = ''] = fullname.split(/\s+/);
  return compact({
    vin,
    fullname,
    firstName,
    lastName,
    gender: toGender(gender),
    occupation: field('occupation'),
    pollingUnitCode: field('polling_unit_code'),
    birthdate: optionalDate(entity, 'date_of_birth', 'date_of_birth:'),
  });
}

/** GET /api/v1/kyc/cac/basic. The type is the one we asked for; Dojah's status is `ACTIVE` or words like `Not Active`. */
export function mapCac(entity: Entity, key: string): CacRecord {
  const { type, rcNumber } = parseCacKey(key);
  const status = requiredText(entity, 'status').toUpperCase().replace(/[\s_-]+/g, ' ');
  return compact({
    type,
    rcNumber: optionalText(entity, 'rc_number') ?? rcNumber,
    companyName: requiredText(entity, 'company_name'),
    companyType: optionalText(entity, 'type_of_company'),
    registrationDate: optionalText(entity, 'date_of_registration'),
    headOfficeAddress: optionalText(entity, 'address'),
    companyEmail: optionalText(entity, 'email'),
    city: optionalText(entity, 'city'),
    lga: optionalText(entity, 'lga'),
    state: optionalText(entity, 'state'),
    status: status === 'ACTIVE' ? 'ACTIVE' : 'INACTIVE',
  } satisfies CacRecord);
}

/** GET /api/v1/kyc/tin. `N/A` is how Dojah says a field is empty. */
export function mapTin(entity: Entity, key: string): TinRecord {
  const text = (name: string) => {
    const value = optionalText(entity, name);
    return value?.toUpperCase() === 'N/A' ? '' : value;
  };
  const tin = (text('FIRSTIN') || text('Search') || key).toUpperCase();
  if (!/^[A-Z0-9]{8}-[A-Z0-9]{4}$/.test(tin)) throw malformed('entity.FIRSTIN is not a TIN');
  return compact({
    tin,
    taxpayerName: requiredText(entity, 'Taxpayer_Name'),
    cacRegNo: text('CAC_Reg_No'),
    jittin: text('JITTIN'),
    taxOffice: text('Tax_Office'),
    phone: text('Phone_No'),
    email: text('Email'),
  });
}

export const MAPPERS: { [T in UpstreamType]: Mapper<T> } = {
  bvn: mapBvn,
  nin: mapNin,
  nin_phone: mapNinByPhone,
  vnin: mapVnin,
  drivers_license: mapDriversLicense,
  vin: mapVin,
  cac: mapCac,
  tin: mapTin,
};
