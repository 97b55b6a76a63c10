import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type { IndexedEntity, ListEntity, ScreeningSubject } from '../../src/screening/entity.js';
import { parseOfacCsv } from '../../src/screening/formats/ofac-csv.js';
import { parseUnXml } from '../../src/screening/formats/un-xml.js';
import { countryCode } from '../../src/screening/formats/values.js';

/**
 * The screening data kit (../shared/screening, or `--kit DIR`): real list files and labelled sets,
 * read at run time only, never copied into this repository (OpenSanctions-derived sets are
 * CC BY-NC). See its README for each file's source and licence.
 */

export const DEFAULT_KIT = '/work/shared/screening';

/** The kit's folder, or undefined after saying on stdout, in one line, that `script` skips for want of it. */
export function screeningKit(script: string, kitOption: string | undefined): string | undefined {
  const dir = path.resolve(kitOption ?? DEFAULT_KIT);
  const probe = path.join(dir, 'un', 'consolidated.xml');
  if (!existsSync(probe)) {
    process.stdout.write(`${script}: skipped, no screening data kit: ${probe} is missing (see --kit)\n`);
    return undefined;
  }
  return dir;
}

/** A CSV file of the kit as records keyed by its header (or `columns` where it has none); `#` lines are comments. */
export function readCsvRecords(file: string, columns?: string[]): Record<string, string>[] {
  return parse(readFileSync(file), { columns: columns ?? true, comment: '#', skip_empty_lines: true, relax_column_count: true }) as Record<string, string>[];
}

function indexed(entities: ListEntity[], source: string): IndexedEntity[] {
  return entities.map((entity) => ({ ...entity, source, listVersion: 1 }));
}

/** The UN Security Council consolidated list through Vouch's own reader. */
export function unEntities(kit: string): IndexedEntity[] {
  return indexed(parseUnXml(readFileSync(path.join(kit, 'un', 'consolidated.xml'))).entities, 'un');
}

/** OFAC's SDN list (the sdn.csv, alt.csv, add.csv trio) through Vouch's own reader. */
export function ofacEntities(kit: string): IndexedEntity[] {
  const dir = path.join(kit, 'ofac');
  const companions = { 'alt.csv': readFileSync(path.join(dir, 'alt.csv')), 'add.csv': readFileSync(path.join(dir, 'add.csv')) };
  return indexed(parseOfacCsv(readFileSync(path.join(dir, 'sdn.csv')), companions).entities, 'ofac');
}

/** "1965-3-4" → "1965-03-04"; "1965" stays; anything else is dropped. */
function birthDate(value: string | undefined): string | undefined {
  const match = /^(\d{4})(?:-(\d{1,2})-(\d{1,2}))?$/.exec(value?.trim() ?? '');
  if (!match) return undefined;
  return match[2] === undefined ? match[1] : `${match[1]}-${match[2].padStart(2, '0')}-${match[3]!.padStart(2, '0')}`;
}

/** A yente fixture row (full_name, gender, date_of_birth, nationality) as a screening subject. */
export function subjectOfRow(row: Record<string, string>): ScreeningSubject {
  const gender = row.gender === 'male' || row.gender === 'female' ? row.gender : undefined;
  return {
    type: 'person',
    names: [row.full_name ?? ''],
    birthDate: birthDate(row.date_of_birth),
    gender,
    nationality: countryCode(row.nationality),
  };
}
