import type { EntitySchema, ListEntity } from '../entity.js';
import { isBlank } from './bytes.js';
import { readCsv } from './csv-records.js';
import { finish, newDraft, nonEmpty, type ParsedList } from './draft.js';
import { ListFormatError } from './errors.js';
import { clean, datePrecision, isCountryCode } from './values.js';

/**
 * csv: Vouch's own list format, for the Nigeria Sanctions List (published only as web pages),
 * PEP lists and an operator's own lists. Strict, because a person writes it by hand:
 *
 *   id,schema,name,aliases,birthDate,nationality,topics,program,notes
 *
 * - The header is exactly that. `schema` is Person or Organization; `id` and `name` are required.
 * - `aliases`, `birthDate` (YYYY or YYYY-MM-DD, a real date), `nationality` (ISO 3166-1 alpha-2,
 *   either case) and `topics` (lower-case words: sanction, pep, role.pep, crime, ...) hold
 *   `;`-separated values; `program` and `notes` are single values.
 * - A repeated id is refused (naming both lines): in a hand-written file it is a mistake, and
 *   merging would hide it.
 * - Any bad value, or a row with other than 9 fields (a file cut mid-row), is refused naming its
 *   line. A last row without a line break is fine when it is whole.
 */

export const VOUCH_CSV_HEADER = ['id', 'schema', 'name', 'aliases', 'birthDate', 'nationality', 'topics', 'program', 'notes'] as const;
const EXPECTED = `Vouch's list CSV (csv), whose header is ${VOUCH_CSV_HEADER.join(',')}`;
const SCHEMATA: Record<string, EntitySchema> = { Person: 'Person', Organization: 'Organization' };
const DATE = /^(\d{4})(?:-(\d{2})-(\d{2}))?$/;
const TOPIC = /^[a-z][a-z0-9_.-]*$/;
const SEPARATOR = ';';

function list(cell: string | undefined): string[] {
  if (!cell) return [];
  return cell.split(SEPARATOR).map(clean).filter(Boolean);
}

export function parseVouchCsv(bytes: Buffer): ParsedList {
  if (isBlank(bytes)) throw new ListFormatError(`the file is empty: expected ${EXPECTED}`);
  const entities: ListEntity[] = [];
  const lines = new Map<string, number>();
  let sawHeader = false;

  readCsv(bytes, {}, (fields, line) => {
    if (!sawHeader) {
      const found = fields.map((field) => field.trim());
      if (found.length !== VOUCH_CSV_HEADER.length || found.some((field, i) => field !== VOUCH_CSV_HEADER[i])) {
        throw new ListFormatError(`expected ${EXPECTED}; found ${JSON.stringify(found.join(',').slice(0, 120))}`, line);
      }
      sawHeader = true;
      return;
    }
    if (fields.length !== VOUCH_CSV_HEADER.length) {
      throw new ListFormatError(`${fields.length} field${fields.length === 1 ? '' : 's'} where the header has ${VOUCH_CSV_HEADER.length}: the row is cut short or malformed`, line);
    }
    const [id, schemaName, name, aliases, birthDate, nationality, topics, program, notes] = fields.map(clean) as [string, string, string, string, string, string, string, string, string];
    if (id === '') throw new ListFormatError('id is empty', line);
    const seenOn = lines.get(id);
    if (seenOn !== undefined) throw new ListFormatError(`id ${JSON.stringify(id)} is also on line ${seenOn}`, line);
    lines.set(id, line);
    const schema = SCHEMATA[schemaName];
    if (!schema) throw new ListFormatError(`schema ${JSON.stringify(schemaName)} is not Person or Organization`, line);
    if (name === '') throw new ListFormatError('name is empty', line);

    const draft = newDraft(id, schema, line);
    draft.name = name;
    draft.aliases.push(...list(aliases));
    for (const date of list(birthDate)) draft.birthDates.push(checkedDate(date, line));
    for (const code of list(nationality)) {
      const upper = code.toUpperCase();
      if (!isCountryCode(upper)) throw new ListFormatError(`nationality ${JSON.stringify(code)} is not an ISO 3166-1 alpha-2 country code`, line);
      draft.nationalities.push(upper);
    }
    for (const topic of list(topics)) {
      if (!TOPIC.test(topic)) throw new ListFormatError(`topic ${JSON.stringify(topic)} is not a lower-case word such as sanction, pep or crime`, line);
      draft.topics.push(topic);
    }
    if (program !== '') draft.programs.push(program);
    if (notes !== '') draft.notes = notes;
    entities.push(finish(draft));
  });

  if (!sawHeader) throw new ListFormatError(`the file is empty: expected ${EXPECTED}`);
  return nonEmpty({ entities, skipped: {} }, 'Person or Organization');
}

function checkedDate(text: string, line: number): string {
  const match = DATE.exec(text);
  const date = match ? datePrecision(Number(match[1]), match[2] ? Number(match[2]) : undefined, match[3] ? Number(match[3]) : undefined) : undefined;
  if (!date || (match![2] !== undefined && date.length !== 10)) {
    throw new ListFormatError(`birthDate ${JSON.stringify(text)} is not a date written YYYY or YYYY-MM-DD`, line);
  }
  return date;
}
