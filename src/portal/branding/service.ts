import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Sharp } from 'sharp';
import { sniffImage } from '../../files/service.js';
import type { FileStore } from '../../files/store.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { nameProblem } from '../../platform/input.js';
import { loadSharp } from '../../platform/sharp.js';
import { Problems } from '../../respondents/fields.js';
import { embeddableOrigin } from '../../sessions/hosted/embedding.js';
import { MAX_REDIRECT_URL } from '../../sessions/input.js';
import { audit, type Actor } from '../audit.js';
import { MIN_CONTRAST, normaliseColour, textOn } from './colour.js';

/**
 * An organization's branding of the hosted verification flow and its session defaults
 * (docs/sessions.md "Branding"): the name the person sees, a logo, a brand colour, the redirect a
 * session gets when created without one, and the origins allowed to embed the flow with the web
 * SDK. One row per organization (organization_branding), absent until first saved; every change
 * is audited in its transaction.
 */

export const MAX_DISPLAY_NAME = 80;
export const MAX_ALLOWED_ORIGINS = 20;
/** The most an uploaded logo may weigh before re-encoding. */
export const MAX_LOGO_BYTES = 2 * 1024 * 1024;
/** Logos are re-encoded to fit this box (the page shows them at 40 px; 512 leaves room for sharp screens). */
export const LOGO_MAX_SIDE = 512;
export const LOGO_MIN_SIDE = 16;
/** Decoding more pixels than this is refused before any work (a small file can claim a huge image). */
const LOGO_MAX_INPUT_PIXELS = 25_000_000;
/** A re-encoded PNG above this is sent as WebP instead (photographic logos). */
const PNG_BUDGET = 256 * 1024;

/** The path of a logo on this server: the file's random id only, nothing about its organization. */
export function logoPath(fileId: string): string {
  return `/verify/logos/${fileId}`;
}

export interface Branding {
  /** The name the flow shows: the organization's own unless set. */
  displayName: string;
  /** Whether displayName was set (false: it is the organization's name). */
  displayNameSet: boolean;
  organizationName: string;
  colour: string | null;
  /** The text colour the flow's buttons use on `colour`, and its contrast ratio. */
  textColour: string | null;
  contrast: number | null;
  logo: { url: string; contentType: string; size: number; width: number; height: number } | null;
  defaultRedirectUrl: string | null;
  allowedOrigins: string[];
  updatedAt: string | null;
}

export interface BrandingInput {
  displayName?: string | null | undefined;
  colour?: string | null | undefined;
  defaultRedirectUrl?: string | null | undefined;
  allowedOrigins?: string[] | undefined;
}

type Db = Kysely<DB> | Transaction<DB>;

export async function getBranding(db: Db, publicUrl: string, orgId: string): Promise<Branding> {
  const org = await db.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirstOrThrow();
  const row = await db.selectFrom('organization_branding').selectAll().where('org_id', '=', orgId).executeTakeFirst();
  const colour = row?.colour ?? null;
  const onColour = colour ? textOn(colour) : null;
  return {
    displayName: row?.display_name ?? org.name,
    displayNameSet: row?.display_name != null,
    organizationName: org.name,
    colour,
    textColour: onColour?.text ?? null,
    contrast: onColour?.contrast ?? null,
    logo:
      row?.logo_file_id && row.logo_content_type
        ? { url: `${publicUrl}${logoPath(row.logo_file_id)}`, contentType: row.logo_content_type, size: row.logo_size ?? 0, width: row.logo_width ?? 0, height: row.logo_height ?? 0 }
        : null,
    defaultRedirectUrl: row?.default_redirect_url ?? null,
    allowedOrigins: row?.allowed_origins ?? [],
    updatedAt: row?.updated_at ? new Date(row.updated_at).toISOString() : null,
  };
}

/** A blank or null value clears a setting; undefined leaves it as it is. */
function cleared(value: string | null | undefined): boolean {
  return value === null || (typeof value === 'string' && value.trim() === '');
}

