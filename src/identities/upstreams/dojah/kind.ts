import { UPSTREAM_TYPES, UpstreamFailure, type UpstreamAdapter, type UpstreamKind, type UpstreamRecordOf, type UpstreamRequest, type UpstreamType } from '../adapter.js';
import { joinUrl, unexpectedStatus, upstreamRequest } from '../http.js';
import type { Entity } from './fields.js';
import { MAPPERS } from './mapping.js';
import { dojahCall } from './requests.js';

/**
 * Dojah (https://api.dojah.io), an aggregator with GET lookups for every Nigerian registry we
 * hold. Authentication is two headers, `AppId` and `Authorization` (the secret key itself, not
 * `Bearer …`), so the operator's `--secret` is `APP_ID:SECRET_KEY`. docs/upstreams-dojah.md has
 * the endpoints, the field mappings and what Dojah lacks.
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

  async find<T extends UpstreamType>(request: UpstreamRequest<T>): Promise<UpstreamRecordOf[T] | undefined> {
    const { path, query } = dojahCall(request.type, request.key);
    const response = await upstreamRequest(`${joinUrl(this.#url, path)}?${new URLSearchParams(query)}`, {
      method: 'GET',
      headers: { AppId: this.#credentials.appId, Authorization: this.#credentials.secretKey, Accept: 'application/json' },
      signal: request.signal,
    });
    const body = response.json;
    // Dojah's "no such record": 404 with an `error` message. A 404 without one is not Dojah
    // answering (a wrong base URL, a proxy) and must fail over rather than read as "not found".
    if (response.status === 404 && isEntity(body) && typeof body.error === 'string') return undefined;
    if (response.status !== 200) throw unexpectedStatus(response.status);
    if (!isEntity(body)) throw new UpstreamFailure('malformed', 'body is not a JSON object');
    if (!isEntity(body.entity)) throw new UpstreamFailure('malformed', 'entity missing');
    return MAPPERS[request.type](body.entity, request.key);
  }
}

export const dojah: UpstreamKind = {
  kind: 'dojah',
  types: UPSTREAM_TYPES,
  checkSecret(secret: string): void {
    parseSecret(secret);
  },
  create(settings) {
    return new DojahAdapter(settings.url, parseSecret(settings.secret));
  },
};
