import countries from 'i18n-iso-countries';
import { workflowConsent, type Consent } from '../consent/consent.js';
import { checkReference, limited, Problems, text } from '../respondents/fields.js';
import type { ScreeningSubject } from './entity.js';
import type { CreateScreeningBody } from './schemas.js';
import type { StoredSubject } from './tables.js';

const MAX_NAME = 200;
const MAX_ALIASES = 20;
const MAX_LISTS = 50;
const MAX_METADATA_KEYS = 20;
const MAX_METADATA_KEY = 40;
const MAX_METADATA_VALUE = 500;

export interface ScreeningInput {
  reference: string;
  subject: StoredSubject;
  /** Source names asked for; undefined: every list. */
  lists?: string[] | undefined;
  threshold?: number | undefined;
  monitor: boolean;
  metadata: Record<string, string>;
  consent?: Consent | undefined;
}

const DOB = /^(\d{4})(?:-(\d{2})-(\d{2}))?$/;

/** YYYY or YYYY-MM-DD, a real date, not in the future. */
function checkDob(problems: Problems, value: string | undefined, now: Date): string | undefined {
  const dob = text(value);
  if (dob === undefined) return undefined;
  const match = DOB.exec(dob);
  let valid = false;
  if (match) {
    const year = Number(match[1]);
    if (match[2] === undefined) valid = year >= 1800 && year <= now.getUTCFullYear();
    else {
      const date = new Date(Date.UTC(year, Number(match[2]) - 1, Number(match[3])));
      valid = year >= 1800 && date.getUTCMonth() === Number(match[2]) - 1 && date.getUTCDate() === Number(match[3]) && date.getTime() <= now.getTime();
    }
  }
  if (!valid) problems.add('subject.dob must be a past date written YYYY-MM-DD, or a year YYYY');
  return dob;
}

function checkName(problems: Problems, field: string, value: string | undefined): string | undefined {
  const name = limited(problems, field, value, MAX_NAME);
  if (name !== undefined && !/\p{L}/u.test(name)) problems.add(`${field} must contain letters`);
  return name;
}

function checkSubject(problems: Problems, raw: CreateScreeningBody['subject'] | undefined, now: Date): StoredSubject {
  if (raw === undefined || raw === null || typeof raw !== 'object') {
    problems.add('subject is required: {type: "person" | "organization", name}');
    return { type: 'person', name: '', aliases: [] };
  }
  const type = raw.type === 'person' || raw.type === 'organization' ? raw.type : undefined;
  if (type === undefined) problems.add('subject.type must be person or organization');
  const firstname = checkName(problems, 'subject.firstname', raw.firstname);
  const middlename = checkName(problems, 'subject.middlename', raw.middlename);
  const lastname = checkName(problems, 'subject.lastname', raw.lastname);
  let name = checkName(problems, 'subject.name', raw.name);
  const parts = firstname !== undefined || middlename !== undefined || lastname !== undefined;
  if (type === 'organization') {
    if (parts) problems.add('subject.firstname, middlename and lastname are for a person; an organization has a name');
    for (const field of ['dob', 'gender'] as const) if (text(raw[field]) !== undefined) problems.add(`subject.${field} is for a person, not an organization`);
  }
  if (name !== undefined && parts) problems.add('subject.name or subject.firstname and lastname, not both');
  if (name === undefined && type === 'person' && parts) {
    if (firstname === undefined || lastname === undefined) problems.add('subject.firstname and subject.lastname go together (or send subject.name)');
    name = [firstname, middlename, lastname].filter(Boolean).join(' ');
  }
  if (name === undefined && !(type === 'person' && parts)) problems.add('subject.name is required');
  const genderText = text(raw.gender)?.toLowerCase();
  const gender = genderText === 'male' || genderText === 'm' ? 'male' : genderText === 'female' || genderText === 'f' ? 'female' : undefined;
  if (genderText !== undefined && gender === undefined) problems.add('subject.gender must be male or female');
  const nationalityText = text(raw.nationality)?.toUpperCase();
  if (nationalityText !== undefined && !(/^[A-Z]{2}$/.test(nationalityText) && countries.isValid(nationalityText))) {
    problems.add('subject.nationality must be an ISO 3166-1 alpha-2 country code, e.g. NG');
  }
  const aliases: string[] = [];
  if (raw.aliases !== undefined) {
    if (raw.aliases.length > MAX_ALIASES) problems.add(`subject.aliases may hold at most ${MAX_ALIASES} names`);
    raw.aliases.slice(0, MAX_ALIASES).forEach((alias, i) => {
      const checked = checkName(problems, `subject.aliases[${i}]`, alias);
      if (checked === undefined) problems.add(`subject.aliases[${i}] must not be blank`);
      else if (!aliases.includes(checked)) aliases.push(checked);
    });
  }
  const subject: StoredSubject = { type: type ?? 'person', name: name ?? '', aliases };
  if (firstname !== undefined) subject.firstname = firstname;
  if (middlename !== undefined) subject.middlename = middlename;
  if (lastname !== undefined) subject.lastname = lastname;
  const dob = type === 'organization' ? undefined : checkDob(problems, raw.dob, now);
  if (dob !== undefined) subject.dob = dob;
  if (gender !== undefined && type !== 'organization') subject.gender = gender;
  if (nationalityText !== undefined) subject.nationality = nationalityText;
  return subject;
}

