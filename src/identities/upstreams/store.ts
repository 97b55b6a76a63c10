import { sql, type Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { encryptSecret } from '../../platform/encryption.js';
import { organizationsRoutedTo } from '../biometrics/match-routing.js';
import { UPSTREAM_TYPES, type UpstreamType } from './adapter.js';
import { UPSTREAM_KINDS, upstreamKind } from './kinds.js';
import { notFound } from '../../platform/not-found.js';

/**
 * The upstream configuration in the database: sources, per-type order and cache TTLs. It is
 * tenant-neutral (one set for the installation). Every change bumps `upstream_config_version`
 * in the same transaction, which running servers poll to reload (src/identities/upstreams/config.ts).
 */

/** The embedded registry's name in an order. */
export const EMBEDDED = 'embedded';
export const DEFAULT_TIMEOUT_MS = 8_000;
const NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const RESERVED = new Set([EMBEDDED, 'cache', 'sandbox']);

/** A configuration mistake the operator can fix: one line, never holding the secret. */
export class UpstreamConfigError extends Error {
  override name = 'UpstreamConfigError';
}

export interface SourceView {
  name: string;
  kind: string;
  url: string;
  types: UpstreamType[];
  timeoutMs: number;
}

export interface NewSource {
  name: string;
  kind: string;
  url: string;
  secret: string;
  /** Defaults to every type the kind offers. */
  types?: string[] | undefined;
  timeoutMs?: number | undefined;
}

export function parseType(value: string): UpstreamType {
  if (!(UPSTREAM_TYPES as readonly string[]).includes(value)) throw new UpstreamConfigError(`unknown lookup type "${value}"; one of ${UPSTREAM_TYPES.join(', ')}`);
  return value as UpstreamType;
}

function checkUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UpstreamConfigError('--url is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UpstreamConfigError('--url must start with https:// or http://');
  // The URL is printed by `list`: credentials belong in --secret, where they are encrypted.
  if (url.username || url.password) throw new UpstreamConfigError('--url must not hold credentials; pass them with --secret');
  if (url.search || url.hash) throw new UpstreamConfigError('--url must be a base URL without a query or fragment');
  return raw.replace(/\/+$/, '');
}

/** Validates everything before the secret is encrypted; returns the row's values. */
export function checkNewSource(input: NewSource): Omit<SourceView, 'name'> & { name: string } {
  if (!NAME.test(input.name) || RESERVED.has(input.name)) {
    throw new UpstreamConfigError(`name "${input.name}" must be 1-40 lower-case letters, digits, - or _, and not ${[...RESERVED].join(', ')}`);
  }
  const kind = upstreamKind(input.kind);
  if (!kind) throw new UpstreamConfigError(`unknown kind "${input.kind}"; one of ${UPSTREAM_KINDS.map((k) => k.kind).join(', ')}`);
  const url = checkUrl(input.url);
  const types = input.types ? [...new Set(input.types.map((t) => parseType(t.trim())))] : [...kind.types];
  if (types.length === 0) throw new UpstreamConfigError('--types must name at least one type');
  const unsupported = types.filter((type) => !kind.types.includes(type));
  if (unsupported.length > 0) throw new UpstreamConfigError(`kind ${kind.kind} does not offer ${unsupported.join(', ')}; it offers ${kind.types.join(', ')}`);
  const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 120_000) throw new UpstreamConfigError('--timeout-ms must be a whole number from 100 to 120000');
  try {
    kind.checkSecret(input.secret);
  } catch (err) {
    throw new UpstreamConfigError(`--secret: ${(err as Error).message}`);
  }
  return { name: input.name, kind: kind.kind, url, types, timeoutMs };
}

async function bumpVersion(trx: Kysely<DB>): Promise<void> {
  await sql`update settings set value = (value::bigint + 1)::text where name = 'upstream_config_version'`.execute(trx);
}

export async function addSource(db: Kysely<DB>, key: Buffer, input: NewSource): Promise<SourceView> {
  const source = checkNewSource(input);
  return db.transaction().execute(async (trx) => {
    const taken = await trx.selectFrom('upstream_sources').select('name').where('name', '=', source.name).executeTakeFirst();
    if (taken) throw new UpstreamConfigError(`an upstream named "${source.name}" already exists; remove it first`);
    await trx
      .insertInto('upstream_sources')
      .values({ name: source.name, kind: source.kind, url: source.url, secret_encrypted: encryptSecret(key, input.secret), types: source.types, timeout_ms: source.timeoutMs })
      .execute();
    await bumpVersion(trx);
    return source;
  });
}

/**
 * Removes the source, its place in every order, its health rows and the records it left in the
 * cache. Refused while an organization's face matches go to it: removing it would silently change
 * how those are decided.
 */
