import type { NinRecord, TinRecord, VninRecord } from '../../records.js';
import { UpstreamFailure } from '../adapter.js';

/**
 * Youverify's answers (doc.youverify.co, "ID Data Matching (eIDV)" and "KYB") onto our records.
 * Every answer is an envelope `{ success, statusCode, message, data }`; `data.status` is `found`
 * or `not_found`. Messages name the missing field, never its value: they are logged.
 */

type Data = Record<string, unknown>;

/** The envelope's `data`, or undefined for the documented `not_found` answer. */
export function foundData(body: unknown): Data | undefined {
  if (!isObject(body)) throw malformed('body is not a JSON object');
  const data = body.data;
  if (!isObject(data)) throw malformed('data missing');
  if (data.status === 'not_found') return undefined;
  if (data.status !== 'found') throw malformed('data.status is neither found nor not_found');
  return data;
}

export function toNinRecord(data: Data): NinRecord {
  const record: NinRecord = {
    nin: digits(required(data, 'idNumber'), 11, 'idNumber'),
    firstname: required(data, 'firstName'),
    lastname: required(data, 'lastName'),
    gender: gender(required(data, 'gender'), 'gender'),
    birthdate: dayMonthYear(required(data, 'dateOfBirth'), 'dateOfBirth'),
  };
  const middlename = optional(data, 'middleName');
  if (middlename) record.middlename = middlename;
  const phone = optional(data, 'mobile');
  if (phone) record.phone = localPhone(phone);
  const photo = optional(data, 'image');
  if (photo) record.photo = plainBase64(photo);
  return record;
}

export function toVninRecord(data: Data): VninRecord {
  const vNin = required(data, 'vNIN').toUpperCase();
  if (!/^[A-Z0-9]{16}$/.test(vNin)) throw malformed('data.vNIN is not 16 letters and digits');
  const record: VninRecord = {
    id: numericId(required(data, 'id')),
    vNin,
    firstname: required(data, 'firstName'),
    lastname: required(data, 'lastName'),
    birthdate: dayMonthYear(required(data, 'dateOfBirth'), 'dateOfBirth'),
    gender: gender(required(data, 'gender'), 'gender'),
  };
  const phone = optional(data, 'mobile');
  if (phone) record.phone = localPhone(phone);
  // Our vNIN record holds a URL: a data: URL is one, so the image is kept as given.
  const photo = optional(data, 'image');
  if (photo) record.photo = photo.startsWith('data:') ? photo : `data:image/jpeg;base64,${photo}`;
  return record;
}

export function toTinRecord(data: Data): TinRecord {
  const tin = required(data, 'tin').toUpperCase();
  if (!/^[A-Z0-9]{8}-[A-Z0-9]{4}$/.test(tin)) throw malformed('data.tin is not of the form 12345678-0001');
  const record: TinRecord = { tin, taxpayerName: required(data, 'name') };
  const cacRegNo = optional(data, 'registrationNumber');
  if (cacRegNo) record.cacRegNo = cacRegNo;
  const jittin = optional(data, 'jtbTin');
  if (jittin) record.jittin = jittin;
  const taxOffice = optional(data, 'taxOffice');
  if (taxOffice) record.taxOffice = taxOffice;
  const phone = optional(data, 'phone');
  if (phone) record.phone = phone;
  const email = optional(data, 'email');
  if (email) record.email = email;
  return record;
}

function required(data: Data, field: string): string {
  const value = optional(data, field);
  if (!value) throw malformed(`data.${field} missing`);
  return value;
}

/** A non-empty trimmed string, or undefined when absent, null or blank; any other type is malformed. */
function optional(data: Data, field: string): string | undefined {
  const value = data[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw malformed(`data.${field} is not a string`);
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function digits(value: string, length: number, field: string): string {
  if (!new RegExp(`^\\d{${length}}$`).test(value)) throw malformed(`data.${field} is not ${length} digits`);
  return value;
}

/** Youverify documents ISO dates (`1988-04-04`); a day-first date is accepted as it is. */
export function dayMonthYear(value: string, field: string): string {
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:T.*)?$/.exec(value);
  if (iso) return `${iso[3]}-${iso[2]}-${iso[1]}`;
  const dmy = /^(\d{2})[-/](\d{2})[-/](\d{4})$/.exec(value);
  if (dmy) return `${dmy[1]}-${dmy[2]}-${dmy[3]}`;
  throw malformed(`data.${field} is not a date`);
}

/** The documented genders are `f`, `m`, `male` and `female`, in any case. */
export function gender(value: string, field: string): string {
  const lower = value.toLowerCase();
  if (lower === 'm' || lower === 'male') return 'Male';
  if (lower === 'f' || lower === 'female') return 'Female';
  throw malformed(`data.${field} is neither male nor female`);
}

/** Youverify answers local (`08000000000`) and international without plus (`2348000000000`) numbers. */
export function localPhone(value: string): string {
  const compact = value.replace(/[\s-]/g, '');
  const international = /^\+?234(\d{10})$/.exec(compact);
  return international ? `0${international[1]}` : compact;
}

/** Strips a `data:image/...;base64,` prefix: our records hold the bare base64. */
export function plainBase64(value: string): string {
  const comma = value.indexOf(',');
  return value.startsWith('data:') && comma !== -1 ? value.slice(comma + 1) : value;
}

/**
 * Our vNIN record carries a positive integer id; Youverify's is a 24-digit hex object id. Its last
 * 12 hex digits (the random part and the counter) make a stable integer below 2^48.
 */
function numericId(value: string): number {
  if (!/^[0-9a-fA-F]{24}$/.test(value)) throw malformed('data.id is not an object id');
  return Number.parseInt(value.slice(12), 16) || 1;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(message: string): UpstreamFailure {
  return new UpstreamFailure('malformed', message);
}
