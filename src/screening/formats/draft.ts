import type { EntitySchema, ListEntity } from '../entity.js';
import { ListFormatError } from './errors.js';
import { clean, shortNotes } from './values.js';

/**
 * An entity while a file is being read: values are added as they come (raw, possibly empty or
 * repeated) and `finish` writes the ListEntity the contract promises: name trimmed and
 * whitespace-collapsed, aliases distinct from the name and from each other (case-insensitively),
 * no empty strings, no repeated values.
 */
export interface Draft {
  id: string;
  schema: EntitySchema;
  /** The line the entity starts on, for errors about it. */
  line: number;
  name: string;
  aliases: string[];
  birthDates: string[];
  nationalities: string[];
  gender?: 'male' | 'female';
  topics: string[];
  programs: string[];
  identifiers: string[];
  notes?: string;
}

export function newDraft(id: string, schema: EntitySchema, line: number): Draft {
  return { id, schema, line, name: '', aliases: [], birthDates: [], nationalities: [], topics: [], programs: [], identifiers: [] };
}

/** Values cleaned, empty ones dropped, repeats (exact, after cleaning) dropped; order kept. */
function distinct(values: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of values) {
    const value = clean(raw);
    if (value === '' || seen.has(value)) continue;
    seen.add(value);
    out.push(value);
  }
  return out;
}

/**
 * The ListEntity of a draft. A draft without a name takes its first alias as its name; one with
 * neither is refused, naming its line, because an entry nobody can be matched against is a list
 * the reader did not understand.
 */
export function finish(draft: Draft): ListEntity {
  const aliases: string[] = [];
  let name = clean(draft.name);
  const seen = new Set<string>();
  if (name !== '') seen.add(name.toLowerCase());
  for (const raw of draft.aliases) {
    const alias = clean(raw);
    if (alias === '') continue;
    if (name === '') {
      name = alias;
      seen.add(alias.toLowerCase());
      continue;
    }
    const key = alias.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    aliases.push(alias);
  }
  if (name === '') throw new ListFormatError(`entry ${JSON.stringify(draft.id)} has no name`, draft.line);
  const entity: ListEntity = {
    id: draft.id,
    schema: draft.schema,
    name,
    aliases,
    birthDates: distinct(draft.birthDates),
    nationalities: distinct(draft.nationalities),
    topics: distinct(draft.topics),
    programs: distinct(draft.programs),
    identifiers: distinct(draft.identifiers),
  };
  if (draft.gender) entity.gender = draft.gender;
  const notes = shortNotes(draft.notes);
  if (notes) entity.notes = notes;
  return entity;
}

/** Adds what `more` says about the same entity to `into` (a list that writes one row per name). */
export function mergeInto(into: Draft, more: Draft): void {
  if (into.name === '') into.name = more.name;
  else if (more.name !== '') into.aliases.push(more.name);
  into.aliases.push(...more.aliases);
  into.birthDates.push(...more.birthDates);
  into.nationalities.push(...more.nationalities);
  into.topics.push(...more.topics);
  into.programs.push(...more.programs);
  into.identifiers.push(...more.identifiers);
  into.gender ??= more.gender;
  into.notes ??= more.notes;
}

/** What a reader hands back: the entities and how many entries of each skipped kind (vessels, aircraft, ...) it passed over. */
export interface ParsedList {
  entities: ListEntity[];
  skipped: Record<string, number>;
}

export function countSkip(skipped: Record<string, number>, kind: string): void {
  skipped[kind] = (skipped[kind] ?? 0) + 1;
}

/** Refuses a file that yielded nothing screenable: an empty list would silently clear the source. */
export function nonEmpty(parsed: ParsedList, what: string): ParsedList {
  if (parsed.entities.length === 0) {
    const skipped = Object.entries(parsed.skipped).map(([kind, n]) => `${n} ${kind}`).join(', ');
    throw new ListFormatError(`the file holds no ${what} entities${skipped ? ` (only ${skipped}, which are not screened)` : ''}`);
  }
  return parsed;
}