function checkDisplayName(value: string, problems: Problems): string | undefined {
  // Runs of white space are one space. Not `\s` or trim(), which take U+FEFF too: a BOM is refused, not made a space.
  const name = value.replace(/\p{White_Space}+/gu, ' ').replace(/^ | $/g, '');
  const problem = name.length > MAX_DISPLAY_NAME ? `displayName must be at most ${MAX_DISPLAY_NAME} characters` : nameProblem(name, 'displayName');
  if (problem) problems.add(problem);
  else return name;
  return undefined;
}

function checkColour(value: string, problems: Problems): string | undefined {
  const colour = normaliseColour(value);
  if (!colour) {
    problems.add('colour must be a hex colour like #0b6e4f');
    return undefined;
  }
  const { contrast } = textOn(colour);
  if (contrast < MIN_CONTRAST) {
    problems.add(`colour ${colour} is too close to mid-grey: neither white nor dark text on it reaches ${MIN_CONTRAST}:1 contrast (best ${contrast}:1), so buttons would be hard to read; choose a darker or lighter shade`);
    return undefined;
  }
  return colour;
}

/** An https URL without credentials: where a session without its own redirectUrl sends the person. */
function checkRedirect(value: string, problems: Problems): string | undefined {
  const raw = value.trim();
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || url.protocol !== 'https:' || url.username || url.password || raw.length > MAX_REDIRECT_URL) {
    problems.add(`defaultRedirectUrl must be an absolute https URL without credentials, at most ${MAX_REDIRECT_URL} characters`);
    return undefined;
  }
  return url.toString();
}

/**
 * Exact origins as browsers write them: `https://host[:port]`, no path and no trailing slash (or
 * http://localhost and 127.0.0.1 for development, as the SDK's own rule); no wildcards.
 */
function checkOrigins(values: string[], problems: Problems): string[] | undefined {
  if (values.length > MAX_ALLOWED_ORIGINS) {
    problems.add(`allowedOrigins may hold at most ${MAX_ALLOWED_ORIGINS} origins`);
    return undefined;
  }
  const out: string[] = [];
  const bad: string[] = [];
  for (const value of values) {
    const trimmed = value.trim();
    if (trimmed === '') continue;
    // Scheme and host are case-insensitive; browsers send them in lower case.
    const origin = embeddableOrigin(trimmed.toLowerCase());
    if (!origin) bad.push(trimmed.slice(0, 100));
    else if (!out.includes(origin)) out.push(origin);
  }
  if (bad.length > 0) {
    problems.add(`allowedOrigins must be exact origins like https://shop.example.com (https, no path, no trailing slash, no wildcard): ${bad.map((b) => JSON.stringify(b)).join(', ')} ${bad.length === 1 ? 'is' : 'are'} not`);
    return undefined;
  }
  return out;
}

/**
 * Saves the settings present in `input` (a field left out keeps its value; null or blank clears
 * it) in one transaction with its audit row (before and after of what changed). Every problem is
 * named in one 400.
 */
