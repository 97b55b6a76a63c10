import type { ListEntity } from '../entity.js';
import { endsWithNewline, isBlank, withoutEofMark } from './bytes.js';
import { readCsv } from './csv-records.js';
import { countSkip, finish, newDraft, nonEmpty, type Draft, type ParsedList } from './draft.js';
import { ListFormatError } from './errors.js';
import { identifierNumber, OFAC_IDENTIFIER_REMARK } from './ofac-ids.js';
import { countryCode, normalizeDate, normalizeGender } from './values.js';

/**
 * ofac-csv: OFAC's legacy SDN CSV trio (no header rows; `-0-` is empty; ent_num joins them):
 * sdn.csv (ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign, Vess_type, Tonnage, GRT,
 * Vess_flag, Vess_owner, Remarks), alt.csv (ent_num, alt_num, alt_type, alt_name, alt_remarks)
 * and add.csv (ent_num, add_num, address, city/state, country, add_remarks).
 *
 * - alt.csv and add.csv are required beside sdn.csv: OFAC publishes the three together, and an
 *   sdn.csv read alone would lose every alias (11,910 in the kit's list) without a word.
 *   sdn_comments.csv, when present, continues Remarks that OFAC cut at 1,000 characters.
 * - One sdn.csv row per entry: a repeated ent_num is refused. alt.csv / add.csv rows are merged
 *   into their entry by ent_num; rows of skipped entries are passed over, rows of no entry counted
 *   in `skipped`.
 * - SDN_Type individual → Person, empty → Organization; vessel and aircraft are counted in
 *   `skipped`. An individual's "LAST, First" is written "First LAST" (the list's form kept as
 *   an alias), and so are its aliases.
 * - Remarks carry DOB, nationality, citizen, Gender, passport and other identification numbers
 *   and a.k.a.s: read into birthDates, nationalities, gender, identifiers, aliases; the whole
 *   remarks are the notes. An organization's address countries (add.csv) are its nationalities.
 * - Truncation: official files end with a line break (and a DOS end-of-file mark); one that ends
 *   mid-row, or a row with fewer fields, is refused naming the line.
 */

const SDN_FIELDS = 12;
const ALT_FIELDS = 5;
const ADD_FIELDS = 6;
export const OFAC_CSV_COMPANIONS = ['alt.csv', 'add.csv'] as const;
const COMMENTS_FILE = 'sdn_comments.csv';

