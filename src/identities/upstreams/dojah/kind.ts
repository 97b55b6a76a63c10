import {
  UPSTREAM_TYPES,
  UpstreamFailure,
  type FaceMatchRequest,
  type ProviderFaceMatch,
  type UpstreamAdapter,
  type UpstreamKind,
  type UpstreamRecordOf,
  type UpstreamRequest,
  type UpstreamType,
} from '../adapter.js';
import { joinUrl, unexpectedStatus, upstreamRequest } from '../http.js';
import { DOJAH_FACE_TYPES, dojahFaceCall, dojahVerdict } from './face.js';
import type { Entity } from './fields.js';
import { MAPPERS } from './mapping.js';
import { dojahCall } from './requests.js';

/**
 * Dojah (https://api.dojah.io), an aggregator with GET lookups for every Nigerian registry we
 * hold, and POST selfie matches against the BVN and NIN photos (face.ts). Authentication is two
 * headers, `AppId` and `Authorization` (the secret key itself, not `Bearer …`), so the operator's
 * `--secret` is `APP_ID:SECRET_KEY`. docs/upstreams-dojah.md has the endpoints, the field mappings
 * and what Dojah lacks.
 */

interface Credentials {
  appId: string;
  secretKey: string;
}

function parseSecret(secret: string): Credentials {
  const separator = secret.indexOf(':');
  const appId = secret.slice(0, separator);
  const secretKey = secret.slice(separator + 1);
  if (separator < 0 || appId === '' || secretKey === '' || /\s/.test(secret) || secretKey.includes(':')) {
    throw new Error('the dojah secret must be APP_ID:SECRET_KEY (the app id and the secret key from the Dojah dashboard, joined by one colon)');
  }
  return { appId, secretKey };
}

function isEntity(value: unknown): value is Entity {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class DojahAdapter implements UpstreamAdapter {
  readonly #url: string;
  readonly #credentials: Credentials;

  constructor(url: string, credentials: Credentials) {
    this.#url = url;
    this.#credentials = credentials;
  }

  get #headers(): Record<string, string> {
    return { AppId: this.#credentials.appId, Authorization: this.#credentials.secretKey, Accept: 'application/json' };
  }

  async find<T extends UpstreamType>(request: UpstreamRequest<T>): Promise<UpstreamRecordOf[T] | undefined> {
    const { path, query } = dojahCall(request.type, request.key);
    const response = await upstreamRequest(`${joinUrl(this.#url, path)}?${new URLSearchParams(query)}`, {
      method: 'GET',
      headers: this.#headers,
      signal: request.signal,
    });
    const body = response.json;
    if (isNotFound(response.status, body)) return undefined;
    if (response.status !== 200) throw unexpectedStatus(response.status);
    if (!isEntity(body)) throw new UpstreamFailure('malformed', 'body is not a JSON object');
    if (!isEntity(body.entity)) throw new UpstreamFailure('malformed', 'entity missing');
    return MAPPERS[request.type](body.entity, request.key);
  }

  async compareFace(request: FaceMatchRequest): Promise<ProviderFaceMatch | undefined> {
    const { path, body } = dojahFaceCall(request.type, request.key, request.photoJpegBase64);
    const response = await upstreamRequest(joinUrl(this.#url, path), {
      method: 'POST',
      headers: { ...this.#headers, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: request.signal,
    });
    // The selfie pages show no "not found"; Dojah's lookups answer it as 404 with `error`, read alike.
    if (isNotFound(response.status, response.json)) return undefined;
    if (response.status !== 200) throw unexpectedStatus(response.status);
    return dojahVerdict(response.json);
  }
}

/**
 * Dojah's "no such record": 404 with an `error` message. A 404 without one is not Dojah
 * answering (a wrong base URL, a proxy) and must fail over rather than read as "not found".
 */
function isNotFound(status: number, body: unknown): boolean {
  return status === 404 && isEntity(body) && typeof body.error === 'string';
}

export const dojah: UpstreamKind = {
  kind: 'dojah',
  types: UPSTREAM_TYPES,
  faceMatchTypes: DOJAH_FACE_TYPES,
  checkSecret(secret: string): void {
    parseSecret(secret);
  },
  create(settings) {
    return new DojahAdapter(settings.url, parseSecret(settings.secret));
  },
};
