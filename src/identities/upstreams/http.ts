import { UpstreamFailure } from './adapter.js';

/** At most this much of an upstream's body is read: a record with a photo is well below it. */
const MAX_BODY_BYTES = 5 * 1024 * 1024;

export interface UpstreamResponse {
  status: number;
  /** The body parsed as JSON, or undefined when it is empty or not JSON (see `text`). */
  json: unknown;
  text: string;
}

/**
 * One HTTP request to a provider. Network errors become `connection` failures and the signal's
 * abort a `timeout`; any status is returned for the adapter to judge. Never logs anything: the
 * URL can hold an identifier.
 */
export async function upstreamRequest(url: string, init: RequestInit & { signal: AbortSignal }): Promise<UpstreamResponse> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error' });
  } catch (err) {
    throw asFailure(err, init.signal);
  }
  let text: string;
  try {
    text = await readLimited(response);
  } catch (err) {
    if (err instanceof UpstreamFailure) throw err;
    throw asFailure(err, init.signal);
  }
  let json: unknown;
  if (text.trim() !== '') {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status: response.status, json, text };
}

async function readLimited(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_BODY_BYTES) throw new UpstreamFailure('malformed', `body of ${declared} bytes is over the ${MAX_BODY_BYTES} limit`);
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new UpstreamFailure('malformed', `body is over the ${MAX_BODY_BYTES} byte limit`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function asFailure(err: unknown, signal: AbortSignal): UpstreamFailure {
  if (signal.aborted) return new UpstreamFailure('timeout', 'no answer within the time limit');
  const cause = (err as { cause?: { code?: string } })?.cause;
  const code = cause?.code ?? (err as { code?: string })?.code;
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
