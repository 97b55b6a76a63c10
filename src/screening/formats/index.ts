import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ListEntity } from '../entity.js';
import { parseVouchCsv } from './csv.js';
import type { ParsedList } from './draft.js';
import { ListFormatError } from './errors.js';
import { parseEuXml } from './eu-xml.js';
import { parseFtm } from './ftm.js';
import { OFAC_CSV_COMPANIONS, parseOfacCsv } from './ofac-csv.js';
import { parseOfacXml } from './ofac-xml.js';
import { parseUkCsv } from './uk-csv.js';
import { parseUnXml } from './un-xml.js';

/**
 * Reading watchlist files (issue 51; DESIGN.md "Screening"): one reader per format, each turning
 * the bytes of an official list into ListEntity values or refusing the whole file with a
 * ListFormatError that names the line. A reader never returns a partial list: a truncated,
 * empty or wrong-format file is an error, so the previous version of the list keeps serving.
 * Each format's file says what it reads and how it treats a repeated id.
 */

export { ListFormatError } from './errors.js';
export type { ParsedList } from './draft.js';

export type ListFormat = 'un-xml' | 'ofac-xml' | 'ofac-csv' | 'uk-csv' | 'eu-xml' | 'ftm' | 'csv';
export const LIST_FORMATS: readonly ListFormat[] = ['un-xml', 'ofac-xml', 'ofac-csv', 'uk-csv', 'eu-xml', 'ftm', 'csv'];

/** The bytes of one list's files. For ofac-csv, `main` is sdn.csv and `companions` hold 'alt.csv' and 'add.csv' (both required) and, optionally, 'sdn_comments.csv'. */
export interface ListFiles {
  main: Buffer;
  companions?: Record<string, Buffer>;
}

const DESCRIPTIONS: Record<ListFormat, string> = {
  'un-xml': 'UN Security Council consolidated list XML (CONSOLIDATED_LIST)',
  'ofac-xml': "OFAC's classic sdnList XML (sdn.xml, consolidated.xml)",
  'ofac-csv': "OFAC's SDN CSV: sdn.csv, with alt.csv and add.csv beside it",
  'uk-csv': 'UK Sanctions List CSV (FCDO)',
  'eu-xml': 'EU financial sanctions file XML (xmlFullSanctionsList_1_1)',
  ftm: 'FollowTheMoney entities, one JSON object per line (OpenSanctions)',
  csv: "Vouch's CSV: id,schema,name,aliases,birthDate,nationality,topics,program,notes",
};

/** One line for CLI help: what files a format reads. */
export function describeFormat(format: ListFormat): string {
  return DESCRIPTIONS[format];
}

/** The companion file names a format needs beside its main file (ofac-csv: alt.csv, add.csv), for the sync to fetch. */
export function companionFiles(format: ListFormat): string[] {
  return format === 'ofac-csv' ? [...OFAC_CSV_COMPANIONS] : [];
}

/** Optional companions: read when present (ofac-csv: sdn_comments.csv, the continuation of Remarks OFAC cut short). */
export function optionalCompanionFiles(format: ListFormat): string[] {
  return format === 'ofac-csv' ? ['sdn_comments.csv'] : [];
}

/** The entities of a list and how many entries of each unscreenable kind (vessel, aircraft, ship, ...) it passed over. */
export async function parseListDetailed(format: ListFormat, files: ListFiles): Promise<ParsedList> {
  switch (format) {
    case 'un-xml':
      return parseUnXml(files.main);
    case 'ofac-xml':
      return parseOfacXml(files.main);
    case 'ofac-csv':
      return parseOfacCsv(files.main, files.companions ?? {});
    case 'uk-csv':
      return parseUkCsv(files.main);
    case 'eu-xml':
      return parseEuXml(files.main);
    case 'ftm':
      return parseFtm(files.main);
    case 'csv':
      return parseVouchCsv(files.main);
    default:
      throw new ListFormatError(`unknown list format ${JSON.stringify(format)}: one of ${LIST_FORMATS.join(', ')}`);
  }
}

export async function parseList(format: ListFormat, files: ListFiles): Promise<ListEntity[]> {
  return (await parseListDetailed(format, files)).entities;
}

/**
 * The companions' names beside `mainPath`: alt.csv and add.csv beside sdn.csv, and OFAC's
 * consolidated trio's cons_alt.csv and cons_add.csv beside cons_prim.csv. Keyed by the names
 * companionFiles gives.
 */
const PRIMARY_FILE = /^(.*)prim\.csv$/i;
const SDN_PREFIX = /^sdn_/;

function companionPaths(format: ListFormat, mainPath: string): { key: string; file: string; required: boolean }[] {
  const dir = path.dirname(mainPath);
  const prefix = PRIMARY_FILE.exec(path.basename(mainPath))?.[1];
  const name = (key: string): string => path.join(dir, prefix !== undefined ? `${prefix}${key.replace(SDN_PREFIX, '')}` : key);
  return [
    ...companionFiles(format).map((key) => ({ key, file: name(key), required: true })),
    ...optionalCompanionFiles(format).map((key) => ({ key, file: name(key), required: false })),
  ];
}

async function readBytes(file: string, required: boolean, companionOf?: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!required && code === 'ENOENT') return undefined;
    if (code === 'ENOENT') {
      throw new ListFormatError(companionOf ? `${companionOf} needs ${path.basename(file)} beside it: ${file} does not exist` : `${file} does not exist`);
    }
    if (code === 'EISDIR') throw new ListFormatError(`${file} is a folder, not a list file`);
    if (code === 'EACCES') throw new ListFormatError(`${file} cannot be read (permission denied)`);
    throw err;
  }
}

/** Reads FILE (and, for ofac-csv, alt.csv and add.csv beside it, and sdn_comments.csv when there) from disk and parses it. */
export async function readListFileDetailed(format: ListFormat, filePath: string): Promise<ParsedList> {
  if (!LIST_FORMATS.includes(format)) throw new ListFormatError(`unknown list format ${JSON.stringify(format)}: one of ${LIST_FORMATS.join(', ')}`);
  const main = (await readBytes(filePath, true))!;
  const companions: Record<string, Buffer> = {};
  for (const { key, file, required } of companionPaths(format, filePath)) {
    const bytes = await readBytes(file, required, path.basename(filePath));
    if (bytes) companions[key] = bytes;
  }
  return parseListDetailed(format, { main, companions });
}

export async function readListFile(format: ListFormat, filePath: string): Promise<ListEntity[]> {
  return (await readListFileDetailed(format, filePath)).entities;
}
