import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { companionFiles, LIST_FORMATS, type ListFormat } from '../formats/index.js';
import type { ScreeningSourceRow } from './tables.js';
import { notFound } from '../../platform/not-found.js';

/** A source setting the operator can fix: one line, nothing changed. */
export class ListSourceError extends Error {
  override name = 'ListSourceError';
}

/** The official publishers' files (docs/screening-lists.md, "Official sources"); checked August–December 2026. */
export const OFFICIAL_SOURCES: readonly { name: string; format: ListFormat; url: string; title: string; note?: string }[] = [
  { name: 'un', format: 'un-xml', url: 'https://scsanctions.un.org/resources/xml/en/consolidated.xml', title: 'UN Security Council Consolidated List' },
  { name: 'ofac-sdn', format: 'ofac-xml', url: 'https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN.XML', title: 'OFAC Specially Designated Nationals (SDN) list, classic XML' },
  {
    name: 'ofac-sdn-csv',
    format: 'ofac-csv',
    url: 'https://www.treasury.gov/ofac/downloads/sdn.csv',
    title: 'OFAC SDN list, legacy CSV (sdn.csv with alt.csv and add.csv beside it)',
    note: 'the same list as ofac-sdn: load one of the two',
  },
  { name: 'uk', format: 'uk-csv', url: 'https://sanctionslist.fcdo.gov.uk/docs/UK-Sanctions-List.csv', title: 'UK Sanctions List (FCDO)', note: "OFSI's Consolidated List closed on 28 January 2026; this is the UK's one list" },
  {
    name: 'eu',
    format: 'eu-xml',
    url: 'https://webgate.ec.europa.eu/fsd/fsf/public/files/xmlFullSanctionsList_1_1/content?token=dG9rZW4tMjAxNw',
    title: 'EU Financial Sanctions Files (consolidated list)',
    note: 'the URL carries a token; this is the one the Financial Sanctions Files site publishes for everyone: if the EU changes it, set the new URL with `vouch lists set eu --url ...`',
  },
];

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function checkSourceName(name: string): string {
  if (!NAME.test(name)) throw new ListSourceError(`source name must be lowercase letters, digits and dashes (at most 63), got ${JSON.stringify(name)}`);
  return name;
}

export function checkFormat(format: string): ListFormat {
  if (!(LIST_FORMATS as readonly string[]).includes(format)) throw new ListSourceError(`format must be one of ${LIST_FORMATS.join(', ')}, got ${JSON.stringify(format)}`);
  return format as ListFormat;
}

