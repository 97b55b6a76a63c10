import { countSkip, finish, newDraft, nonEmpty, type Draft, type ParsedList } from './draft.js';
import { ListFormatError } from './errors.js';
import { isOfacIdentifierType } from './ofac-ids.js';
import { clean, countryCode, normalizeDate, normalizeGender } from './values.js';
import { readXml } from './xml.js';

/**
 * ofac-xml: OFAC's classic `sdnList` XML, the layout of both sdn.xml and the consolidated
 * (non-SDN) consolidated.xml.
 *
 * - id: the entry's uid. One sdnEntry per uid by design, so a repeated uid is refused.
 * - sdnType Individual → Person (name: firstName lastName), Entity → Organization (lastName);
 *   Vessel and Aircraft entries have no place in the schema and are counted in `skipped`.
 * - akaList/aka → aliases (firstName lastName); dateOfBirthList → birthDates ("12 Jan 1960",
 *   "1960", "circa 1960", "1960 to 1962"); nationalityList / citizenshipList → nationalities;
 *   programList → programs; an organization's address countries → nationalities; idList → identifiers for the identification types (passport,
 *   national ID, registration, tax numbers), gender from an idType "Gender", an organization's
 *   "Nationality of Registration" as its country; remarks → notes; topics: sanction.
 */

const EXPECTED = "OFAC's sdnList XML (ofac-xml)";

interface Entry {
  draft: Draft;
  type: string;
  firstName: string;
  lastName: string;
  akaFirst: string;
  akaLast: string;
  idType: string;
  idNumber: string;
  addressCountries: string[];
}

export function parseOfacXml(bytes: Buffer): ParsedList {
  const entities: ParsedList['entities'] = [];
  const skipped: Record<string, number> = {};
  const ids = new Set<string>();
  const path: string[] = [];
  let entry: Entry | undefined;

  readXml(bytes, { name: 'sdnList', expected: EXPECTED }, {
    open(name, _attributes, line) {
      path.push(name);
      if (name === 'sdnEntry') {
        entry = { draft: newDraft('', 'Person', line), type: '', firstName: '', lastName: '', akaFirst: '', akaLast: '', idType: '', idNumber: '', addressCountries: [] };
      } else if (entry && name === 'aka') {
        entry.akaFirst = '';
        entry.akaLast = '';
      } else if (entry && name === 'id') {
        entry.idType = '';
        entry.idNumber = '';
      }
    },
    close(name, text) {
      path.pop();
      if (!entry) return;
      const parent = path[path.length - 1];
      const draft = entry.draft;
      if (name === 'sdnEntry') {
        const entity = finishEntry(entry, ids, skipped);
        if (entity) entities.push(entity);
        entry = undefined;
        return;
      }
      if (parent === 'sdnEntry') {
        if (name === 'uid') draft.id = text.trim();
        else if (name === 'firstName') entry.firstName = text;
        else if (name === 'lastName') entry.lastName = text;
        else if (name === 'sdnType') entry.type = text.trim();
        else if (name === 'remarks') draft.notes = text;
        return;
      }
      switch (name) {
        case 'program':
          draft.programs.push(text);
          return;
        case 'firstName':
          if (parent === 'aka') entry.akaFirst = text;
          return;
        case 'lastName':
          if (parent === 'aka') entry.akaLast = text;
          return;
        case 'aka':
          draft.aliases.push(`${entry.akaFirst} ${entry.akaLast}`);
          return;
        case 'dateOfBirth':
          draft.birthDates.push(...normalizeDate(text));
          return;
        case 'country':
          if (parent === 'nationality' || parent === 'citizenship') addCountry(draft, text);
          else if (parent === 'address') entry.addressCountries.push(text);
          return;
        case 'idType':
          entry.idType = clean(text);
          return;
        case 'idNumber':
          entry.idNumber = clean(text);
          return;
        case 'id':
          addIdentification(entry);
          return;
      }
    },
  });
  return nonEmpty({ entities, skipped }, 'person or organization');
}

function addCountry(draft: Draft, name: string): void {
  const code = countryCode(name);
  if (code) draft.nationalities.push(code);
}

function addIdentification(entry: Entry): void {
  const { idType, idNumber, draft } = entry;
  if (idNumber === '') return;
  if (idType === 'Gender') draft.gender = normalizeGender(idNumber);
  else if (idType === 'Nationality of Registration') addCountry(draft, idNumber);
  else if (isOfacIdentifierType(idType)) draft.identifiers.push(idNumber);
}

function finishEntry(entry: Entry, ids: Set<string>, skipped: Record<string, number>): ReturnType<typeof finish> | undefined {
  const draft = entry.draft;
  if (draft.id === '') throw new ListFormatError('an sdnEntry without uid', draft.line);
  if (ids.has(draft.id)) throw new ListFormatError(`uid ${draft.id} appears twice`, draft.line);
  ids.add(draft.id);
  switch (entry.type) {
    case 'Individual':
      draft.schema = 'Person';
      break;
    case 'Entity':
      draft.schema = 'Organization';
      // An organization's nationality is where it is: its addresses' countries.
      for (const country of entry.addressCountries) addCountry(draft, country);
      break;
    case 'Vessel':
    case 'Aircraft':
      countSkip(skipped, entry.type.toLowerCase());
      return undefined;
    default:
      throw new ListFormatError(`uid ${draft.id}: sdnType ${JSON.stringify(entry.type)} is not Individual, Entity, Vessel or Aircraft`, draft.line);
  }
  draft.name = `${entry.firstName} ${entry.lastName}`;
  draft.topics.push('sanction');
  return finish(draft);
}