export async function saveBranding(db: Kysely<DB>, orgId: string, input: BrandingInput, actor: Actor): Promise<void> {
  const problems = new Problems();
  const patch: { display_name?: string | null; colour?: string | null; default_redirect_url?: string | null; allowed_origins?: string[] } = {};
  if (input.displayName !== undefined) patch.display_name = cleared(input.displayName) ? null : (checkDisplayName(input.displayName!, problems) ?? null);
  if (input.colour !== undefined) patch.colour = cleared(input.colour) ? null : (checkColour(input.colour!, problems) ?? null);
  if (input.defaultRedirectUrl !== undefined) patch.default_redirect_url = cleared(input.defaultRedirectUrl) ? null : (checkRedirect(input.defaultRedirectUrl!, problems) ?? null);
  if (input.allowedOrigins !== undefined) patch.allowed_origins = checkOrigins(input.allowedOrigins, problems) ?? [];
  problems.throwIfAny();
  await db.transaction().execute(async (trx) => {
    const before = await lockBranding(trx, orgId);
    const changed: Record<string, [unknown, unknown]> = {};
    const values = { display_name: before.display_name, colour: before.colour, default_redirect_url: before.default_redirect_url, allowed_origins: before.allowed_origins };
    for (const [column, value] of Object.entries(patch) as [keyof typeof values, never][]) {
      if (JSON.stringify(values[column]) !== JSON.stringify(value)) changed[AUDIT_NAMES[column]] = [values[column], value];
    }
    if (Object.keys(changed).length === 0) return;
    await trx
      .updateTable('organization_branding')
      .set({ ...patch, updated_at: new Date() })
      .where('org_id', '=', orgId)
      .execute();
    await audit(trx, {
      orgId,
      actor,
      action: 'branding.updated',
      target: 'verification flow',
      before: Object.fromEntries(Object.entries(changed).map(([name, [was]]) => [name, was])),
      after: Object.fromEntries(Object.entries(changed).map(([name, [, now]]) => [name, now])),
    });
  });
}

const AUDIT_NAMES = { display_name: 'displayName', colour: 'colour', default_redirect_url: 'defaultRedirectUrl', allowed_origins: 'allowedOrigins' } as const;

/** The organization's branding row, made empty when it has none, locked until the transaction ends. */
async function lockBranding(trx: Transaction<DB>, orgId: string) {
  await trx.insertInto('organization_branding').values({ org_id: orgId }).onConflict((oc) => oc.column('org_id').doNothing()).execute();
  return trx.selectFrom('organization_branding').selectAll().where('org_id', '=', orgId).forUpdate().executeTakeFirstOrThrow();
}

export interface ReencodedLogo {
  bytes: Buffer;
  contentType: 'image/png' | 'image/webp';
  width: number;
  height: number;
}

/**
 * A PNG, JPEG or WebP logo re-encoded from its pixels: at most LOGO_MAX_SIDE on each side, the
 * first frame of an animation, no metadata (EXIF, GPS, comments) carried over. Anything else,
 * SVG above all (it can carry scripts), is refused before decoding.
 */
export async function reencodeLogo(bytes: Buffer): Promise<ReencodedLogo> {
  if (bytes.length === 0) throw new ApiError('VALIDATION_ERROR', 'image is empty: choose a PNG, JPEG or WebP file');
  if (bytes.length > MAX_LOGO_BYTES) throw new ApiError('VALIDATION_ERROR', `image must be at most ${MAX_LOGO_BYTES / 1024 / 1024} MB`);
  const type = sniffImage(bytes);
  if (!type) {
    const text = bytes.subarray(0, 512).toString('utf8').trimStart().toLowerCase();
    const svg = text.startsWith('<svg') || (text.startsWith('<?xml') && text.includes('<svg')) || text.includes('<svg');
    throw new ApiError('VALIDATION_ERROR', svg ? 'image must be a PNG, JPEG or WebP file: SVG is refused because it can carry scripts; export the logo as PNG' : 'image must be a PNG, JPEG or WebP file');
  }
  const sharp = await loadSharp();
  let pipeline: Sharp;
  let width: number;
  let height: number;
  try {
    pipeline = sharp(bytes, { limitInputPixels: LOGO_MAX_INPUT_PIXELS, failOn: 'error' });
    const meta = await pipeline.metadata();
    width = meta.autoOrient?.width ?? meta.width ?? 0;
    height = meta.autoOrient?.height ?? meta.height ?? 0;
  } catch {
    throw new ApiError('VALIDATION_ERROR', `image could not be read as a ${type.slice(6).toUpperCase()} (damaged, or larger than ${LOGO_MAX_INPUT_PIXELS / 1_000_000} megapixels)`);
  }
  if (width < LOGO_MIN_SIDE || height < LOGO_MIN_SIDE) throw new ApiError('VALIDATION_ERROR', `image must be at least ${LOGO_MIN_SIDE}×${LOGO_MIN_SIDE} pixels`);
  try {
    const resized = pipeline.rotate().resize(LOGO_MAX_SIDE, LOGO_MAX_SIDE, { fit: 'inside', withoutEnlargement: true });
    const png = await resized.clone().png({ compressionLevel: 9 }).toBuffer({ resolveWithObject: true });
    if (png.data.length <= PNG_BUDGET) return { bytes: png.data, contentType: 'image/png', width: png.info.width, height: png.info.height };
    const webp = await resized.clone().webp({ quality: 85 }).toBuffer({ resolveWithObject: true });
    return { bytes: webp.data, contentType: 'image/webp', width: webp.info.width, height: webp.info.height };
  } catch {
    throw new ApiError('VALIDATION_ERROR', `image could not be read as a ${type.slice(6).toUpperCase()} (damaged, or larger than ${LOGO_MAX_INPUT_PIXELS / 1_000_000} megapixels)`);
  }
}

