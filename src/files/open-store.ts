import path from 'node:path';
import type { Config } from '../config.js';
import { S3FileStore } from './s3.js';
import { DiskFileStore, type FileStore } from './store.js';

/** The configured store: the S3-compatible bucket when S3_ENDPOINT is set, else files under `<dataDir>/files`. */
export function openFileStore(config: Pick<Config, 'dataDir' | 's3'>): FileStore {
  return config.s3 ? new S3FileStore(config.s3) : new DiskFileStore(path.join(config.dataDir, 'files'));
}
