import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';

/**
 * Signed, expiring URLs for uploaded files: `/v1/files/<id>?expires=<unix seconds>&signature=<hex>`
 * where the signature is HMAC-SHA256 over "<id>.<expires>" with a key generated once per
 * installation and kept in `settings`, so every API process signs and checks alike.
 */

const SETTING = 'file_url_signing_key';
/** How long a URL stays valid at least: a day. */
export const FILE_URL_TTL_SECONDS = 24 * 60 * 60;
// Expiry is rounded up to the hour, so a record fetched twice in an hour shows the same URLs
// (browsers and CDNs can cache the photos).
const ROUND_SECONDS = 60 * 60;

const URL_CACHE_SIZE = 10_000;

export type UrlCheck = 'ok' | 'expired' | 'invalid';

export interface FileUrls {
  /** An absolute URL for the file, valid for at least FILE_URL_TTL_SECONDS (or this view's lifetime). */
  url(id: string): string;
  check(id: string, expires: string | undefined, signature: string | undefined): UrlCheck;
  /** The same signer, handing out URLs valid for at least `ttlSeconds` (webhook bodies outlive a day). */
  lasting(ttlSeconds: number): FileUrls;
}

/** The installation's signing key, created on first use (concurrent first uses agree on one). */
export async function loadSigningKey(db: Kysely<DB>): Promise<Buffer> {
  await db
    .insertInto('settings')
    .values({ name: SETTING, value: randomBytes(32).toString('base64') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('name', '=', SETTING).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}

export function signFileUrl(key: Buffer, id: string, expires: number): string {
  return createHmac('sha256', key).update(`${id}.${expires}`).digest('hex');
}

export interface FileUrlOptions {
  ttlSeconds?: number;
  now?: () => Date;
}

/** The expiry of a URL signed at `nowMs` to last at least `ttlSeconds`: rounded up to the hour. */
function expiryFor(nowMs: number, ttlSeconds: number): number {
  return Math.ceil((Math.floor(nowMs / 1000) + ttlSeconds) / ROUND_SECONDS) * ROUND_SECONDS;
}

export function fileUrls(key: Buffer, publicUrl: string, options: FileUrlOptions = {}): FileUrls {
  const ttl = options.ttlSeconds ?? FILE_URL_TTL_SECONDS;
  const now = options.now ?? (() => new Date());
  const base = publicUrl.replace(/\/+$/, '');
  // Lists render the same photos again and again within an expiry window: keep recent URLs.
  const recent = new Map<string, string>();
  const views = new Map<number, FileUrls>();
  const self: FileUrls = {
    url(id) {
      const expires = expiryFor(now().getTime(), ttl);
      const cacheKey = `${id}.${expires}`;
      const cached = recent.get(cacheKey);
      if (cached) return cached;
      const url = `${base}/v1/files/${id}?expires=${expires}&signature=${signFileUrl(key, id, expires)}`;
      if (recent.size >= URL_CACHE_SIZE) recent.delete(recent.keys().next().value!);
      recent.set(cacheKey, url);
      return url;
    },
    check(id, expires, signature) {
      if (!expires || !/^\d{1,12}$/.test(expires) || !signature || !/^[0-9a-f]{64}$/.test(signature)) return 'invalid';
      const expected = Buffer.from(signFileUrl(key, id, Number(expires)), 'hex');
      if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
      return Number(expires) * 1000 <= now().getTime() ? 'expired' : 'ok';
    },
    lasting(ttlSeconds) {
      if (ttlSeconds === ttl) return self;
      let view = views.get(ttlSeconds);
      if (!view) views.set(ttlSeconds, (view = fileUrls(key, publicUrl, { ...options, ttlSeconds })));
      return view;
    },
  };
  return self;
}
