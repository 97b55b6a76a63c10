import fs from 'node:fs/promises';
import path from 'node:path';

/** A URL a client may fetch a file's bytes from directly, until `expiresAt`. */
export interface DirectUrl {
  url: string;
  expiresAt: Date;
}

/**
 * Where uploaded bytes live. Ids are UUIDs chosen by Vouch, never by the uploader. The disk store
 * here; the S3-compatible one in `s3.ts`; `open-store.ts` picks one from the configuration.
 */
export interface FileStore {
  put(id: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes, or undefined when the store has no such file. */
  get(id: string): Promise<Buffer | undefined>;
  delete(id: string): Promise<void>;
  /**
   * A short-lived URL from which the client downloads the file without Vouch in the way (a
   * presigned S3 URL), or undefined when Vouch serves the bytes itself (the disk store).
   */
  directUrl(id: string): Promise<DirectUrl | undefined>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `id` has the shape of a file id (a lowercase UUID): anything else never names a file. */
export function isFileId(id: string): boolean {
  return UUID.test(id);
}

/** Files under `<dataDir>/files/<first two hex digits>/<id>`, written atomically (temp file + rename). */
export class DiskFileStore implements FileStore {
  constructor(private readonly root: string) {}

  private pathOf(id: string): string {
    if (!isFileId(id)) throw new RangeError(`not a file id: ${id}`);
    return path.join(this.root, id.slice(0, 2), id);
  }

  async put(id: string, bytes: Buffer): Promise<void> {
    const target = this.pathOf(id);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.${process.pid}.tmp`;
    await fs.writeFile(temp, bytes, { flag: 'wx' });
    await fs.rename(temp, target);
  }

  async get(id: string): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.pathOf(id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(id: string): Promise<void> {
    await fs.rm(this.pathOf(id), { force: true });
  }

  /** The disk is Vouch's own: the file route serves the bytes behind its signed URL. */
  async directUrl(): Promise<undefined> {
    return undefined;
  }
}
