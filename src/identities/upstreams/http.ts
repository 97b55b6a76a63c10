import http from 'node:http';
import https from 'node:https';
import { outboundTraceHeaders } from '../../platform/request-context.js';
import { UpstreamFailure } from './adapter.js';

/** At most this much of an upstream's body is read: a record with a photo is well below it. */
const MAX_BODY_BYTES = 5 * 1024 * 1024;

/**
 * Kept-alive connections to the providers, shared by every source. node:http rather than fetch:
 * under load fetch's streams and signals cost ~0.8 ms of CPU per lookup (a profile of the
 * `upstreams` benchmark), several times the rest of the lookup.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 }),
};

export interface UpstreamRequestInit {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** JSON text, or the bytes of a multipart form. */
  body?: string | Buffer | undefined;
  /** The source's deadline: aborting it ends the request as a `timeout`. */
  signal: AbortSignal;
}

export interface UpstreamResponse {
  status: number;
  /** The body parsed as JSON, or undefined when it is empty or not JSON (see `text`). */
  json: unknown;
  text: string;
}

/**
 * One HTTP request to a provider. Network errors become `connection` failures and the signal's
 * abort a `timeout`; any status is returned for the adapter to judge (redirects are not
 * followed). Never logs anything: the URL can hold an identifier.
 */
export async function upstreamRequest(url: string, init: UpstreamRequestInit): Promise<UpstreamResponse> {
  const text = await new Promise<{ status: number; text: string }>((outerResolve, outerReject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      outerReject(new UpstreamFailure('connection', 'the source URL is not valid'));
      return;
    }
    const agent = target.protocol === 'https:' ? agents['https:'] : target.protocol === 'http:' ? agents['http:'] : undefined;
    if (!agent) {
      outerReject(new UpstreamFailure('connection', `unsupported protocol ${target.protocol}`));
      return;
    }
    if (init.signal.aborted) {
      outerReject(new UpstreamFailure('timeout', 'no answer within the time limit'));
      return;
    }
    // The deadline is watched here rather than through http.request's `signal` option, whose
    // listeners cost more than the request under load; either way an abort destroys the request.
    const onAbort = () => {
      request.destroy();
      reject(new UpstreamFailure('timeout', 'no answer within the time limit'));
    };
    const settled = () => init.signal.removeEventListener('abort', onAbort);
    const resolve = (value: { status: number; text: string }) => {
      settled();
      outerResolve(value);
    };
    const reject = (err: unknown) => {
      settled();
      outerReject(err);
    };
    const headers: Record<string, string | number> = { ...init.headers, ...outboundTraceHeaders() };
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
    const request = (target.protocol === 'https:' ? https : http).request(target, { method: init.method, headers, agent }, (response) => {
      const declared = Number(response.headers['content-length']);
      if (declared > MAX_BODY_BYTES) {
        response.destroy();
        reject(new UpstreamFailure('malformed', `body of ${declared} bytes is over the ${MAX_BODY_BYTES} limit`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          response.destroy();
          reject(new UpstreamFailure('malformed', `body is over the ${MAX_BODY_BYTES} byte limit`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8') }));
      response.on('error', (err) => reject(asFailure(err, init.signal)));
      response.on('aborted', () => reject(asFailure(new Error('aborted'), init.signal)));
    });
    init.signal.addEventListener('abort', onAbort, { once: true });
    request.on('error', (err) => reject(asFailure(err, init.signal)));
    request.end(init.body);
  });
  let json: unknown;
  if (text.text.trim() !== '') {
    try {
      json = JSON.parse(text.text);
    } catch {
      json = undefined;
    }
  }
  return { status: text.status, json, text: text.text };
}

function asFailure(err: unknown, signal: AbortSignal): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  if (signal.aborted) return new UpstreamFailure('timeout', 'no answer within the time limit');
  const code = (err as { code?: string })?.code;
  return new UpstreamFailure('connection', code ? `connection failed (${code})` : 'connection failed');
}

/** Joins a base URL and a path whatever slashes either has. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/** Fails as `malformed` unless the status is one the adapter handles. */
export function unexpectedStatus(status: number): UpstreamFailure {
  if (status === 401 || status === 403) return new UpstreamFailure('refused', `HTTP ${status}: the provider refused the credentials`);
  if (status === 402) return new UpstreamFailure('refused', 'HTTP 402: the provider account is out of credit');
  return new UpstreamFailure('http', `HTTP ${status}`);
}
