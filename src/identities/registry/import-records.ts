import { createHash } from 'node:crypto';
import { Type, type TObject } from 'typebox';
import { formatDmy, parseDate, type CalendarDate } from '../matching.js';
import {
  BvnRecord,
  CacRecord,
  DriversLicenseRecord,
  IDENTITY_TYPES,
  NinRecord,
  TinRecord,
  VinRecord,
  VninRecord,
  type IdentityType,
} from '../records.js';

/**
 * What a `vouch registry import` line may hold, and the record it stores. The import accepts more
 * than it stores: dates written day-month-year or ISO 8601, and a vNIN without its `id`. What is
 * stored, and so what lookups answer, is always the form of records.ts: `14-03-1990` for dates,
 * an ISO timestamp with offset for a company's registration date, a vNIN with an id.
 */

const DAY_MONTH_YEAR = String.raw`\d{2}-\d{2}-\d{4}|\d{2}/\d{2}/\d{4}`;
const ISO_DATE = String.raw`\d{4}-\d{2}-\d{2}`;
const TIMESTAMP = String.raw`\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)`;

const DATE_PATTERN = `^(?:${DAY_MONTH_YEAR}|${ISO_DATE})$`;
const TIMESTAMP_PATTERN = `^(?:${TIMESTAMP}|${ISO_DATE}|${DAY_MONTH_YEAR})$`;

const ImportDate = Type.String({
  pattern: DATE_PATTERN,
  description: 'a date written 14-03-1990, 14/03/1990 or 1990-03-14',
});
const ImportTimestamp = Type.String({
  pattern: TIMESTAMP_PATTERN,
  description: 'an ISO 8601 timestamp with offset (2015-06-18T00:00:00+01:00) or a date (2015-06-18, 18-06-2015)',
});

const CLOSED = { additionalProperties: false } as const;

/** The import line schemas: records.ts's, with every date field widened and the vNIN id optional. */
export const IMPORT_SCHEMAS = {
  bvn: Type.Object({ ...BvnRecord.properties, birthdate: ImportDate }, CLOSED),
  nin: Type.Object({ ...NinRecord.properties, birthdate: ImportDate }, CLOSED),
  vnin: Type.Object({ ...VninRecord.properties, id: Type.Optional(VninRecord.properties.id), birthdate: ImportDate }, CLOSED),
  drivers_license: Type.Object(
    { ...DriversLicenseRecord.properties, issuedDate: ImportDate, expiryDate: ImportDate, birthdate: ImportDate },
    CLOSED,
  ),
  vin: Type.Object({ ...VinRecord.properties, birthdate: Type.Optional(ImportDate) }, CLOSED),
  cac: Type.Object({ ...CacRecord.properties, registrationDate: Type.Optional(ImportTimestamp) }, CLOSED),
  tin: TinRecord,
} satisfies Record<IdentityType, TObject>;

function fieldsWith(schema: TObject, pattern: string): string[] {
  return Object.entries(schema.properties)
    .filter(([, field]) => (field as { pattern?: string }).pattern === pattern)
    .map(([name]) => name);
}

/** Every date field of every type, found in the schemas above so that a new one cannot be missed. */
export const DATE_FIELDS = Object.fromEntries(
  IDENTITY_TYPES.map((type) => [type, fieldsWith(IMPORT_SCHEMAS[type], DATE_PATTERN)]),
) as Record<IdentityType, string[]>;
const TIMESTAMP_FIELDS = Object.fromEntries(
  IDENTITY_TYPES.map((type) => [type, fieldsWith(IMPORT_SCHEMAS[type], TIMESTAMP_PATTERN)]),
) as Record<IdentityType, string[]>;

// Dates outside parseDate's years would never match a caller's date, so they are refused too.
const NOT_A_DATE = 'is not a real date (no such day or month, or a year outside 1900-2100)';

/**
 * The record a validated line stores, or why it is refused (field names only: the values are
 * personal data). Rewrites `record`, which the caller parsed for this purpose, in place.
 */
export function toStoredRecord(type: IdentityType, record: Record<string, unknown>, key: string): Record<string, unknown> | string {
  const problems: string[] = [];
  for (const name of DATE_FIELDS[type]) {
    if (record[name] === undefined) continue;
    const date = parseDate(record[name] as string);
    if (date === undefined) problems.push(`record.${name} ${NOT_A_DATE}`);
    else record[name] = formatDmy(date);
  }
  for (const name of TIMESTAMP_FIELDS[type]) {
    if (record[name] === undefined) continue;
    const timestamp = normalizeTimestamp(record[name] as string);
    if (timestamp === undefined) problems.push(`record.${name} ${NOT_A_DATE}, or no such time or offset`);
    else record[name] = timestamp;
  }
  if (problems.length > 0) return problems.join('; ');
  if (type === 'vnin' && record.id === undefined) return { id: vninId(key), ...record };
  return record;
}

/**
 * The id of a vNIN record that came without one: derived from its key, so that importing the
 * file again (after an interruption, or a new export) gives the record the same id. 52 bits of a
 * SHA-256, plus one: a positive safe integer that JSON clients read exactly.
 */
export function vninId(key: string): number {
  const digest = createHash('sha256').update(`vnin:${key}`).digest('hex');
  return Number.parseInt(digest.slice(0, 13), 16) + 1;
}

const STAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:[Zz]|([+-])(\d{2})(?::?(\d{2}))?)$/;

/**
 * One form for a registration date: `2015-06-18T09:30:00.000+01:00`, the test identities' form.
 * The offset is kept as written, so the calendar date stays the registry's; a bare date is
 * midnight UTC.
 */
export function normalizeTimestamp(value: string): string | undefined {
  const pad = (n: number | string, width = 2) => String(n).padStart(width, '0');
  const iso = (date: CalendarDate) => `${pad(date.year, 4)}-${pad(date.month)}-${pad(date.day)}`;
  const stamp = STAMP.exec(value);
  if (stamp === null) {
    const date = parseDate(value);
    return date === undefined ? undefined : `${iso(date)}T00:00:00.000+00:00`;
  }
  const [, year, month, day, hours, minutes, seconds = '00', fraction = '', sign, offsetHours = '00', offsetMinutes = '00'] = stamp;
  const date = parseDate(`${year}-${month}-${day}`);
  if (date === undefined || Number(hours) > 23 || Number(minutes) > 59 || Number(seconds) > 59) return undefined;
  if (Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return undefined;
  const offset = sign === undefined ? '+00:00' : `${sign}${offsetHours}:${offsetMinutes}`;
  return `${iso(date)}T${hours}:${minutes}:${seconds}.${fraction.padEnd(3, '0').slice(0, 3)}${offset}`;
}
