import path from 'node:path';
import type { Config } from '../config.js';
import type { FieldProtection } from '../platform/crypto/fields.js';
import { EncryptedFileStore } from './encrypted-store.js';
import { S3FileStore } from './s3.js';
import { DiskFileStore, type FileStore } from './store.js';

/**
 * The configured store: the S3-compatible bucket when S3_ENDPOINT is set, else files under
 * `<dataDir>/files`; either way every file is encrypted under the database's data keys.
 */
export function openFileStore(config: Pick<Config, 'dataDir' | 's3'>, protection: FieldProtection): EncryptedFileStore {
  const inner: FileStore = config.s3 ? new S3FileStore(config.s3) : new DiskFileStore(path.join(config.dataDir, 'files'));
  return new EncryptedFileStore(inner, protection);
}
