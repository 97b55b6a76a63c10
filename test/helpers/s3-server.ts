import fs from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { S3Config } from '../../src/config.js';

/** The part of s3rver (which ships no types) these tests use. */
interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  store: {
    getObject(bucket: string, key: string): Promise<{ metadata: Record<string, string>; content: Readable } | null>;
  };
}
type S3rverClass = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  vhostBuckets: boolean;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;

/**
 * The one key pair s3rver knows. s3rver checks the access key id, the form of the Authorization
 * header and of presigned query strings, the request date (15 minutes' skew at most) and a
 * presigned URL's expiry; it does not recompute Signature Version 4 signatures (its source says
 * so), so a wrong secret goes unnoticed here: the AWS test vectors in the S3 store's tests cover
 * the signature itself.
 */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export interface S3TestServer {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  bucket: string;
  /** The store configuration that reaches this server's bucket (override any field). */
  config(overrides?: Partial<S3Config>): S3Config;
  /** An object as the server holds it (read from its own storage, not over S3), or undefined. */
  object(key: string): Promise<{ body: Buffer; contentType: string | undefined; cacheControl: string | undefined } | undefined>;
  close(): Promise<void>;
}

/** A real S3-compatible server (s3rver) on a free loopback port, with one empty bucket, files in a temporary folder. */
export async function startS3Server(bucket = 'vouch-photos'): Promise<S3TestServer> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, vhostBuckets: false, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    config: (overrides = {}) => ({ endpoint, bucket, region: 'us-east-1', ...S3RVER_CREDENTIALS, ...overrides }),
    async object(key) {
      const found = await server.store.getObject(bucket, key);
      if (!found) return undefined;
      const chunks: Buffer[] = [];
      for await (const chunk of found.content) chunks.push(chunk as Buffer);
      return { body: Buffer.concat(chunks), contentType: found.metadata['content-type'], cacheControl: found.metadata['cache-control'] };
    },
    async close() {
      // Keep-alive sockets from fetch would hold close() open.
      (server as unknown as { httpServer: Server }).httpServer.closeAllConnections();
      await server.close();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}