/**
 * Stores a re-encoded logo and makes it the organization's, in one transaction with its audit row;
 * the logo it replaces is deleted from the store once that has committed.
 */
export async function setLogo(db: Kysely<DB>, store: FileStore, orgId: string, upload: Buffer, actor: Actor): Promise<void> {
  const logo = await reencodeLogo(upload);
  const fileId = randomUUID();
  await store.put(fileId, logo.bytes, logo.contentType);
  let replaced: string | null = null;
  try {
    await db.transaction().execute(async (trx) => {
      const before = await lockBranding(trx, orgId);
      replaced = before.logo_file_id;
      await trx
        .updateTable('organization_branding')
        .set({ logo_file_id: fileId, logo_content_type: logo.contentType, logo_size: logo.bytes.length, logo_width: logo.width, logo_height: logo.height, updated_at: new Date() })
        .where('org_id', '=', orgId)
        .execute();
      await audit(trx, {
        orgId,
        actor,
        action: 'branding.logo_set',
        target: 'verification flow',
        before: { logo: before.logo_file_id ? { width: before.logo_width, height: before.logo_height, size: before.logo_size } : null },
        after: { logo: { width: logo.width, height: logo.height, size: logo.bytes.length, contentType: logo.contentType } },
      });
    });
  } catch (err) {
    await store.delete(fileId);
    throw err;
  }
  if (replaced) await store.delete(replaced);
}

/** Removes the organization's logo (the flow shows its name alone); false when it had none. */
export async function removeLogo(db: Kysely<DB>, store: FileStore, orgId: string, actor: Actor): Promise<boolean> {
  const removed = await db.transaction().execute(async (trx) => {
    const before = await lockBranding(trx, orgId);
    if (!before.logo_file_id) return null;
    await trx
      .updateTable('organization_branding')
      .set({ logo_file_id: null, logo_content_type: null, logo_size: null, logo_width: null, logo_height: null, updated_at: new Date() })
      .where('org_id', '=', orgId)
      .execute();
    await audit(trx, { orgId, actor, action: 'branding.logo_removed', target: 'verification flow', before: { logo: { width: before.logo_width, height: before.logo_height, size: before.logo_size } }, after: { logo: null } });
    return before.logo_file_id;
  });
  if (removed) await store.delete(removed);
  return removed !== null;
}

/** A logo's bytes and type by its file id, when it is some organization's current logo. */
export async function findLogo(db: Kysely<DB>, store: FileStore, fileId: string): Promise<{ bytes: Buffer; contentType: string } | undefined> {
  const row = await db.selectFrom('organization_branding').select('logo_content_type').where('logo_file_id', '=', fileId).executeTakeFirst();
  if (!row?.logo_content_type) return undefined;
  const bytes = await store.get(fileId);
  return bytes ? { bytes, contentType: row.logo_content_type } : undefined;
}
