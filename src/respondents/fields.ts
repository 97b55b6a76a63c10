import { randomBytes } from 'node:crypto';
import { normalizePhone, parseDate, type CalendarDate } from '../identities/matching.js';
import type { RiskLevel } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { hasLineBreak } from '../platform/input.js';

/**
 * Request-field rules the respondent-completed verifications (guarantor, employment) share.
 * Validation collects every problem, so one 400 names all the fields to fix.
 */
export class Problems {
  private readonly list: string[] = [];

  add(problem: string): void {
    this.list.push(problem);
  }

  throwIfAny(): void {
    if (this.list.length > 0) throw new ApiError('VALIDATION_ERROR', this.list.join('; '));
  }
}

/** Trimmed text, or undefined when absent or blank. */
export function text(value: string | undefined | null): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

// Deliberately plain: one @, no spaces or control characters (so no header injection), a dot in the domain.
/**
 * Trimmed one-line text of at most `max` characters (a problem otherwise), or undefined when absent
 * or blank. Every such field (names, titles, the street) may be written into the respondent's mail.
 */
export function limited(problems: Problems, field: string, value: string | undefined, max: number): string | undefined {
  const out = text(value);
  if (out !== undefined && out.length > max) problems.add(`${field} must be at most ${max} characters`);
  if (out !== undefined && hasLineBreak(out)) problems.add(`${field} must be on one line (no line breaks)`);
  return out;
}

const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[A-Za-z]{2,}$/;

export function checkEmail(problems: Problems, field: string, value: string | undefined): string | undefined {
  const email = text(value);
  if (email === undefined) return undefined;
  if (email.length > 254 || !EMAIL.test(email)) problems.add(`${field} must be a valid email address`);
  return email;
}

/** Keeps the number as written (records show what the caller sent) once it reads as a Nigerian number. */
export function checkPhone(problems: Problems, field: string, value: string | undefined): string | undefined {
  const phone = text(value);
  if (phone === undefined) return undefined;
  if (!normalizePhone(phone)) problems.add(`${field} must be a valid Nigerian phone number, e.g. 08031234567 or +2348031234567`);
  return phone;
}

const DD_MM_YYYY = /^\d{2}-\d{2}-\d{4}$/;

/** Dates of birth are DD-MM-YYYY exactly (spec), and a real calendar date in the past. */
export function checkDob(problems: Problems, field: string, value: string | undefined, now: Date): string | undefined {
  const dob = text(value);
  if (dob === undefined) return undefined;
  const date = DD_MM_YYYY.test(dob) ? parseDate(dob) : undefined;
  if (!date || !inPast(date, now)) problems.add(`${field} must be a past date written DD-MM-YYYY, e.g. 14-03-1990`);
  return dob;
}

export function inPast(date: CalendarDate, now: Date): boolean {
  const today = { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1, day: now.getUTCDate() };
  return compareDates(date, today) <= 0;
}

export function compareDates(a: CalendarDate, b: CalendarDate): number {
  return a.year - b.year || a.month - b.month || a.day - b.day;
}

/** "2024-05-14": how calendar dates are stored. */
export function isoDate(date: CalendarDate): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${String(date.year).padStart(4, '0')}-${pad(date.month)}-${pad(date.day)}`;
}

const REQUIRED_BY_RISK: Record<RiskLevel, readonly ('lastname' | 'firstname' | 'dob')[]> = {
  NONE: [],
  LOW: ['lastname'],
  MEDIUM: ['lastname', 'firstname'],
  HIGH: ['firstname', 'lastname', 'dob'],
};

/** The applicant fields the organization's risk level verifies, and so requires (spec: Risk levels). */
export function checkRiskFields(
  problems: Problems,
  riskLevel: RiskLevel,
  applicant: Partial<Record<'firstname' | 'lastname' | 'dob', string | undefined>> | undefined,
): void {
  for (const field of REQUIRED_BY_RISK[riskLevel]) {
    if (text(applicant?.[field]) === undefined) problems.add(`applicant.${field} is required for this account's risk level (${riskLevel})`);
  }
}

const LEVELS: readonly RiskLevel[] = ['NONE', 'LOW', 'MEDIUM', 'HIGH'];

/** Spec: some verifications need a minimum risk level; an account below it is refused with 403. */
export function requireMinimumLevel(riskLevel: RiskLevel, minimum: RiskLevel, what: string): void {
  if (LEVELS.indexOf(riskLevel) >= LEVELS.indexOf(minimum)) return;
  throw new ApiError(
    'FORBIDDEN',
    `${what} needs an account risk level of ${minimum} or higher; this account is at ${riskLevel}. Ask your account manager to raise it.`,
  );
}

/** A caller's optional reference: printable, at most 100 characters; generated when absent. */
export function checkReference(problems: Problems, value: string | undefined, prefix: string): string {
  const reference = text(value);
  if (reference === undefined) return `${prefix}_${randomBytes(9).toString('base64url')}`;
  if (reference.length > 100 || !/^[\x21-\x7e]+$/.test(reference)) {
    problems.add('reference must be 1 to 100 printable characters without spaces');
  }
  return reference;
}

/** "2024-05-14T09:30:12": UTC, second precision, no offset (the spec's "timestamp without offset"). */
export function formatTimestamp(date: Date | null | undefined): string {
  return date ? date.toISOString().slice(0, 19) : '';
}

/** A path id: not a number is 400 (never a database error); a number no row can have is 404. */
export function parseId(raw: string, notFound: () => ApiError): number {
  if (!/^\d+$/.test(raw)) throw new ApiError('VALIDATION_ERROR', 'id must be a whole number');
  const id = Number(raw);
  if (!Number.isSafeInteger(id) || id < 1) throw notFound();
  return id;
}
