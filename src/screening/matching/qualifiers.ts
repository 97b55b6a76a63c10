import type { IndexedEntity, ScreeningSubject } from '../entity.js';

/**
 * What besides the name moves a score, each saying so in the explanation: the date or year of
 * birth (a gap of more than three years makes it another person, whatever the name), nationality,
 * gender, and an identical passport or ID number (near-certain).
 */

export interface Qualified {
  delta: number;
  /** An identical identifier: the score is raised to IDENTIFIER_SCORE at least. */
  identifier?: string;
  notes: string[];
}

export const IDENTIFIER_SCORE = 0.99;
/** The most the qualifiers other than an identifier can add: the index prunes with it. */
export const MAX_BOOST = 0.05;

const BIRTH_SAME_DATE = 0.03;
const BIRTH_SAME_YEAR = 0.02;
const BIRTH_NEAR = -0.03;
const BIRTH_FAR = -0.3;
const NATIONALITY_MATCH = 0.02;
const NATIONALITY_MISMATCH = -0.05;
const GENDER_MISMATCH = -0.1;

function signed(value: number): string {
  return `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(2)}`;
}

function birth(subject: string, listed: readonly string[]): { delta: number; note: string } | undefined {
  const year = Number(subject.slice(0, 4));
  if (!Number.isInteger(year) || listed.length === 0) return undefined;
  let best: { delta: number; note: string } | undefined;
  for (const date of listed) {
    const listedYear = Number(date.slice(0, 4));
    if (!Number.isInteger(listedYear)) continue;
    const gap = Math.abs(listedYear - year);
    let found: { delta: number; note: string };
    if (subject.length >= 10 && date.length >= 10 && subject.slice(0, 10) === date.slice(0, 10)) {
      found = { delta: BIRTH_SAME_DATE, note: `Born ${date.slice(0, 10)} as listed (${signed(BIRTH_SAME_DATE)}).` };
    } else if (gap === 0) {
      // Same year, different day: lists often hold an approximate or estimated date.
      const differentDay = subject.length >= 10 && date.length >= 10;
      const delta = differentDay ? 0 : BIRTH_SAME_YEAR;
      found = { delta, note: differentDay ? `Birth year ${year} matches, date differs (${date}).` : `Birth year ${year} matches (${signed(delta)}).` };
    } else if (gap === 1) {
      found = { delta: 0, note: `Birth year ${year} is within a year of ${listedYear}.` };
    } else if (gap <= 3) {
      found = { delta: BIRTH_NEAR, note: `Birth year ${year} is ${gap} years from ${listedYear} (${signed(BIRTH_NEAR)}).` };
    } else {
      found = { delta: BIRTH_FAR, note: `Birth year ${year} is ${gap} years from ${listedYear} (${signed(BIRTH_FAR)}).` };
    }
    if (!best || found.delta > best.delta) best = found;
  }
  return best;
}

function identifierKey(value: string): string {
  return value.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/** The identifiers of an entity as compared: upper case letters and digits only, at least 5. */
export function identifierKeys(values: readonly string[]): string[] {
  return values.map(identifierKey).filter((key) => key.length >= 5);
}

export function qualify(subject: ScreeningSubject, entity: IndexedEntity): Qualified {
  const notes: string[] = [];
  let delta = 0;
  let identifier: string | undefined;
  if (subject.birthDate) {
    const found = birth(subject.birthDate, entity.birthDates);
    if (found) {
      delta += found.delta;
      notes.push(found.note);
    }
  }
  if (subject.nationality && entity.nationalities.length > 0) {
    if (entity.nationalities.includes(subject.nationality)) {
      delta += NATIONALITY_MATCH;
      notes.push(`Nationality ${subject.nationality} matches (${signed(NATIONALITY_MATCH)}).`);
    } else {
      delta += NATIONALITY_MISMATCH;
      notes.push(`Nationality ${subject.nationality}, listed ${entity.nationalities.slice(0, 3).join('/')} (${signed(NATIONALITY_MISMATCH)}).`);
    }
  }
  if (subject.gender && entity.gender && subject.gender !== entity.gender) {
    delta += GENDER_MISMATCH;
    notes.push(`Gender ${subject.gender}, listed ${entity.gender} (${signed(GENDER_MISMATCH)}).`);
  }
  if (subject.identifiers && subject.identifiers.length > 0 && entity.identifiers.length > 0) {
    const listed = new Set(identifierKeys(entity.identifiers));
    for (const key of identifierKeys(subject.identifiers)) {
      if (listed.has(key)) {
        identifier = key;
        // The number is the subject's personal data: the last characters are enough to find it.
        notes.push(`Identifier ending ${key.slice(-4)} is the listed one.`);
        break;
      }
    }
  }
  return { delta, identifier, notes };
}
