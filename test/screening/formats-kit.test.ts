import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ListEntity } from '../../src/screening/entity.js';
import { ListFormatError, parseList, parseListDetailed, readListFileDetailed, type ListFormat } from '../../src/screening/formats/index.js';

/**
 * The list readers on the real files of the screening data kit (../shared/screening/README.md,
 * read in place, never copied here): the counts each file is known to hold, entries checked
 * field by field, and the real files cut short. Skipped, with a line saying so, where the kit
 * is absent.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KIT = path.resolve(ROOT, '../shared/screening');
const hasKit = existsSync(path.join(KIT, 'un/consolidated.xml')) && existsSync(path.join(KIT, 'ofac/sdn.csv'));
if (!hasKit) console.warn(`skipping the list readers on real files: the screening data kit is not at ${KIT}`);

const kit = (name: string) => path.join(KIT, name);
const byId = (entities: ListEntity[]) => new Map(entities.map((entity) => [entity.id, entity]));
const count = (entities: ListEntity[], schema: ListEntity['schema']) => entities.filter((entity) => entity.schema === schema).length;

async function refusedWhenCut(format: ListFormat, name: string, companions: Record<string, Buffer> = {}): Promise<ListFormatError> {
  const whole = await readFile(kit(name));
  const err = await parseList(format, { main: whole.subarray(0, Math.floor(whole.length * 0.6)), companions }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ListFormatError);
  return err as ListFormatError;
}

/** What the contract promises of every entity, whatever the format: the breaches found, by id (expect() per value made a 10 s test). */
function breaches(entities: ListEntity[]): string[] {
  const found: string[] = [];
  const date = /^\d{4}(-\d{2}(-\d{2})?)?$/;
  const code = /^[A-Z]{2}$/;
  for (const entity of entities) {
    const names = [entity.name, ...entity.aliases].map((name) => name.toLowerCase());
    if (entity.name === '' || entity.name !== entity.name.replace(/\s+/g, ' ').trim()) found.push(`${entity.id}: name ${JSON.stringify(entity.name)}`);
    if (new Set(names).size !== names.length) found.push(`${entity.id}: a name repeated in ${JSON.stringify(names)}`);
    for (const list of [entity.aliases, entity.birthDates, entity.nationalities, entity.topics, entity.programs, entity.identifiers]) {
      if (!list.every((value) => value !== '' && value === value.trim())) found.push(`${entity.id}: untrimmed or empty value in ${JSON.stringify(list)}`);
    }
    if (!entity.birthDates.every((value) => date.test(value))) found.push(`${entity.id}: birthDates ${JSON.stringify(entity.birthDates)}`);
    if (!entity.nationalities.every((value) => code.test(value))) found.push(`${entity.id}: nationalities ${JSON.stringify(entity.nationalities)}`);
    if ((entity.notes ?? '').length > 1000) found.push(`${entity.id}: notes of ${entity.notes!.length} characters`);
  }
  return found;
}