function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ListSourceError(`--url must be an http or https URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new ListSourceError('--url must be an http or https URL');
  if (parsed.username || parsed.password) throw new ListSourceError('--url must not carry credentials');
  return parsed.toString();
}

/** "15m", "1h", "90s", "2d" → seconds; at least a minute. */
export function parseInterval(text: string): number {
  const match = /^(\d+)\s*(s|m|h|d)$/.exec(text.trim());
  if (!match) throw new ListSourceError(`interval must be a number and a unit (s, m, h or d), like 15m or 6h; got ${JSON.stringify(text)}`);
  const seconds = Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as 's' | 'm' | 'h' | 'd'];
  if (seconds < 60) throw new ListSourceError('interval must be at least 1m: the publishers update a few times a day at most');
  if (seconds > 30 * 86_400) throw new ListSourceError('interval must be at most 30d');
  return seconds;
}

export function formatInterval(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/**
 * The companion files' URLs of a format that has them (ofac-csv: alt.csv and add.csv), by file
 * name: the ones set, else beside the main URL.
 */
export function companionUrls(format: ListFormat, url: string, set: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of companionFiles(format)) out[name] = set[name] ?? new URL(name, url).toString();
  return out;
}

export interface SourceSettings {
  format?: string;
  url?: string | null;
  /** 'name=url' pairs for ofac-csv's companions. */
  companions?: Record<string, string>;
  every?: string;
  enabled?: boolean;
  maxShrink?: number;
}

function checkShrink(value: number): number {
  if (!(value >= 0 && value <= 1)) throw new ListSourceError('--max-shrink must be a fraction between 0 and 1 (0.5: refuse a version that drops more than half the list)');
  return value;
}

function checkCompanions(format: ListFormat, companions: Record<string, string>): Record<string, string> {
  const allowed = companionFiles(format);
  for (const [name, url] of Object.entries(companions)) {
    if (!allowed.includes(name)) throw new ListSourceError(allowed.length ? `format ${format} has the companion files ${allowed.join(', ')}, not ${name}` : `format ${format} has no companion files`);
    companions[name] = checkUrl(url);
  }
  return companions;
}

export async function getSource(db: Kysely<DB>, name: string): Promise<ScreeningSourceRow> {
  const row = await db.selectFrom('screening_sources').selectAll().where('name', '=', name).executeTakeFirst();
  if (!row) throw notFound(new ListSourceError(`no list source named ${name} (see vouch lists list)`));
  return row;
}

/** `vouch lists add`: a source to sync from a URL (or, without one, to import into). */
export async function addSource(db: Kysely<DB>, name: string, settings: SourceSettings): Promise<ScreeningSourceRow> {
  checkSourceName(name);
  if (!settings.format) throw new ListSourceError('--format is required for a new source');
  const format = checkFormat(settings.format);
  const values = {
    name,
    format,
    url: settings.url ? checkUrl(settings.url) : null,
    companion_urls: JSON.stringify(checkCompanions(format, { ...settings.companions })),
    sync_interval_seconds: settings.every ? parseInterval(settings.every) : undefined,
    enabled: settings.enabled,
    max_shrink: settings.maxShrink === undefined ? undefined : checkShrink(settings.maxShrink),
  };
  const inserted = await db.insertInto('screening_sources').values(values).onConflict((oc) => oc.column('name').doNothing()).returningAll().executeTakeFirst();
  if (!inserted) throw new ListSourceError(`a list source named ${name} exists already: change it with vouch lists set`);
  return inserted;
}

/** `vouch lists set`: changes what is given; a changed URL forgets the old ETag. */
export async function setSource(db: Kysely<DB>, name: string, settings: SourceSettings): Promise<ScreeningSourceRow> {
  const current = await getSource(db, name);
  if (settings.format !== undefined && settings.format !== current.format) {
    throw new ListSourceError(`source ${name} holds ${current.format} versions; a list in another format is another source (vouch lists add)`);
  }
  const format = current.format as ListFormat;
  const changes: Record<string, unknown> = {};
  if (settings.url !== undefined) {
    const url = settings.url === null || settings.url === '' || settings.url === 'none' ? null : checkUrl(settings.url);
    if (url !== current.url) Object.assign(changes, { url, etag: null, last_modified: null });
  }
  if (settings.companions) changes.companion_urls = JSON.stringify(checkCompanions(format, { ...current.companion_urls, ...settings.companions }));
  if (settings.every !== undefined) changes.sync_interval_seconds = parseInterval(settings.every);
  if (settings.enabled !== undefined) changes.enabled = settings.enabled;
  if (settings.maxShrink !== undefined) changes.max_shrink = checkShrink(settings.maxShrink);
  if (Object.keys(changes).length === 0) return current;
  return db.updateTable('screening_sources').set(changes).where('name', '=', name).returningAll().executeTakeFirstOrThrow();
}

/** `vouch lists remove`: the source, its versions and every entity row go (ON DELETE CASCADE). */
export async function removeSource(db: Kysely<DB>, name: string): Promise<{ name: string; entities: number }> {
  const row = await db.deleteFrom('screening_sources').where('name', '=', name).returning(['name', 'entity_count']).executeTakeFirst();
  if (!row) throw notFound(new ListSourceError(`no list source named ${name} (see vouch lists list)`));
  return { name: row.name, entities: row.entity_count };
}

export function officialSource(name: string) {
  const found = OFFICIAL_SOURCES.find((source) => source.name === name);
  if (!found) throw notFound(new ListSourceError(`no official source named ${name}: one of ${OFFICIAL_SOURCES.map((source) => source.name).join(', ')}`));
  return found;
}