function checkLists(problems: Problems, raw: string[] | undefined, known: ReadonlySet<string>): string[] | undefined {
  if (raw === undefined) return undefined;
  if (raw.length === 0) problems.add('lists must name at least one list (or be left out: every list)');
  if (raw.length > MAX_LISTS) problems.add(`lists may name at most ${MAX_LISTS} lists`);
  const out: string[] = [];
  for (const item of raw.slice(0, MAX_LISTS)) {
    const name = item.trim();
    if (!known.has(name)) problems.add(`lists: "${name.slice(0, 64)}" is not a loaded list (known: ${[...known].sort().join(', ') || 'none'})`);
    else if (!out.includes(name)) out.push(name);
  }
  return out;
}

function checkMetadata(problems: Problems, raw: Record<string, unknown> | undefined): Record<string, string> {
  if (raw === undefined) return {};
  const entries = Object.entries(raw);
  if (entries.length > MAX_METADATA_KEYS) problems.add(`metadata may hold at most ${MAX_METADATA_KEYS} keys`);
  const out: Record<string, string> = {};
  for (const [key, value] of entries.slice(0, MAX_METADATA_KEYS)) {
    if (key.length === 0 || key.length > MAX_METADATA_KEY) problems.add(`metadata keys must be 1 to ${MAX_METADATA_KEY} characters`);
    else if (typeof value !== 'string') problems.add(`metadata.${key} must be a string`);
    else if (value.length > MAX_METADATA_VALUE) problems.add(`metadata.${key} must be at most ${MAX_METADATA_VALUE} characters`);
    else out[key] = value;
  }
  return out;
}

/**
 * Checks a create request; throws one 400 naming every problem. `knownLists`: the source names
 * the caller may ask for (the operator's loaded lists; test mode adds `sandbox`).
 */
export function validateScreening(body: CreateScreeningBody, options: { now: Date; knownLists: ReadonlySet<string>; consentRequired: boolean }): ScreeningInput {
  const problems = new Problems();
  const subject = checkSubject(problems, body.subject, options.now);
  const threshold = body.threshold;
  if (threshold !== undefined && !(Number.isFinite(threshold) && threshold >= 0 && threshold <= 1)) problems.add('threshold must be a number from 0 to 1');
  const input: ScreeningInput = {
    reference: checkReference(problems, body.reference, 'scr'),
    subject,
    lists: checkLists(problems, body.lists, options.knownLists),
    threshold,
    monitor: body.monitor ?? false,
    metadata: checkMetadata(problems, body.metadata),
    consent: workflowConsent(body.consent, options.consentRequired, problems),
  };
  problems.throwIfAny();
  return input;
}

/** The subject as the matcher takes it: the primary name first, then the aliases. */
export function screeningSubjectOf(subject: StoredSubject): ScreeningSubject {
  const out: ScreeningSubject = { type: subject.type, names: [subject.name, ...subject.aliases.filter((alias) => alias !== subject.name)] };
  if (subject.dob !== undefined) out.birthDate = subject.dob;
  if (subject.gender !== undefined) out.gender = subject.gender;
  if (subject.nationality !== undefined) out.nationality = subject.nationality;
  return out;
}
