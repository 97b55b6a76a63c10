import createClient from 'openapi-fetch';
import type { paths } from './schema';

/** The web app's typed client of `/api`: types generated from the server's OpenAPI document. */
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

/** A failed `/api` call: the server's style-A error (`code`, `message`) with the HTTP status. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Where a 401 (or a signed-out session) sends the person: the sign-in page, coming back here afterwards. */
export function toSignIn(): void {
  const here = window.location.pathname + window.location.search;
  if (!window.location.pathname.startsWith('/login')) window.location.assign(`/login?next=${encodeURIComponent(here)}`);
}

/**
 * Unwraps an openapi-fetch result: the data, or an ApiRequestError with the server's message.
 * A 401 outside the sign-in flow (`/api/auth/*`, where it means a wrong password or code) says the
 * session ended: go and sign in again. `redirectOn401: false` keeps other public pages in place.
 */
export async function unwrap<T>(promise: Promise<Result<T>>, options: { redirectOn401?: boolean } = {}): Promise<T> {
  let result: Result<T>;
  try {
    result = await promise;
  } catch {
    throw new ApiRequestError(0, 'NETWORK', 'Vouch could not be reached: check your connection and try again');
  }
  const { data, error, response } = result;
  if (response.ok) return data as T;
  const body = (error ?? {}) as { code?: string; message?: unknown };
  const message = typeof body.message === 'string' ? body.message : `The request failed (HTTP ${response.status}); try again`;
  const authFlow = new URL(response.url, window.location.href).pathname.startsWith('/api/auth/');
  if (response.status === 401 && !authFlow && options.redirectOn401 !== false) toSignIn();
  throw new ApiRequestError(response.status, body.code ?? 'ERROR', message);
}

/** A human message of any error thrown by a query or mutation. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiRequestError) return error.message;
  return 'Something went wrong; reload the page and try again';
}
