import {
  UpstreamFailure,
  type FaceMatchRequest,
  type ProviderFaceMatch,
  type UpstreamAdapter,
  type UpstreamRecordOf,
  type UpstreamRequest,
  type UpstreamSettings,
  type UpstreamType,
} from '../adapter.js';
import { joinUrl, unexpectedStatus, upstreamRequest, type UpstreamResponse } from '../http.js';
import { endpointFor, type Endpoint } from './endpoints.js';
import { biometricsForm, photoMatchingVerdict, VERIFYME_FACE_PATH } from './face.js';
import { toRecord } from './mapping.js';

function field(json: unknown, name: string): unknown {
  return typeof json === 'object' && json !== null ? (json as Record<string, unknown>)[name] : undefined;
}

/**
 * The spec's "not found" for the lookup: style C `{code: NOT_FOUND_ERROR}`, or style B
 * `{statusCode: 404, error: "Not Found"}`. A 404 for an unknown route (a wrong base URL) is a
 * failure of the source, not an answer, or a misconfigured source would say "no such person".
 */
function isNotFound(response: UpstreamResponse, style: Endpoint['notFound']): boolean {
  if (response.status !== 404) return false;
  const message = field(response.json, 'message');
  if (typeof message === 'string' && /^Route \w+ /.test(message)) return false;
  if (style === 'C') return field(response.json, 'code') === 'NOT_FOUND_ERROR' && field(response.json, 'status') === undefined;
  return field(response.json, 'statusCode') === 404 && field(response.json, 'error') === 'Not Found';
}

export class VerifyMeAdapter implements UpstreamAdapter {
  constructor(private readonly settings: UpstreamSettings) {}

  async find<T extends UpstreamType>({ type, key, signal }: UpstreamRequest<T>): Promise<UpstreamRecordOf[T] | undefined> {
    const endpoint = endpointFor(type, key);
    const response = await upstreamRequest(joinUrl(this.settings.url, endpoint.path), {
      method: endpoint.method,
      headers: {
        authorization: `Bearer ${this.settings.secret}`,
        accept: 'application/json',
        ...(endpoint.body ? { 'content-type': 'application/json' } : {}),
      },
      body: endpoint.body ? JSON.stringify(endpoint.body) : undefined,
      signal,
    });
    if (isNotFound(response, endpoint.notFound)) return undefined;
    if (response.status === 200 || response.status === 201) {
      if (response.json === undefined) throw new UpstreamFailure('malformed', `HTTP ${response.status} with a body that is not JSON`);
      if (field(response.json, 'status') !== 'success') throw new UpstreamFailure('malformed', 'status is not "success"');
      return toRecord(type, key, field(response.json, 'data'));
    }
    // A risk level above NONE makes applicant fields required, which a gateway cannot supply.
    if (response.status === 400 && /risk level/i.test(String(field(response.json, 'message') ?? ''))) {
      throw new UpstreamFailure('refused', 'HTTP 400: the upstream account\'s risk level requires applicant fields; it must be NONE');
    }
    throw unexpectedStatus(response.status);
  }

  /** The spec's biometrics endpoint; its unknown identity is a style C 404, as for the lookups. */
  async compareFace({ type, key, photoJpegBase64, signal }: FaceMatchRequest): Promise<ProviderFaceMatch | undefined> {
    const form = biometricsForm(type, key, photoJpegBase64);
    const response = await upstreamRequest(joinUrl(this.settings.url, VERIFYME_FACE_PATH), {
      method: 'POST',
      headers: { authorization: `Bearer ${this.settings.secret}`, accept: 'application/json', 'content-type': form.contentType },
      body: form.body,
      signal,
    });
    if (isNotFound(response, 'C')) return undefined;
    if (response.status === 200) return photoMatchingVerdict(response.json);
    throw unexpectedStatus(response.status);
  }
}
