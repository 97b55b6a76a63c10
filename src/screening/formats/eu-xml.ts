import { countSkip, finish, newDraft, nonEmpty, type Draft, type ParsedList } from './draft.js';
import { ListFormatError } from './errors.js';
import { clean, countryCode, datePrecision, normalizeDate, normalizeGender, yearRange } from './values.js';
import { readXml } from './xml.js';

/**
 * eu-xml: the EU's consolidated financial sanctions file (xmlFullSanctionsList_1_1: root
 * <export xmlns="http://eu.europa.ec/fpi/fsd/export">, one <sanctionEntity> per listed subject).
 *
 * - id: the sanctionEntity's logicalId (its euReferenceNumber is not unique across time). One
 *   element per subject: a repeated logicalId is refused.
 * - subjectType code person → Person, enterprise → Organization; any other is counted in `skipped`.
 * - nameAlias: wholeName (or firstName middleName lastName); the first one is the name (the EU
 *   marks no primary; strong="true" is on almost every alias), the rest aliases; gender M/F from
 *   a nameAlias's gender.
 * - birthdate: its birthdate attribute, else year / monthOfYear / dayOfMonth, else
 *   yearRangeFrom..yearRangeTo; citizenship: countryIso2Code ("00" is unknown) or
 *   countryDescription; identification: number; regulation: programme; the subject's own
 *   <remark>s: notes. Topics: sanction.
 */

const EXPECTED = 'the EU financial sanctions file (eu-xml)';
const NAMESPACE = 'http://eu.europa.ec/fpi/fsd/export';

interface Entry {
  draft: Draft;
  subject: string;
  remarks: string[];
}

export function parseEuXml(bytes: Buffer): ParsedList {
  const entities: ParsedList['entities'] = [];
  const skipped: Record<string, number> = {};
  const ids = new Set<string>();
  const path: string[] = [];
  let entry: Entry | undefined;

  readXml(bytes, { name: 'export', namespace: NAMESPACE, expected: EXPECTED }, {
    open(name, attributes, line) {
      const parent = path[path.length - 1];
      path.push(name);
      if (name === 'sanctionEntity') {
        entry = { draft: newDraft(clean(attributes.logicalId), 'Person', line), subject: '', remarks: [] };
        return;
      }
      if (!entry || parent !== 'sanctionEntity') return;
      const draft = entry.draft;
      switch (name) {
        case 'subjectType':
          entry.subject = clean(attributes.code);
          return;
        case 'nameAlias': {
          const whole = clean(attributes.wholeName);
          draft.aliases.push(whole !== '' ? whole : [attributes.firstName, attributes.middleName, attributes.lastName].map(clean).filter(Boolean).join(' '));
          draft.gender ??= normalizeGender(attributes.gender);
          return;
        }
        case 'birthdate':
          draft.birthDates.push(...birthDates(attributes));
          return;
        case 'citizenship': {
          const code = attributes.countryIso2Code && attributes.countryIso2Code !== '00' ? countryCode(attributes.countryIso2Code) : countryCode(attributes.countryDescription);
          if (code) draft.nationalities.push(code);
          return;
        }
        case 'identification':
          draft.identifiers.push(clean(attributes.number));
          return;
        case 'regulation':
          draft.programs.push(clean(attributes.programme));
          return;
      }
    },
    close(name, text) {
      path.pop();
      if (!entry) return;
      if (name === 'remark' && path[path.length - 1] === 'sanctionEntity') entry.remarks.push(text);
      else if (name === 'sanctionEntity') {
        const entity = finishEntry(entry, ids, skipped);
        if (entity) entities.push(entity);
        entry = undefined;
      }
    },
  });
  return nonEmpty({ entities, skipped }, 'person or enterprise');
}

function birthDates(attributes: Record<string, string>): string[] {
  const full = normalizeDate(attributes.birthdate);
  if (full.length > 0) return full;
  const year = Number(attributes.year);
  if (year) {
    const date = datePrecision(year, Number(attributes.monthOfYear) || undefined, Number(attributes.dayOfMonth) || undefined);
    return date ? [date] : [];
  }
  const from = Number(attributes.yearRangeFrom);
  const to = Number(attributes.yearRangeTo);
  if (from && to) return yearRange(from, to);
  return [];
}

function finishEntry(entry: Entry, ids: Set<string>, skipped: Record<string, number>): ReturnType<typeof finish> | undefined {
  const draft = entry.draft;
  if (draft.id === '') throw new ListFormatError('a sanctionEntity without logicalId', draft.line);
  if (ids.has(draft.id)) throw new ListFormatError(`logicalId ${draft.id} appears twice`, draft.line);
  ids.add(draft.id);
  if (entry.subject === 'person') draft.schema = 'Person';
  else if (entry.subject === 'enterprise') draft.schema = 'Organization';
  else {
    countSkip(skipped, entry.subject === '' ? 'without subjectType' : entry.subject);
    return undefined;
  }
  draft.notes = entry.remarks.join(' ');
  draft.topics.push('sanction');
  return finish(draft);
}
