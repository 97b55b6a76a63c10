import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import { checkOutboundUrl, guardedLookup, OutboundUrlError } from '../../platform/outbound.js';

/** A download that did not give a whole file: nothing is imported, the source records why. */
export class DownloadError extends Error {
  override name = 'DownloadError';
}

export interface DownloadOptions {
  etag?: string | null;
  lastModified?: string | null;
  timeoutMs: number;
  maxBytes: number;
  /** config.allowPrivateUrls: tests serve lists from 127.0.0.1. */
  allowPrivate: boolean;
}

export type Download = { status: 'not_modified' } | { status: 'ok'; body: Buffer; etag: string | null; lastModified: string | null };

const MAX_REDIRECTS = 5;

/**
 * GET of a list file: conditional when an ETag or Last-Modified is known (304: not modified),
 * gzip accepted, redirects followed (OFAC's export URLs answer 302), private addresses refused at
 * connect time unless allowed. Whole or nothing: a body cut short (fewer bytes than announced, or a
 * connection closed before the end), an answer past the deadline, or one over the size cap is a
 * DownloadError. The deadline covers the whole transfer, redirects included.
 */
export async function download(url: string, options: DownloadOptions): Promise<Download> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  let target = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const answer = await requestOnce(target, options, deadline);
    if (answer.kind === 'redirect') {
      target = new URL(answer.location, target).toString();
      continue;
    }
    return answer.download;
  }
  throw new DownloadError(`more than ${MAX_REDIRECTS} redirects`);
}

type Answer = { kind: 'redirect'; location: string } | { kind: 'done'; download: Download };

async function requestOnce(url: string, options: DownloadOptions, deadline: AbortSignal): Promise<Answer> {
  let target: URL;
  try {
    // An address literal never reaches the agent's lookup: it is judged here (and a name again at connect time).
    target = await checkOutboundUrl(url, options.allowPrivate);
  } catch (err) {
    if (err instanceof OutboundUrlError) throw new DownloadError(`the URL ${err.message}${err.privateAddress ? ' (VOUCH_ALLOW_PRIVATE_URLS)' : ''}`);
    throw err;
  }
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'accept-encoding': 'gzip', 'user-agent': 'Vouch list sync' };
    if (options.etag) headers['if-none-match'] = options.etag;
    if (options.lastModified) headers['if-modified-since'] = options.lastModified;
    const client = target.protocol === 'https:' ? https : http;
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', onAbort);
      request.destroy();
      reject(new DownloadError(message));
    };
    const succeed = (answer: Answer) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', onAbort);
      resolve(answer);
    };
    const onAbort = () => fail(`no complete answer within ${options.timeoutMs < 1000 ? `${options.timeoutMs} ms` : `${Math.round(options.timeoutMs / 1000)} s`}`);
    const request = client.request(target, { method: 'GET', headers, lookup: guardedLookup(options.allowPrivate) }, (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && status !== 304) {
        response.resume();
        const location = response.headers.location;
        if (!location) return fail(`HTTP ${status} without a Location`);
        return succeed({ kind: 'redirect', location });
      }
      if (status === 304) {
        response.resume();
        return succeed({ kind: 'done', download: { status: 'not_modified' } });
      }
      if (status !== 200) {
        response.resume();
        return fail(`HTTP ${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`);
      }
      const declared = response.headers['content-length'] === undefined ? undefined : Number(response.headers['content-length']);
      if (declared !== undefined && declared > options.maxBytes) {
        response.resume();
        return fail(`the file is ${declared} bytes, over the ${options.maxBytes}-byte limit`);
      }
      const gzip = /gzip/i.test(String(response.headers['content-encoding'] ?? ''));
      const chunks: Buffer[] = [];
      let wire = 0;
      let size = 0;
      const body = gzip ? response.pipe(zlib.createGunzip()) : response;
      response.on('data', (chunk: Buffer) => (wire += chunk.length));
      body.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) return fail(`the file is over the ${options.maxBytes}-byte limit`);
        chunks.push(chunk);
      });
      body.on('error', (err: Error) => fail(gzip ? `the gzip body is not valid: ${err.message}` : `the connection failed during the transfer: ${err.message}`));
      response.on('aborted', () => fail('the connection closed before the whole file arrived'));
      response.on('error', () => fail('the connection closed before the whole file arrived'));
      body.on('end', () => {
        if (!response.complete) return fail('the connection closed before the whole file arrived');
        if (declared !== undefined && wire !== declared) return fail(`the file was cut short: ${wire} of ${declared} bytes arrived`);
        const header = (name: string) => {
          const value = response.headers[name];
          return typeof value === 'string' ? value : null;
        };
        succeed({ kind: 'done', download: { status: 'ok', body: Buffer.concat(chunks), etag: header('etag'), lastModified: header('last-modified') } });
      });
    });
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPRIVATE') return fail('the host resolves to a private address, which is not allowed (VOUCH_ALLOW_PRIVATE_URLS)');
      fail(`connection failed: ${err.code ?? err.message}`);
    });
    if (deadline.aborted) return onAbort();
    deadline.addEventListener('abort', onAbort);
    request.end();
  });
}
