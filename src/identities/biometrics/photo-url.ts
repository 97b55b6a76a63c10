import http from 'node:http';
import https from 'node:https';
import { checkOutboundUrl, guardedLookup, OutboundUrlError } from '../../platform/outbound.js';

export interface PhotoFetchOptions {
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export const PHOTO_FETCH_DEFAULTS: Omit<PhotoFetchOptions, 'allowPrivate'> = {
  maxBytes: 1024 * 1024,
  timeoutMs: 5_000,
  maxRedirects: 3,
};

/** Why a photo URL gave no image; the message completes "photoUrl ...". `tooLarge` answers 413. */
export class PhotoFetchError extends Error {
  override name = 'PhotoFetchError';
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

interface Hop {
  status: number;
  location?: string | undefined;
  body?: Buffer;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Downloads the image at a caller's URL: each hop's address is checked (and checked again at
 * connect time, against DNS rebinding), at most `maxRedirects` redirects, the whole exchange
 * within `timeoutMs`, and the body cut off as soon as it passes `maxBytes`.
 */
export async function fetchPhoto(raw: string, options: PhotoFetchOptions): Promise<Buffer> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let current = raw;
  for (let redirects = 0; ; redirects++) {
    let url: URL;
    try {
      url = await checkOutboundUrl(current, options.allowPrivate);
    } catch (error) {
      if (error instanceof OutboundUrlError) throw new PhotoFetchError(`${redirects > 0 ? 'redirects to a URL that ' : ''}${error.message}`);
      throw error;
    }
    const hop = await request(url, options, signal);
    if (hop.body) return hop.body;
    if (!REDIRECTS.has(hop.status) || !hop.location) {
      throw new PhotoFetchError(`could not be fetched: the server answered HTTP ${hop.status}`);
    }
    if (redirects >= options.maxRedirects) throw new PhotoFetchError(`redirected more than ${options.maxRedirects} times`);
    current = new URL(hop.location, url).toString();
  }
}

function request(url: URL, options: PhotoFetchOptions, signal: AbortSignal): Promise<Hop> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Hop>((resolve, reject) => {
    const fail = (error: unknown) => reject(describeFailure(error, options, signal));
    const req = client.get(
      url,
      { signal, lookup: guardedLookup(options.allowPrivate) as never, headers: { accept: 'image/jpeg, image/png, image/webp', 'user-agent': 'Vouch-Biometrics/1' } },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          res.resume();
          resolve({ status, location: res.headers.location });
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          res.destroy();
          reject(tooLarge(options));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            res.destroy();
            reject(tooLarge(options));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status, body: Buffer.concat(chunks) }));
        res.on('error', fail);
      },
    );
    req.on('error', fail);
  });
}

function tooLarge(options: PhotoFetchOptions): PhotoFetchError {
  return new PhotoFetchError(`points to an image larger than ${options.maxBytes / (1024 * 1024)} MB, the limit`, true);
}

function describeFailure(error: unknown, options: PhotoFetchOptions, signal: AbortSignal): PhotoFetchError {
  if (error instanceof PhotoFetchError) return error;
  if (signal.aborted) return new PhotoFetchError(`could not be fetched within ${options.timeoutMs / 1000} seconds`);
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EPRIVATE':
      return new PhotoFetchError('resolves to a loopback or private network address, which is not allowed');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new PhotoFetchError('could not be fetched: its host does not resolve');
    case 'ECONNREFUSED':
      return new PhotoFetchError('could not be fetched: the connection was refused');
    default:
      return new PhotoFetchError(`could not be fetched (${code ?? (error as Error).message})`);
  }
}
