import type { operations } from './api-schema.js';

/**
 * The end-user API under /verify/api/:token (docs/sessions.md): the page's only way to the
 * server, typed from the routes' own schemas (`npm run verify:types` writes api-schema.d.ts).
 * Every call is `no-store`, sends no cookies and no referrer; a failure is an ApiError (the server
 * answered with an error) or a NetworkError (it did not answer), so each screen can say which and
 * offer the right retry.
 */

type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;

/** What GET /verify/api/:token answers (and every step's POST): the types generated from the route schemas. */
export type View = Json<operations['endUserViewSession']['responses'][200]>;
export type Step = View['step'];
export type LivenessAttempt = Json<operations['endUserStartLivenessAttempt']['responses'][201]>;
export type Handoff = Json<operations['endUserHandoff']['responses'][201]>;

export interface CapturedFrame {
  atMs: number;
  jpeg: Blob;
}

/** The server answered with an error (style A: `{status: "error", message, code}`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** No answer: offline, a dropped connection or a timeout. */
export class NetworkError extends Error {}

const TIMEOUT_MS = 30_000;
const UPLOAD_TIMEOUT_MS = 120_000;

async function readError(status: number, text: string): Promise<ApiError> {
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // A proxy's HTML error page: the status alone says enough.
  }
  const code = typeof body.code === 'string' ? body.code : `HTTP_${status}`;
  const message = typeof body.message === 'string' ? body.message : 'The server could not handle the request.';
  return new ApiError(status, code, message, body);
}

export interface Client {
  view(): Promise<View>;
  consent(): Promise<View>;
  /** The person's ID; without one, the organization's prefilled ID is looked up again. */
  submitId(idType?: string, idNumber?: string): Promise<View>;
  startAttempt(): Promise<LivenessAttempt>;
  uploadFrames(attemptId: string, frames: CapturedFrame[], onProgress?: (fraction: number) => void): Promise<View>;
  cancel(): Promise<View>;
  handoff(): Promise<Handoff>;
}

export function createClient(token: string, base = '/verify/api'): Client {
  const root = `${base}/${encodeURIComponent(token)}`;

  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${root}${path}`, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
        referrerPolicy: 'no-referrer',
        signal: controller.signal,
      });
      text = await response.text();
    } catch {
      throw new NetworkError('No answer from the server');
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) throw await readError(response.status, text);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new NetworkError('The answer was cut off');
    }
  }

  return {
    view: () => call<View>('GET', ''),
    consent: () => call<View>('POST', '/consent', { accepted: true }),
    submitId: (idType, idNumber) => call<View>('POST', '/id', idType === undefined ? {} : { idType, idNumber }),
    startAttempt: () => call<LivenessAttempt>('POST', '/liveness/attempts', {}),
    cancel: () => call<View>('POST', '/cancel', {}),
    handoff: () => call<Handoff>('POST', '/handoff', {}),
    uploadFrames(attemptId, frames, onProgress) {
      // XMLHttpRequest rather than fetch: it reports upload progress, which matters on a slow line.
      const form = new FormData();
      form.append('timestamps', JSON.stringify(frames.map((frame) => Math.round(frame.atMs))));
      frames.forEach((frame, i) => form.append('frame', frame.jpeg, `frame-${i}.jpg`));
      return new Promise<View>((resolve, reject) => {
        const request = new XMLHttpRequest();
        request.open('POST', `${root}/liveness/attempts/${encodeURIComponent(attemptId)}/frames`);
        request.timeout = UPLOAD_TIMEOUT_MS;
        request.withCredentials = false;
        request.setRequestHeader('accept', 'application/json');
        request.upload.onprogress = (event) => {
          if (event.lengthComputable && onProgress) onProgress(event.loaded / event.total);
        };
        request.onload = () => {
          if (request.status >= 200 && request.status < 300) {
            try {
              resolve(JSON.parse(request.responseText) as View);
            } catch {
              reject(new NetworkError('The answer was cut off'));
            }
          } else {
            readError(request.status, request.responseText).then(reject, reject);
          }
        };
        request.onerror = () => reject(new NetworkError('No answer from the server'));
        request.ontimeout = () => reject(new NetworkError('The upload took too long'));
        request.send(form);
      });
    },
  };
}