const ENT_NUM = /^\d+$/;
const PROGRAM_SEPARATOR = /\]\s*\[/;
const BRACKETS = /[[\]]/g;
const REMARK_SEPARATOR = /;\s*/;
const TRAILING_DOT = /\.$/;
const DOB_REMARK = /^(?:alt\.\s+)?DOB\s+(.+)$/i;
const COUNTRY_REMARK = /^(?:alt\.\s+)?(?:nationality|citizen)\s+(.+)$/i;
const GENDER_REMARK = /^Gender\s+(\w+)$/i;
const AKA_REMARK = /^(?:a\.k\.a\.|f\.k\.a\.|n\.k\.a\.)\s+['‘’](.+)['‘’]$/i;

function value(field: string | undefined): string {
  const text = (field ?? '').trim();
  return text === '-0-' ? '' : text;
}

/** "ABU BAKR, Ahmad" → "Ahmad ABU BAKR"; a name without ", " is kept. */
export function personName(listName: string): string {
  const comma = listName.indexOf(', ');
  if (comma < 0) return listName;
  return `${listName.slice(comma + 2)} ${listName.slice(0, comma)}`;
}

interface Entry {
  draft: Draft;
  remarks: string;
  addressCountries: string[];
}

export function parseOfacCsv(main: Buffer, companions: Record<string, Buffer>): ParsedList {
  for (const name of OFAC_CSV_COMPANIONS) {
    if (!companions[name]) throw new ListFormatError(`ofac-csv needs ${name} beside sdn.csv (OFAC publishes sdn.csv, alt.csv and add.csv together)`);
  }
  const entries = new Map<string, Entry>();
  const skippedIds = new Set<string>();
  const skipped: Record<string, number> = {};

  readTrioFile(main, 'sdn.csv', SDN_FIELDS, (fields, line) => {
    const id = value(fields[0]);
    if (entries.has(id) || skippedIds.has(id)) throw new ListFormatError(`ent_num ${id} appears twice`, line);
    const type = value(fields[2]).toLowerCase();
    if (type === 'vessel' || type === 'aircraft') {
      skippedIds.add(id);
      countSkip(skipped, type);
      return;
    }
    if (type !== '' && type !== 'individual') throw new ListFormatError(`SDN_Type ${JSON.stringify(fields[2])} is not individual, vessel, aircraft or empty`, line);
    const draft = newDraft(id, type === 'individual' ? 'Person' : 'Organization', line);
    const listName = value(fields[1]);
    addName(draft, listName, true);
    for (const program of value(fields[3]).split(PROGRAM_SEPARATOR)) draft.programs.push(program.replace(BRACKETS, ''));
    draft.topics.push('sanction');
    entries.set(id, { draft, remarks: value(fields[11]), addressCountries: [] });
  });

  const entryOf = (id: string): Entry | undefined => {
    const entry = entries.get(id);
    if (!entry && !skippedIds.has(id)) countSkip(skipped, 'companion rows without an sdn.csv entry');
    return entry;
  };
  readTrioFile(companions['alt.csv']!, 'alt.csv', ALT_FIELDS, (fields) => {
    const entry = entryOf(value(fields[0]));
    if (entry) addName(entry.draft, value(fields[3]), false);
  });
  readTrioFile(companions['add.csv']!, 'add.csv', ADD_FIELDS, (fields) => {
    const entry = entryOf(value(fields[0]));
    if (entry) entry.addressCountries.push(value(fields[4]));
  });
  const comments = companions[COMMENTS_FILE];
  if (comments && !isBlank(comments)) {
    readTrioFile(comments, COMMENTS_FILE, 2, (fields) => {
      const entry = entries.get(value(fields[0]));
      if (entry) entry.remarks += value(fields[1]);
    });
  }

  const entities: ListEntity[] = [];
  for (const entry of entries.values()) {
    readRemarks(entry.draft, entry.remarks);
    if (entry.draft.schema === 'Organization') {
      for (const country of entry.addressCountries) {
        const code = countryCode(country);
        if (code) entry.draft.nationalities.push(code);
      }
    }
    entities.push(finish(entry.draft));
  }
  return nonEmpty({ entities, skipped }, 'person or organization');
}

/** The primary name (first one given) or an alias; a person's "LAST, First" also as "First LAST". */
function addName(draft: Draft, listName: string, primary: boolean): void {
  if (listName === '') return;
  if (draft.schema === 'Person') {
    const ordered = personName(listName);
    if (primary) draft.name = ordered;
    else draft.aliases.push(ordered);
    if (ordered !== listName) draft.aliases.push(listName);
  } else if (primary) {
    draft.name = listName;
  } else {
    draft.aliases.push(listName);
  }
}

function readRemarks(draft: Draft, remarks: string): void {
  if (remarks === '') return;
  draft.notes = remarks;
  for (const raw of remarks.split(REMARK_SEPARATOR)) {
    const part = raw.trim().replace(TRAILING_DOT, '');
    if (part === '') continue;
    let match = DOB_REMARK.exec(part);
    if (match) {
      draft.birthDates.push(...normalizeDate(match[1]));
      continue;
    }
    match = COUNTRY_REMARK.exec(part);
    if (match) {
      const code = countryCode(match[1]);
      if (code) draft.nationalities.push(code);
      continue;
    }
    match = GENDER_REMARK.exec(part);
    if (match) {
      draft.gender = normalizeGender(match[1]) ?? draft.gender;
      continue;
    }
    match = AKA_REMARK.exec(part);
    if (match) {
      draft.aliases.push(match[1]!);
      continue;
    }
    match = OFAC_IDENTIFIER_REMARK.exec(part);
    if (match) {
      const number = identifierNumber(match[2]!);
      if (number !== '') draft.identifiers.push(number);
    }
  }
}

/**
 * Each row of one file of the trio, checked: the field count, a numeric ent_num, and a last row
 * that ends with a line break (a file cut mid-row is refused, naming the line).
 */
function readTrioFile(bytes: Buffer, file: string, fieldCount: number, onRow: (fields: string[], line: number) => void): void {
  const data = withoutEofMark(bytes);
  if (isBlank(data)) throw new ListFormatError(`${file} is empty`);
  let rows = 0;
  let lastLine = 0;
  try {
    readCsv(data, { trim: true }, (fields, line) => {
      lastLine = line;
      if (fields.length !== fieldCount || !ENT_NUM.test(value(fields[0]))) {
        if (rows === 0) {
          throw new ListFormatError(`expected OFAC's ${file} (ofac-csv): ${fieldCount} fields per row, no header, the first a numeric ent_num; found ${fields.length} field${fields.length === 1 ? '' : 's'} starting ${JSON.stringify((fields[0] ?? '').slice(0, 40))}`, line);
        }
        if (fields.length !== fieldCount) throw new ListFormatError(`${fields.length} fields where ${file} has ${fieldCount}: the row is cut short or malformed`, line);
        throw new ListFormatError(`ent_num ${JSON.stringify(fields[0])} is not a number`, line);
      }
      rows++;
      onRow(fields, line);
    });
  } catch (err) {
    throw file === 'sdn.csv' || !(err instanceof ListFormatError) ? err : err.inFile(file);
  }
  if (!endsWithNewline(data)) {
    const err = new ListFormatError(`the file ends in the middle of a row (no line break after it): it is truncated`, lastLine);
    throw file === 'sdn.csv' ? err : err.inFile(file);
  }
}
