import { finish, newDraft, nonEmpty, type Draft, type ParsedList } from './draft.js';
import { ListFormatError } from './errors.js';
import { countryCode, normalizeDate, normalizeGender, yearRange } from './values.js';
import { readXml } from './xml.js';

/**
 * un-xml: the UN Security Council consolidated list (CONSOLIDATED_LIST, as published at
 * scsanctions.un.org). INDIVIDUAL → Person, ENTITY → Organization.
 *
 * - id: REFERENCE_NUMBER (QDi.001, CDe.002, ...). The UN list has one element per entry, so a
 *   repeated REFERENCE_NUMBER is refused (it would mean a damaged file), naming its line.
 * - name: FIRST_NAME … FOURTH_NAME joined with spaces (entities: FIRST_NAME); aliases:
 *   ALIAS_NAME of INDIVIDUAL_ALIAS / ENTITY_ALIAS (empty ones skipped) and NAME_ORIGINAL_SCRIPT.
 * - birthDates: INDIVIDUAL_DATE_OF_BIRTH's DATE, YEAR, or FROM_YEAR..TO_YEAR (each year).
 * - nationalities: NATIONALITY/VALUE mapped to alpha-2; gender: GENDER; programs: UN_LIST_TYPE;
 *   identifiers: INDIVIDUAL_DOCUMENT/NUMBER; topics: sanction; notes: COMMENTS1.
 */

const EXPECTED = 'a UN Security Council consolidated list (un-xml)';
const NAME_PARTS = ['FIRST_NAME', 'SECOND_NAME', 'THIRD_NAME', 'FOURTH_NAME'] as const;

interface Entry {
  draft: Draft;
  nameParts: Partial<Record<(typeof NAME_PARTS)[number], string>>;
  fromYear?: string;
  toYear?: string;
}

export function parseUnXml(bytes: Buffer): ParsedList {
  const entities: ParsedList['entities'] = [];
  const ids = new Set<string>();
  const path: string[] = [];
  let entry: Entry | undefined;

  readXml(bytes, { name: 'CONSOLIDATED_LIST', expected: EXPECTED }, {
    open(name, _attributes, line) {
      path.push(name);
      if (name === 'INDIVIDUAL' || name === 'ENTITY') {
        entry = { draft: newDraft('', name === 'INDIVIDUAL' ? 'Person' : 'Organization', line), nameParts: {} };
      } else if (name === 'INDIVIDUAL_DATE_OF_BIRTH' && entry) {
        entry.fromYear = undefined;
        entry.toYear = undefined;
      }
    },
    close(name, text) {
      path.pop();
      if (!entry) return;
      const draft = entry.draft;
      const parent = path[path.length - 1];
      switch (name) {
        case 'INDIVIDUAL':
        case 'ENTITY':
          entities.push(finishEntry(entry, ids));
          entry = undefined;
          return;
        case 'REFERENCE_NUMBER':
          draft.id = text.trim();
          return;
        case 'FIRST_NAME':
        case 'SECOND_NAME':
        case 'THIRD_NAME':
        case 'FOURTH_NAME':
          entry.nameParts[name] = text;
          return;
        case 'ALIAS_NAME':
        case 'NAME_ORIGINAL_SCRIPT':
          draft.aliases.push(text);
          return;
        case 'UN_LIST_TYPE':
          draft.programs.push(text);
          return;
        case 'GENDER':
          draft.gender = normalizeGender(text);
          return;
        case 'COMMENTS1':
          draft.notes = text;
          return;
        case 'VALUE':
          if (parent === 'NATIONALITY') {
            const code = countryCode(text);
            if (code) draft.nationalities.push(code);
          }
          return;
        case 'NUMBER':
          if (parent === 'INDIVIDUAL_DOCUMENT') draft.identifiers.push(text);
          return;
        case 'DATE':
        case 'YEAR':
          if (parent === 'INDIVIDUAL_DATE_OF_BIRTH') draft.birthDates.push(...normalizeDate(text));
          return;
        case 'FROM_YEAR':
          if (parent === 'INDIVIDUAL_DATE_OF_BIRTH') entry.fromYear = text.trim();
          return;
        case 'TO_YEAR':
          if (parent === 'INDIVIDUAL_DATE_OF_BIRTH') entry.toYear = text.trim();
          return;
        case 'INDIVIDUAL_DATE_OF_BIRTH':
          addYearRange(entry);
          return;
      }
    },
  });
  return nonEmpty({ entities, skipped: {} }, 'UN list');
}

function addYearRange(entry: Entry): void {
  const from = entry.fromYear ? Number(entry.fromYear) : undefined;
  const to = entry.toYear ? Number(entry.toYear) : undefined;
  if (from !== undefined && to !== undefined) entry.draft.birthDates.push(...yearRange(from, to));
  else if (from !== undefined || to !== undefined) entry.draft.birthDates.push(...normalizeDate(String(from ?? to)));
}

function finishEntry(entry: Entry, ids: Set<string>): ReturnType<typeof finish> {
  const draft = entry.draft;
  if (draft.id === '') throw new ListFormatError('an entry without REFERENCE_NUMBER', draft.line);
  if (ids.has(draft.id)) throw new ListFormatError(`REFERENCE_NUMBER ${draft.id} appears twice`, draft.line);
  ids.add(draft.id);
  draft.name = NAME_PARTS.map((part) => entry.nameParts[part] ?? '').join(' ');
  draft.topics.push('sanction');
  return finish(draft);
}
