import { createHash } from 'node:crypto';
import { AwsClient } from 'aws4fetch';
import type { S3Config } from '../config.js';
import { ApiError } from '../platform/errors.js';
import { isFileId, type DirectUrl, type FileStore } from './store.js';

/**
 * A FileStore on any S3-compatible object store (AWS S3, MinIO, Cloudflare R2, Ceph, ...): PUT,
 * GET and DELETE of `<endpoint>/<bucket>/files/<id>` (path-style, which every S3-compatible
 * server accepts), and presigned GET URLs for browsers. aws4fetch signs (AWS Signature Version 4).
 */

/** How long a presigned photo URL is valid, counted from its signing time. */
export const PRESIGNED_URL_TTL_SECONDS = 15 * 60;
// Signing times are rounded down to 5 minutes: a photo opened again within the window gets the
// same URL (the browser's cache works), and a URL handed out has at least 10 minutes left.
const PRESIGN_WINDOW_SECONDS = 5 * 60;
/** A request the store answers 5xx or 429 to is signed and sent again this many times. */
const RETRIES = 2;

/** `20130524T000000Z`: the x-amz-date form. */
export function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/**
 * The object store refused or could not be reached. Callers see a 503 with a message that
 * reveals nothing; `detail` (method, file id, status, the store's error code and message and
 * what to check) is for the operator.
 */
export class S3StoreError extends ApiError {
  constructor(readonly detail: string) {
    super('SERVICE_UNAVAILABLE', 'The photo store is not available right now; try again shortly');
    this.name = 'S3StoreError';
    // The log keeps an error's message and stack only: the stack's first line carries the detail.
    const frames = this.stack?.indexOf('\n') ?? -1;
    this.stack = `${this.name}: ${detail}${frames >= 0 ? this.stack!.slice(frames) : ''}`;
  }
}

// What an operator should check when the store answers with these codes.
const HINTS: Record<string, string> = {
  InvalidAccessKeyId: 'check S3_ACCESS_KEY_ID',
  SignatureDoesNotMatch: 'check S3_SECRET_ACCESS_KEY and S3_REGION',
  AuthorizationHeaderMalformed: 'check S3_REGION',
  AccessDenied: 'check the access key may read and write the bucket',
  NoSuchBucket: 'check S3_BUCKET',
  RequestTimeTooSkewed: "check this machine's clock",
};

/** The `<Code>` and `<Message>` of an S3 error body (no other part of it: it may echo the key id). */
function s3Error(body: string): { code?: string; message?: string } {
  return {
    code: /<Code>([A-Za-z0-9.]{1,100})<\/Code>/.exec(body)?.[1],
    message: /<Message>([^<]{1,300})<\/Message>/.exec(body)?.[1],
  };
}

export interface S3StoreOptions {
  /** The clock that dates signatures (tests fix it). */
  now?: () => Date;
  timeoutMs?: number;
}

export class S3FileStore implements FileStore {
  private readonly client: AwsClient;
  private readonly prefix: string;
  private readonly now: () => Date;

  constructor(
    config: S3Config,
    private readonly options: S3StoreOptions = {},
  ) {
    this.client = new AwsClient({
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      region: config.region,
      service: 's3',
      retries: RETRIES,
    });
    this.prefix = `${config.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(config.bucket)}/files/`;
    this.now = options.now ?? (() => new Date());
  }

  private objectUrl(id: string): string {
    if (!isFileId(id)) throw new RangeError(`not a file id: ${id}`);
    return this.prefix + id;
  }

  private async send(method: 'PUT' | 'GET' | 'DELETE', id: string, body?: Buffer, headers: Record<string, string> = {}): Promise<Response> {
    const url = this.objectUrl(id);
    try {
      return await this.client.fetch(url, {
        method,
        // The payload's hash is signed, so the store refuses bytes altered on the way.
        headers: { ...headers, 'x-amz-content-sha256': sha256(body ?? '') },
        body: body ? new Uint8Array(body) : undefined,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        aws: { datetime: amzDate(this.now()) },
      });
    } catch (err) {
      const cause = err as Error;
      throw new S3StoreError(`object store ${method} ${id} failed: ${cause.name === 'TimeoutError' ? 'timed out' : cause.message}`);
    }
  }

  /** The error for a refused request; `error` when the body was already read. */
  private static async failure(method: string, id: string, response: Response, read?: { code?: string; message?: string }): Promise<S3StoreError> {
    const error = read ?? s3Error(await response.text().catch(() => ''));
    const hint = error.code ? HINTS[error.code] : undefined;
    const parts = [`object store ${method} ${id} answered ${response.status}`, error.code, error.message].filter(Boolean).join(' ');
    return new S3StoreError(hint ? `${parts} (${hint})` : parts);
  }

  async put(id: string, bytes: Buffer, contentType: string): Promise<void> {
    // Objects never change under their id: browsers may keep one as long as its URL lives.
    const response = await this.send('PUT', id, bytes, { 'content-type': contentType, 'cache-control': `private, max-age=${PRESIGNED_URL_TTL_SECONDS}, immutable` });
    if (!response.ok) throw await S3FileStore.failure('PUT', id, response);
    await response.arrayBuffer();
  }

  async get(id: string): Promise<Buffer | undefined> {
    const response = await this.send('GET', id);
    if (response.status === 404) {
      const error = s3Error(await response.text());
      // A missing object is the store's "no such file"; a missing bucket is a misconfiguration.
      if (error.code === undefined || error.code === 'NoSuchKey') return undefined;
      throw await S3FileStore.failure('GET', id, response, error);
    }
    if (!response.ok) throw await S3FileStore.failure('GET', id, response);
    return Buffer.from(await response.arrayBuffer());
  }

  async delete(id: string): Promise<void> {
    const response = await this.send('DELETE', id);
    // S3 answers 204 whether or not the object existed; some compatible stores answer 404 NoSuchKey.
    if (!response.ok) {
      const error = s3Error(await response.text());
      if (response.status !== 404 || (error.code !== undefined && error.code !== 'NoSuchKey')) throw await S3FileStore.failure('DELETE', id, response, error);
      return;
    }
    await response.arrayBuffer();
  }

  /** A presigned GET URL (Signature Version 4 in the query string), valid PRESIGNED_URL_TTL_SECONDS from its signing time. */
  async directUrl(id: string): Promise<DirectUrl> {
    const nowSeconds = Math.floor(this.now().getTime() / 1000);
    const signedAt = new Date(Math.floor(nowSeconds / PRESIGN_WINDOW_SECONDS) * PRESIGN_WINDOW_SECONDS * 1000);
    const url = new URL(this.objectUrl(id));
    url.searchParams.set('X-Amz-Expires', String(PRESIGNED_URL_TTL_SECONDS));
    const signed = await this.client.sign(url, { method: 'GET', aws: { signQuery: true, datetime: amzDate(signedAt) } });
    return { url: signed.url, expiresAt: new Date(signedAt.getTime() + PRESIGNED_URL_TTL_SECONDS * 1000) };
  }
}
