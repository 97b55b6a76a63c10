import type { EntitySchema } from '../entity.js';
import { isBlank } from './bytes.js';
import { countSkip, finish, mergeInto, newDraft, nonEmpty, type Draft, type ParsedList } from './draft.js';
import { ListFormatError } from './errors.js';
import { countryCode, isCountryCode, normalizeDate, normalizeGender } from './values.js';

/**
 * ftm: FollowTheMoney entities, one JSON object per line (what OpenSanctions delivers:
 * `{"id", "schema", "properties": {"name": [...], ...}}`).
 *
 * - Person → Person; Company, Organization, LegalEntity, PublicBody → Organization. Other
 *   schemata (Sanction, Address, Ownership, Family, ...) describe those entities and are
 *   counted in `skipped`; a Sanction's programId (else its program, else its authority) becomes
 *   a program of the entity it names (properties.entity), wherever in the file either line is.
 * - id: the FtM id. FtM ids are canonical across datasets, so one id on two lines (two exports
 *   concatenated) is one entity: merged.
 * - name: the first `name`; aliases: the other names, alias, weakAlias, previousName;
 *   birthDates: birthDate; nationalities: nationality and citizenship (alpha-2, upper-cased;
 *   FtM's non-ISO codes such as "suhh" are dropped), for organizations also country; gender;
 *   topics; identifiers: idNumber, passportNumber, registrationNumber, innCode, ogrnCode,
 *   taxNumber; notes.
 * - Blank lines are passed over. A line that is not a JSON entity (the last line of a truncated
 *   file included) is refused naming its line; a file not ending in a newline is fine when its
 *   last line parses.
 */

const EXPECTED = 'FollowTheMoney JSON lines (ftm)';
const SCHEMATA: Record<string, EntitySchema> = {
  Person: 'Person',
  Company: 'Organization',
  Organization: 'Organization',
  LegalEntity: 'Organization',
  PublicBody: 'Organization',
};
const ALIAS_PROPERTIES = ['alias', 'weakAlias', 'previousName'] as const;
const PERSON_COUNTRIES = ['nationality', 'citizenship'] as const;
const ORGANIZATION_COUNTRIES = ['nationality', 'citizenship', 'country'] as const;
const IDENTIFIER_PROPERTIES = ['idNumber', 'passportNumber', 'registrationNumber', 'innCode', 'ogrnCode', 'taxNumber'] as const;

type Properties = Record<string, unknown>;

function strings(properties: Properties, key: string): string[] {
  const value = properties[key];
  if (!Array.isArray(value)) return typeof value === 'string' ? [value] : [];
  return value.filter((item): item is string => typeof item === 'string');
}

export function parseFtm(bytes: Buffer): ParsedList {
  if (isBlank(bytes)) throw new ListFormatError(`the file is empty: expected ${EXPECTED}`);
  const drafts = new Map<string, Draft>();
  const sanctionPrograms = new Map<string, string[]>();
  const skipped: Record<string, number> = {};
  let line = 0;
  let objects = 0;

  for (let start = 0; start < bytes.length; ) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    line++;
    let text = bytes.toString('utf8', start, end);
    start = end + 1;
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') continue;
    const entity = parseLine(text, line, objects === 0);
    objects++;
    const schema = SCHEMATA[entity.schema];
    if (!schema) {
      if (entity.schema === 'Sanction') addSanction(entity.properties, sanctionPrograms);
      countSkip(skipped, entity.schema);
      continue;
    }
    const draft = readEntity(entity.id, schema, entity.properties, line);
    const existing = drafts.get(entity.id);
    if (!existing) drafts.set(entity.id, draft);
    else if (existing.schema !== schema) throw new ListFormatError(`id ${entity.id} is a ${entity.schema} here but a different kind on line ${existing.line}`, line);
    else mergeInto(existing, draft);
  }

  for (const [id, programs] of sanctionPrograms) drafts.get(id)?.programs.push(...programs);
  const entities = [...drafts.values()].map(finish);
  return nonEmpty({ entities, skipped }, 'Person, Company, Organization, LegalEntity or PublicBody');
}

interface FtmLine {
  id: string;
  schema: string;
  properties: Properties;
}

function parseLine(text: string, line: number, first: boolean): FtmLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ListFormatError(first ? `expected ${EXPECTED}: the line is not JSON (${reason})` : `the line is not complete JSON (${reason}): the file is truncated or damaged`, line);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ListFormatError(`expected ${EXPECTED}: the line is not a JSON object`, line);
  }
  const { id, schema, properties } = value as Record<string, unknown>;
  if (typeof id !== 'string' || id.trim() === '' || typeof schema !== 'string' || typeof properties !== 'object' || properties === null || Array.isArray(properties)) {
    throw new ListFormatError(`expected ${EXPECTED}: an entity has a string "id", a string "schema" and a "properties" object`, line);
  }
  return { id: id.trim(), schema, properties: properties as Properties };
}

function addSanction(properties: Properties, programs: Map<string, string[]>): void {
  // programId is the short, stable code (EU-UKR, AU-RUSSIA); the program's title or the
  // authority only when there is none.
  let labels = strings(properties, 'programId');
  if (labels.length === 0) labels = strings(properties, 'program');
  if (labels.length === 0) labels = strings(properties, 'authority');
  if (labels.length === 0) return;
  for (const id of strings(properties, 'entity')) {
    const list = programs.get(id);
    if (list) list.push(...labels);
    else programs.set(id, [...labels]);
  }
}

function readEntity(id: string, schema: EntitySchema, properties: Properties, line: number): Draft {
  const draft = newDraft(id, schema, line);
  const names = strings(properties, 'name');
  draft.name = names[0] ?? '';
  draft.aliases.push(...names.slice(1));
  for (const key of ALIAS_PROPERTIES) draft.aliases.push(...strings(properties, key));
  for (const date of strings(properties, 'birthDate')) draft.birthDates.push(...normalizeDate(date));
  for (const key of schema === 'Person' ? PERSON_COUNTRIES : ORGANIZATION_COUNTRIES) {
    for (const code of strings(properties, key)) {
      const upper = code.trim().toUpperCase();
      if (isCountryCode(upper)) draft.nationalities.push(upper);
      else {
        const mapped = countryCode(code);
        if (mapped) draft.nationalities.push(mapped);
      }
    }
  }
  for (const gender of strings(properties, 'gender')) draft.gender ??= normalizeGender(gender);
  draft.topics.push(...strings(properties, 'topics'));
  for (const key of IDENTIFIER_PROPERTIES) draft.identifiers.push(...strings(properties, key));
  const notes = strings(properties, 'notes');
  if (notes.length > 0) draft.notes = notes.join(' ');
  return draft;
}
