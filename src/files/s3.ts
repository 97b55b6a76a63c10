import { createHash, createHmac } from 'node:crypto';
import type { S3Config } from '../config.js';
import type { FileStore } from './store.js';

/**
 * A FileStore on any S3-compatible object store (AWS S3, MinIO, Cloudflare R2, Ceph, ...):
 * three requests, PUT, GET and DELETE of `<endpoint>/<bucket>/files/<id>` (path-style, which
 * every S3-compatible server accepts), signed with AWS Signature Version 4.
 */

export interface SignableRequest {
  method: string;
  /** The URI path, not yet encoded: `/bucket/files/<id>`. */
  path: string;
  /** Every header to sign, `host` included; names in any case. */
  headers: Record<string, string>;
  /** Hex SHA-256 of the body (also sent as x-amz-content-sha256). */
  payloadHash: string;
}

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  service?: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** `20130524T000000Z`: the x-amz-date form. */
export function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/** RFC 3986 encoding of each path segment, slashes kept (S3's canonical URI). */
function canonicalPath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

/** The Authorization header value for the request (Signature Version 4, no query string). */
export function signRequest(request: SignableRequest, credentials: Credentials, now: Date): string {
  const service = credentials.service ?? 's3';
  const stamp = amzDate(now);
  const day = stamp.slice(0, 8);
  const headers = Object.entries(request.headers)
    .map(([name, value]) => [name.toLowerCase(), value.trim().replace(/\s+/g, ' ')] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const signedHeaders = headers.map(([name]) => name).join(';');
  const canonicalRequest = [
    request.method,
    canonicalPath(request.path),
    '',
    ...headers.map(([name, value]) => `${name}:${value}`),
    '',
    signedHeaders,
    request.payloadHash,
  ].join('\n');
  const scope = `${day}/${credentials.region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), credentials.region), service), 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  return `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope},SignedHeaders=${signedHeaders},Signature=${signature}`;
}

export class S3StoreError extends Error {}

export class S3FileStore implements FileStore {
  private readonly base: URL;

  constructor(
    private readonly config: S3Config,
    private readonly options: { fetch?: typeof fetch; now?: () => Date; timeoutMs?: number } = {},
  ) {
    this.base = new URL(config.endpoint);
  }

  private async send(method: 'PUT' | 'GET' | 'DELETE', id: string, body?: Buffer, contentType?: string): Promise<Response> {
    const basePath = this.base.pathname.replace(/\/+$/, '');
    const path = `${basePath}/${this.config.bucket}/files/${id}`;
    const payloadHash = sha256(body ?? '');
    const now = (this.options.now ?? (() => new Date()))();
    const headers: Record<string, string> = {
      host: this.base.host,
      'x-amz-content-sha256': payloadHash,
      'x-amz-date': amzDate(now),
      ...(contentType ? { 'content-type': contentType } : {}),
    };
    const authorization = signRequest({ method, path, headers, payloadHash }, { ...this.config }, now);
    const { host: _host, ...sent } = headers;
    const url = new URL(canonicalPath(path), this.base);
    try {
      return await (this.options.fetch ?? fetch)(url, {
        method,
        headers: { ...sent, authorization },
        body: body ? new Uint8Array(body) : undefined,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new S3StoreError(`object store ${method} ${id} failed: ${(err as Error).message}`);
    }
  }

  private static async fail(method: string, id: string, response: Response): Promise<never> {
    const detail = (await response.text().catch(() => '')).slice(0, 200);
    throw new S3StoreError(`object store ${method} ${id} answered ${response.status}${detail ? `: ${detail}` : ''}`);
  }

  async put(id: string, bytes: Buffer, contentType: string): Promise<void> {
    const response = await this.send('PUT', id, bytes, contentType);
    if (!response.ok) await S3FileStore.fail('PUT', id, response);
    await response.arrayBuffer();
  }

  async get(id: string): Promise<Buffer | undefined> {
    const response = await this.send('GET', id);
    if (response.status === 404) {
      await response.arrayBuffer();
      return undefined;
    }
    if (!response.ok) await S3FileStore.fail('GET', id, response);
    return Buffer.from(await response.arrayBuffer());
  }

  async delete(id: string): Promise<void> {
    const response = await this.send('DELETE', id);
    if (!response.ok && response.status !== 404) await S3FileStore.fail('DELETE', id, response);
    await response.arrayBuffer();
  }
}
