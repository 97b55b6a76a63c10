// `max` metadata rather than the default `min`: `min` only checks a number's length, so it
// accepts an extra digit ("080312345678" is "valid"), while `max` checks the real NG number
// ranges and still accepts every current mobile prefix (0701...0916). `mobile` would also work
// for mobiles but rejects the fixed-line and toll-free numbers registries sometimes hold.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * One way of comparing what a caller supplied with what an identity registry holds, used by
 * every verification. Pure functions: every `*Match` answers false, never throws, when a side
 * is missing, blank or unparseable, because a missing value can never confirm an identity.
 */

export interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

type Maybe = string | undefined | null;

// Values come from JSON bodies and imported registry lines, so the type is not a promise.
function text(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

// Dashes of every kind, the apostrophes people type (', ’, ‘, ʼ, `), dots and whitespace.
const NAME_SEPARATORS = /[\p{Pd}'’‘ʼ`.\s]/gu;
/** Made once: written in the function, the build made a new RegExp at every call (1.5 µs of a lookup). */
const MARKS = /\p{M}/gu;

/** Lowercase, without diacritics and without hyphens, apostrophes, dots or spaces. */
export function normalizeName(value: string): string {
  // Lowercase before decomposing: "İ".toLowerCase() is "i" plus a combining dot, which the
  // mark removal then drops.
  return value.toLowerCase().normalize('NFD').replace(MARKS, '').replace(NAME_SEPARATORS, '');
}

/** Name tokens in a canonical order; a hyphenated part ("Okonjo-Iweala") counts as a token. */
function sortedTokens(value: string): string {
  return value
    .split(/[\s\p{Pd}]+/u)
    .map(normalizeName)
    .filter((token) => token !== '')
    .sort()
    .join(' ');
}

/** Damerau-Levenshtein distance, optimal string alignment variant, over code points. */
export function editDistance(a: string, b: string): number {
  const s = Array.from(a);
  const t = Array.from(b);
  // Three rolling rows: a transposition looks two rows back.
  let before: number[] = [];
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        best = Math.min(best, before[j - 2]! + 1);
      }
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[t.length]!;
}

// One typo is tolerated from 5 letters and two from 9; shorter names ("Ada", "Obi", "Uche")
// sit one edit away from other real names, so a typo there is as likely a different person.
function nameTolerance(length: number): number {
  if (length >= 9) return 2;
  if (length >= 5) return 1;
  return 0;
}

/**
 * True when the names are equal once normalised, within the typo tolerance, or hold the same
 * tokens in another order. The tolerance is sized on the shorter of the two names, which is
 * the held name's length for substitutions and transpositions and keeps the answer symmetric.
 */
export function namesMatch(supplied: Maybe, held: Maybe): boolean {
  const a = text(supplied);
  const b = text(held);
  if (a === undefined || b === undefined) return false;
  const left = normalizeName(a);
  const right = normalizeName(b);
  if (left === '' || right === '') return false;
  if (left === right) return true;
  const tolerance = nameTolerance(Math.min(Array.from(left).length, Array.from(right).length));
  if (tolerance > 0 && editDistance(left, right) <= tolerance) return true;
  return sortedTokens(a) === sortedTokens(b);
}

const DMY = /^(\d{1,2})([-/])(\d{1,2})\2(\d{4})$/;
const YMD = /^(\d{4})([-/])(\d{1,2})\2(\d{1,2})$/;
// RFC 3339 and the PostgreSQL text form ("1990-03-14 00:00:00+00"). The date part is taken as
// written: a birth date is a calendar date, so shifting it by the offset would be wrong.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function calendarDate(year: number, month: number, day: number): CalendarDate | undefined {
  if (year < 1900 || year > 2100) return undefined;
  if (month < 1 || month > 12) return undefined;
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  return { year, month, day };
}

/** DD-MM-YYYY, DD/MM/YYYY, YYYY-MM-DD, YYYY/MM/DD or an ISO timestamp; undefined otherwise. */
export function parseDate(value: Maybe): CalendarDate | undefined {
  const input = text(value);
  if (input === undefined) return undefined;
  const dmy = DMY.exec(input);
  if (dmy) return calendarDate(Number(dmy[4]), Number(dmy[3]), Number(dmy[1]));
  const ymd = YMD.exec(input);
  if (ymd) return calendarDate(Number(ymd[1]), Number(ymd[3]), Number(ymd[4]));
  const stamp = TIMESTAMP.exec(input);
  if (stamp) return calendarDate(Number(stamp[1]), Number(stamp[2]), Number(stamp[3]));
  return undefined;
}

export function datesMatch(supplied: Maybe, held: Maybe): boolean {
  const a = parseDate(supplied);
  const b = parseDate(held);
  if (a === undefined || b === undefined) return false;
  return a.year === b.year && a.month === b.month && a.day === b.day;
}

/** "14-03-1990": the day-month-year form registries return. */
export function formatDmy(date: CalendarDate, separator = '-'): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return [pad(date.day), pad(date.month), String(date.year).padStart(4, '0')].join(separator);
}

/** E.164 ("+2348031234567"), reading national numbers as Nigerian; undefined unless valid. */
export function normalizePhone(value: Maybe): string | undefined {
  const input = text(value);
  if (input === undefined) return undefined;
  const parsed = parsePhoneNumberFromString(input, 'NG');
  return parsed?.isValid() ? parsed.number : undefined;
}

export function phonesMatch(a: Maybe, b: Maybe): boolean {
  const left = normalizePhone(a);
  return left !== undefined && left === normalizePhone(b);
}

// A Map, not an object literal: "constructor" must not find Object.prototype.constructor.
const GENDERS = new Map<string, 'M' | 'F'>([
  ['m', 'M'],
  ['male', 'M'],
  ['f', 'F'],
  ['female', 'F'],
]);

export function normalizeGender(value: Maybe): 'M' | 'F' | undefined {
  const input = text(value)?.toLowerCase();
  return input === undefined ? undefined : GENDERS.get(input);
}

export function gendersMatch(a: Maybe, b: Maybe): boolean {
  const left = normalizeGender(a);
  return left !== undefined && left === normalizeGender(b);
}

export function emailsMatch(a: Maybe, b: Maybe): boolean {
  const left = text(a)?.toLowerCase();
  return left !== undefined && left === text(b)?.toLowerCase();
}
