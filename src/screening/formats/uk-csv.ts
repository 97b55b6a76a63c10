import { isBlank } from './bytes.js';
import { readCsv } from './csv-records.js';
import { countSkip, finish, mergeInto, newDraft, nonEmpty, type Draft, type ParsedList } from './draft.js';
import { ListFormatError } from './errors.js';
import { clean, countryCode, normalizeDate, normalizeGender } from './values.js';

/**
 * uk-csv: the UK Sanctions List CSV (FCDO, gov.uk "The UK Sanctions List"): a first line
 * `Report Date: …`, then the header `Last Updated,Unique ID,OFSI Group ID,UN Reference Number,
 * Name 6,Name 1,…,Name 5,Name type,Alias strength,Title,Name non-latin script,…,Regime Name,
 * Designation Type,…,Other Information,…,Address Country,…,D.O.B,Nationality(/ies),National
 * Identifier number,…,Passport number,…,Gender,…,Business registration number (s),…`. Columns are
 * found by name, so added columns do not break the reader; the ones read here must be present.
 *
 * - One row per name (and per address): rows sharing a Unique ID are one entity, merged.
 *   The "Primary Name" row gives the name; "Primary Name Variation" and "Alias" rows, and every
 *   "Name non-latin script", are aliases. Name 1…Name 5 then Name 6 (the surname; an entity's
 *   whole name) make a name.
 * - Designation Type Individual → Person, Entity → Organization; Ship is counted in `skipped`.
 * - D.O.B (dd/mm/yyyy, 00 for an unknown day or month), Nationality(/ies), Passport number,
 *   National Identifier number and Business registration number (s) may hold several values,
 *   numbered "(1) … (2) …": each is read. An organization's Address Country is its nationality.
 *   Regime Name → programs; Other Information → notes; topics: sanction.
 * - A row with a different number of fields than the header (a file cut mid-row) is refused.
 */

const EXPECTED = 'the UK Sanctions List CSV (uk-csv)';
const REQUIRED = ['Unique ID', 'Name 6', 'Name 1', 'Name 2', 'Name 3', 'Name 4', 'Name 5', 'Name type', 'Designation Type', 'Regime Name'] as const;
const OPTIONAL = [
  'Name non-latin script',
  'Other Information',
  'Address Country',
  'D.O.B',
  'Nationality(/ies)',
  'National Identifier number',
  'Passport number',
  'Gender',
  'Business registration number (s)',
] as const;
type Column = (typeof REQUIRED)[number] | (typeof OPTIONAL)[number];
/** Name 6 is the surname (an entity's whole name): written last. */
const NAME_COLUMNS: readonly Column[] = ['Name 1', 'Name 2', 'Name 3', 'Name 4', 'Name 5', 'Name 6'];

const REPORT_DATE = /^Report Date\b/i;
/** "(1) Russia (2) Ukraine", or values separated by ";" or "|". */
const NUMBERED = /\(\d+\)|[;|]/;
const TRAILING_COMMA = /,$/;

function values(cell: string | undefined): string[] {
  const text = clean(cell);
  if (text === '') return [];
  return text.split(NUMBERED).map((part) => part.trim().replace(TRAILING_COMMA, '')).filter(Boolean);
}

export function parseUkCsv(bytes: Buffer): ParsedList {
  if (isBlank(bytes)) throw new ListFormatError(`the file is empty: expected ${EXPECTED}`);
  const drafts = new Map<string, Draft>();
  const skippedIds = new Set<string>();
  const skipped: Record<string, number> = {};
  let columns: Map<Column, number> | undefined;
  let width = 0;
  let records = 0;

  readCsv(bytes, {}, (fields, line) => {
    records++;
    if (!columns) {
      if (records === 1 && REPORT_DATE.test(fields[0] ?? '')) return;
      columns = header(fields, line);
      width = fields.length;
      return;
    }
    if (fields.length !== width) throw new ListFormatError(`${fields.length} fields where the header has ${width}: the row is cut short or malformed`, line);
    const cell = (column: Column): string => {
      const index = columns!.get(column);
      return index === undefined ? '' : (fields[index] ?? '');
    };
    const id = clean(cell('Unique ID'));
    if (id === '') throw new ListFormatError('a row without Unique ID', line);
    const type = clean(cell('Designation Type')).toLowerCase();
    if (type === 'ship') {
      if (!skippedIds.has(id)) countSkip(skipped, 'ship');
      skippedIds.add(id);
      return;
    }
    if (type !== 'individual' && type !== 'entity') throw new ListFormatError(`Designation Type ${JSON.stringify(cell('Designation Type'))} is not Individual, Entity or Ship`, line);
    const row = newDraft(id, type === 'individual' ? 'Person' : 'Organization', line);
    const name = NAME_COLUMNS.map((column) => clean(cell(column))).filter(Boolean).join(' ');
    if (clean(cell('Name type')).toLowerCase() === 'primary name') row.name = name;
    else row.aliases.push(name);
    row.aliases.push(cell('Name non-latin script'));
    row.programs.push(cell('Regime Name'));
    row.notes = cell('Other Information');
    row.gender = normalizeGender(cell('Gender'));
    for (const date of values(cell('D.O.B'))) row.birthDates.push(...normalizeDate(date));
    const countries = row.schema === 'Person' ? values(cell('Nationality(/ies)')) : values(cell('Address Country'));
    for (const country of countries) {
      const code = countryCode(country);
      if (code) row.nationalities.push(code);
    }
    row.identifiers.push(...values(cell('Passport number')), ...values(cell('National Identifier number')), ...values(cell('Business registration number (s)')));
    row.topics.push('sanction');

    const existing = drafts.get(id);
    if (!existing) drafts.set(id, row);
    else if (existing.schema !== row.schema) throw new ListFormatError(`Unique ID ${id} is an ${type} here but not on line ${existing.line}`, line);
    else if (existing.name === '' || row.name === '') mergeInto(existing, row);
    else {
      // A second primary-name row of the same entity: its name is an alias.
      row.aliases.unshift(row.name);
      row.name = '';
      mergeInto(existing, row);
    }
  });

  if (!columns) throw new ListFormatError(records === 0 ? `the file is empty: expected ${EXPECTED}` : `no header row: expected ${EXPECTED}`);
  const entities = [...drafts.values()].map(finish);
  return nonEmpty({ entities, skipped }, 'individual or entity');
}

function header(fields: string[], line: number): Map<Column, number> {
  const index = new Map<string, number>();
  fields.forEach((field, i) => index.set(clean(field).toLowerCase(), i));
  const missing = REQUIRED.filter((column) => !index.has(column.toLowerCase()));
  if (missing.length > 0) {
    throw new ListFormatError(`expected ${EXPECTED}: a header with ${REQUIRED.join(', ')}; missing ${missing.join(', ')}`, line);
  }
  const columns = new Map<Column, number>();
  for (const column of [...REQUIRED, ...OPTIONAL]) {
    const i = index.get(column.toLowerCase());
    if (i !== undefined) columns.set(column, i);
  }
  return columns;
}
