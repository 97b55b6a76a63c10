import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { Scope } from '../platform/pagination.js';
import type { FileStore } from './store.js';

export type ImageType = 'image/jpeg' | 'image/png' | 'image/webp';

/** The most a single photo may weigh; phone cameras produce 2–5 MB JPEGs. */
export const MAX_PHOTO_BYTES = 8 * 1024 * 1024;
export const MAX_PHOTOS = 10;

/** The image type from the file's first bytes (what the uploader claims is not trusted). */
export function sniffImage(bytes: Buffer): ImageType | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

export interface StoredFile {
  id: string;
  contentType: ImageType;
  size: number;
  sha256: string;
}

/** Writes the bytes to the store under a new id; `recordFiles` then records them in the caller's transaction. */
export async function putFile(store: FileStore, bytes: Buffer, contentType: ImageType): Promise<StoredFile> {
  const id = randomUUID();
  await store.put(id, bytes, contentType);
  return { id, contentType, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Records stored files as the organization's, in the transaction that attaches them to a record. */
export async function recordFiles(db: Kysely<DB>, scope: Scope, files: readonly StoredFile[]): Promise<void> {
  if (files.length === 0) return;
  await db
    .insertInto('uploaded_files')
    .values(files.map((file) => ({ id: file.id, org_id: scope.orgId, mode: scope.mode, content_type: file.contentType, size: file.size, sha256: file.sha256 })))
    .execute();
}

/**
 * The content type of a stored file, by id. Only the file route calls this, after checking the
 * URL's signature: the signed URL is the capability, so there is no organization scope to check here.
 */
export async function findStoredFile(db: Kysely<DB>, id: string): Promise<{ contentType: string } | undefined> {
  const row = await db.selectFrom('uploaded_files').select(['content_type']).where('id', '=', id).executeTakeFirst();
  return row ? { contentType: row.content_type } : undefined;
}