describe.skipIf(!hasKit)('the data kit lists', () => {
  it('un-xml: the complete UN list, 1,003 entries (730 persons, 273 organizations), checked field by field', async () => {
    const { entities, skipped } = await readListFileDetailed('un-xml', kit('un/consolidated.xml'));
    expect(entities).toHaveLength(1003);
    expect(count(entities, 'Person')).toBe(730);
    expect(count(entities, 'Organization')).toBe(273);
    expect(skipped).toEqual({});
    expect(breaches(entities)).toEqual([]);
    const entries = byId(entities);
    expect(entries.get('CDi.002')).toMatchObject({
      schema: 'Person',
      name: 'FRANK KAKOLELE BWAMBALE',
      aliases: ['FRANK KAKORERE', 'FRANK KAKORERE BWAMBALE', 'AIGLE BLANC'],
      birthDates: [],
      nationalities: ['CD'],
      gender: 'male',
      programs: ['DRC'],
      topics: ['sanction'],
    });
    expect(entries.get('QDi.001')).toMatchObject({
      name: 'MOHAMMED SALAHALDIN ABD EL HALIM ZIDANE',
      aliases: ['محمد صلاح الدين عبدالحليم زيدان', 'Sayf-Al Adl', 'Muhamad Ibrahim Makkawi', 'Ibrahim al-Madani', "Saif Al-'Adil", 'Seif al Adel'],
      birthDates: ['1963-04-11', '1960-04-11'],
      nationalities: ['EG'],
      programs: ['Al-Qaida'],
    });
    expect(entries.get('CDi.001')).toMatchObject({ name: 'ERIC BADEGE', aliases: [], birthDates: ['1971'], nationalities: ['CD'] });
  });

  it('ofac-xml: the consolidated list, 565 entries after skipping 74 vessels', async () => {
    const { entities, skipped } = await readListFileDetailed('ofac-xml', kit('ofac/consolidated.xml'));
    expect(entities).toHaveLength(565);
    expect(count(entities, 'Person')).toBe(94);
    expect(count(entities, 'Organization')).toBe(471);
    expect(skipped).toEqual({ vessel: 74 });
    expect(breaches(entities)).toEqual([]);
    const entries = byId(entities);
    expect(entries.get('4632')).toEqual({
      id: '4632',
      schema: 'Organization',
      name: 'BANK MARKAZI JOMHOURI ISLAMI IRAN',
      aliases: ['CENTRAL BANK OF THE ISLAMIC REPUBLIC OF IRAN', 'BANK MARKAZI IRAN', 'CENTRAL BANK OF IRAN'],
      birthDates: [],
      nationalities: ['IR'],
      topics: ['sanction'],
      programs: ['IRAN'],
      identifiers: [],
    });
    expect(entries.get('9639')).toMatchObject({ schema: 'Person', name: 'Ismail Abdul Salah HANIYA', aliases: ['Ismail HANIYA', 'Ismaeel HANIYYA'], birthDates: ['1962'], programs: ['NS-PLC'] });
  });

  it('ofac-csv: the SDN list of 2021, 8,976 rows: 4,620 persons, 3,673 organizations, 406 vessels and 277 aircraft skipped', async () => {
    const { entities, skipped } = await readListFileDetailed('ofac-csv', kit('ofac/sdn.csv'));
    expect(entities).toHaveLength(8293);
    expect(count(entities, 'Person')).toBe(4620);
    expect(count(entities, 'Organization')).toBe(3673);
    expect(skipped).toEqual({ vessel: 406, aircraft: 277 });
    expect(breaches(entities)).toEqual([]);
    const entries = byId(entities);
    expect(entries.get('36')).toEqual({ id: '36', schema: 'Organization', name: 'AEROCARIBBEAN AIRLINES', aliases: ['AERO-CARIBBEAN'], birthDates: [], nationalities: ['CU'], topics: ['sanction'], programs: ['CUBA'], identifiers: [] });
    expect(entries.get('10609')).toMatchObject({
      schema: 'Person',
      name: 'Naser MALEKI',
      aliases: ['MALEKI, Naser', 'Nasser MALEKI', 'MALEKI, Nasser'],
      birthDates: ['1960'],
      nationalities: ['IR'],
      programs: ['NPWMD', 'IFSR'],
      identifiers: ['A0003039'],
    });
    expect(entries.get('24901')).toMatchObject({ name: 'Adnan AL-ALI', birthDates: ['1968-06-17'], nationalities: ['SY'], gender: 'male', identifiers: ['6066827'] });
    // sdn_comments.csv continues the Remarks OFAC cut: the passport is only there.
    expect(entries.get('29703')!.identifiers).toEqual(['4005504207']);
    const persons = entities.filter((entity) => entity.schema === 'Person');
    expect(persons.filter((entity) => entity.birthDates.length > 0).length).toBeGreaterThan(4000);
  });

  it('ftm: the yente fixtures, Sanction lines attached to their entities', async () => {
    const t1 = await readListFileDetailed('ftm', kit('ftm/yente-t1.ftm.jsonl'));
    expect(t1.entities).toHaveLength(6);
    expect(count(t1.entities, 'Person')).toBe(4);
    expect(t1.skipped).toEqual({ Address: 1 });
    const zala = await readListFileDetailed('ftm', kit('ftm/yente-zala.ftm.jsonl'));
    expect(zala.entities).toHaveLength(17);
    expect(count(zala.entities, 'Person')).toBe(6);
    expect(zala.skipped).toMatchObject({ Sanction: 41, Ownership: 14, Address: 11 });
    expect(breaches([...t1.entities, ...zala.entities])).toEqual([]);
    const person = byId(t1.entities).get('NK-2Ka3UvopqbpZmVDFjWd4LA');
    expect(person).toMatchObject({ schema: 'Person', name: 'Vitalij Kuzmenko', birthDates: ['1971-01-22'], nationalities: ['RU'], gender: 'male', topics: ['sanction'] });
    expect(byId(zala.entities).get('NK-abdzbEBkqyT29GyREbiURZ')!.programs).toEqual(expect.arrayContaining(['AU-RUSSIA', 'EU-UKR', 'CA-SEMA']));
  });

  it('refuses each real file cut at 60 %', async () => {
    expect((await refusedWhenCut('un-xml', 'un/consolidated.xml')).message).toMatch(/^line \d+: the file ends inside <\w+>, before <\/CONSOLIDATED_LIST>: it is truncated$/);
    expect((await refusedWhenCut('ofac-xml', 'ofac/consolidated.xml')).message).toMatch(/before <\/sdnList>: it is truncated$/);
    const companions = { 'alt.csv': await readFile(kit('ofac/alt.csv')), 'add.csv': await readFile(kit('ofac/add.csv')) };
    expect((await refusedWhenCut('ofac-csv', 'ofac/sdn.csv', companions)).line).toBeGreaterThan(1000);
    expect((await refusedWhenCut('ftm', 'ftm/yente-zala.ftm.jsonl')).message).toMatch(/^line \d+: the line is not complete JSON/);
  });

  it('refuses the right file under the wrong format', async () => {
    const un = await readFile(kit('un/consolidated.xml'));
    await expect(parseListDetailed('ofac-xml', { main: un })).rejects.toThrow(/expected OFAC's sdnList XML \(ofac-xml\) \(root element <sdnList>\), found <CONSOLIDATED_LIST>/);
    await expect(parseListDetailed('eu-xml', { main: un })).rejects.toThrow(/expected the EU financial sanctions file \(eu-xml\)/);
    await expect(parseListDetailed('csv', { main: await readFile(kit('ofac/sdn.csv')) })).rejects.toThrow(/^line 1: expected Vouch's list CSV/);
  });
});