export async function removeSource(db: Kysely<DB>, name: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const routed = await organizationsRoutedTo(trx, name);
    if (routed > 0) {
      throw new UpstreamConfigError(`upstream "${name}" decides the face matches of ${routed} organization(s); route them elsewhere first (vouch upstream face-match list)`);
    }
    const removed = await trx.deleteFrom('upstream_sources').where('name', '=', name).returning('name').executeTakeFirst();
    if (!removed) throw notFound(new UpstreamConfigError(`no upstream named "${name}"`));
    // An order left with no upstream goes: the type falls back to the default order, which then
    // picks up upstreams added later instead of pinning the type to the embedded registry.
    await sql`delete from upstream_orders where cardinality(array_remove(array_remove(sources, ${name}), ${EMBEDDED})) = 0`.execute(trx);
    await sql`update upstream_orders set sources = array_remove(sources, ${name}), updated_at = now() where ${name} = any(sources)`.execute(trx);
    await trx.deleteFrom('upstream_health').where('source', '=', name).execute();
    await trx.deleteFrom('upstream_cache').where('source', '=', name).execute();
    await bumpVersion(trx);
  });
}

export async function listSources(db: Kysely<DB>): Promise<SourceView[]> {
  const rows = await db.selectFrom('upstream_sources').select(['name', 'kind', 'url', 'types', 'timeout_ms']).orderBy('created_at').orderBy('name').execute();
  return rows.map((row) => ({ name: row.name, kind: row.kind, url: row.url, types: row.types as UpstreamType[], timeoutMs: row.timeout_ms }));
}

/** Sets the order of a type: each name is `embedded` or a source that serves the type. */
export async function setOrder(db: Kysely<DB>, typeName: string, names: string[]): Promise<string[]> {
  const type = parseType(typeName);
  if (names.length === 0) throw new UpstreamConfigError('name at least one source (`embedded` is the embedded registry)');
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate) throw new UpstreamConfigError(`"${duplicate}" appears twice in the order`);
  return db.transaction().execute(async (trx) => {
    const sources = await trx.selectFrom('upstream_sources').select(['name', 'types']).where('name', 'in', names).execute();
    for (const name of names) {
      if (name === EMBEDDED) continue;
      const source = sources.find((s) => s.name === name);
      if (!source) throw notFound(new UpstreamConfigError(`no upstream named "${name}"`));
      if (!source.types.includes(type)) throw new UpstreamConfigError(`upstream "${name}" does not serve ${type}; it serves ${source.types.join(', ')}`);
    }
    await trx
      .insertInto('upstream_orders')
      .values({ type, sources: names })
      .onConflict((oc) => oc.column('type').doUpdateSet({ sources: names, updated_at: new Date() }))
      .execute();
    await bumpVersion(trx);
    return names;
  });
}

/** Sets how long upstream records of a type are cached; 0 turns the cache off and forgets what it held. */
export async function setCacheTtl(db: Kysely<DB>, typeName: string, seconds: number): Promise<void> {
  const type = parseType(typeName);
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 31 * 24 * 3600) throw new UpstreamConfigError('SECONDS must be a whole number from 0 (off) to 2678400 (31 days)');
  await db.transaction().execute(async (trx) => {
    if (seconds === 0) {
      await trx.deleteFrom('upstream_cache_ttls').where('type', '=', type).execute();
      await trx.deleteFrom('upstream_cache').where('type', '=', type).execute();
    } else {
      await trx.insertInto('upstream_cache_ttls').values({ type, seconds }).onConflict((oc) => oc.column('type').doUpdateSet({ seconds })).execute();
    }
    await bumpVersion(trx);
  });
}

export interface StoredConfiguration {
  version: string;
  sources: (SourceView & { secretEncrypted: string })[];
  orders: Map<UpstreamType, string[]>;
  ttls: Map<UpstreamType, number>;
}

export async function configVersion(db: Kysely<DB>): Promise<string> {
  const row = await db.selectFrom('settings').select('value').where('name', '=', 'upstream_config_version').executeTakeFirst();
  return row?.value ?? '0';
}

/** Reads the whole configuration at one version (a transaction, so no half-applied change is seen). */
export async function loadConfiguration(db: Kysely<DB>): Promise<StoredConfiguration> {
  return db.transaction().execute(async (trx) => {
    const version = await configVersion(trx);
    const rows = await trx.selectFrom('upstream_sources').selectAll().orderBy('created_at').orderBy('name').execute();
    const orders = await trx.selectFrom('upstream_orders').select(['type', 'sources']).execute();
    const ttls = await trx.selectFrom('upstream_cache_ttls').select(['type', 'seconds']).execute();
    return {
      version,
      sources: rows.map((row) => ({
        name: row.name,
        kind: row.kind,
        url: row.url,
        types: row.types as UpstreamType[],
        timeoutMs: row.timeout_ms,
        secretEncrypted: row.secret_encrypted,
      })),
      orders: new Map(orders.map((row) => [row.type as UpstreamType, row.sources])),
      ttls: new Map(ttls.map((row) => [row.type as UpstreamType, row.seconds])),
    };
  });
}
