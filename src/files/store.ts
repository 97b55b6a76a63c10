import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { S3FileStore } from './s3.js';

/** Where uploaded bytes live. Ids are UUIDs chosen by Vouch, never by the uploader. */
export interface FileStore {
  put(id: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes, or undefined when the store has no such file. */
  get(id: string): Promise<Buffer | undefined>;
  delete(id: string): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Files under `<dataDir>/files/<first two hex digits>/<id>`, written atomically (temp file + rename). */
export class DiskFileStore implements FileStore {
  constructor(private readonly root: string) {}

  private pathOf(id: string): string {
    if (!UUID.test(id)) throw new RangeError(`not a file id: ${id}`);
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
}

/** The configured store: the S3-compatible bucket when S3_ENDPOINT is set, else files under `<dataDir>/files`. */
export function openFileStore(config: Pick<Config, 'dataDir' | 's3'>): FileStore {
  return config.s3 ? new S3FileStore(config.s3) : new DiskFileStore(path.join(config.dataDir, 'files'));
}
