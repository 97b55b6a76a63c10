import { UpstreamFailure } from '../adapter.js';

/**
 * Reading one field of a Dojah `entity` into the shapes our records use. Every failure names the
 * field (`entity.first_name`) and never its value: the message is logged.
 */

export type Entity = Record<string, unknown>;

function malformed(message: string): UpstreamFailure {
  return new UpstreamFailure('malformed', message);
}

/**
 * The first of `names` that holds a non-empty string (or a number, which Dojah sends for some
 * numeric fields). Dojah's own documents spell some fields two ways (`first_name` in the API
 * reference, `firstname` in its SDK samples); the alternatives are listed per field.
 */
export function optionalText(entity: Entity, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = entity[name];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  return undefined;
}

export function requiredText(entity: Entity, ...names: string[]): string {
  const value = optionalText(entity, ...names);
  if (value === undefined) throw malformed(`entity.${names[0]} missing`);
  return value;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * A date in any of the forms Dojah documents (`28-Jun-2000`, `01-January-1907`, `1993-05-06`,
 * `10-06-1993`, `18/05/1992`, an ISO timestamp) as DD-MM-YYYY; undefined when it is none of them.
 */
export function toDayMonthYear(value: string): string | undefined {
  const text = value.trim();
  let day: number;
  let month: number;
  let year: number;
  let match = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$/.exec(text);
  if (match) {
    [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  } else if ((match = /^(\d{1,2})[-/](\d{1,2})[-/](\d{4})$/.exec(text))) {
    [day, month, year] = [Number(match[1]), Number(match[2]), Number(match[3])];
  } else if ((match = /^(\d{1,2})[- ]([A-Za-z]{3,9})[- ](\d{4})$/.exec(text))) {
    const index = MONTHS.indexOf(match[2]!.slice(0, 3).toLowerCase());
    if (index < 0) return undefined;
    [day, month, year] = [Number(match[1]), index + 1, Number(match[3])];
  } else {
    return undefined;
  }
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return `${pad(day)}-${pad(month)}-${year}`;
}

export function requiredDate(entity: Entity, ...names: string[]): string {
  const date = toDayMonthYear(requiredText(entity, ...names));
  if (date === undefined) throw malformed(`entity.${names[0]} is not a date`);
  return date;
}

export function optionalDate(entity: Entity, ...names: string[]): string | undefined {
  const text = optionalText(entity, ...names);
  if (text === undefined) return undefined;
  const date = toDayMonthYear(text);
  if (date === undefined) throw malformed(`entity.${names[0]} is not a date`);
  return date;
}

/** `m`, `M`, `male` → `Male` (the records' style); anything else is kept as Dojah wrote it. */
export function toGender(value: string): string {
  const lower = value.trim().toLowerCase();
  if (lower === 'm' || lower === 'male') return 'Male';
  if (lower === 'f' || lower === 'female') return 'Female';
  return value.trim();
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * A photo as plain base64: Dojah sends base64, sometimes behind a `data:` prefix or wrapped over
 * lines. Undefined when absent; malformed when it is not base64 at all.
 */
export function optionalPhoto(entity: Entity, ...names: string[]): string | undefined {
  const text = optionalText(entity, ...names);
  if (text === undefined) return undefined;
  const base64 = text.replace(/^data:[^,]*;base64,/, '').replace(/\s+/g, '');
  if (!BASE64.test(base64)) throw malformed(`entity.${names[0]} is not base64`);
  return base64;
}

/** Drops the keys whose value is undefined, so a record holds only what Dojah answered. */
export function compact<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;
}
