import {
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
import { YOUVERIFY_FACE_PATH, YOUVERIFY_FACE_TYPES, youverifyFaceBody, youverifyVerdict } from './face.js';
import { foundData, toNinRecord, toTinRecord, toVninRecord } from './map.js';

/**
 * Youverify (https://doc.youverify.co): one API token in the `token` header, a POST per lookup
 * (and per NIN selfie match, face.ts), and an envelope whose `data.status` says `found` or
 * `not_found`. docs/upstreams-youverify.md lists the sources and what the provider lacks.
 */

type Supported = 'nin' | 'vnin' | 'tin';

interface Endpoint {
  path: string;
  body(key: string): Record<string, unknown>;
  map(data: Record<string, unknown>): UpstreamRecordOf[Supported];
}

const ENDPOINTS: Record<Supported, Endpoint> = {
  nin: {
    path: '/v2/api/identity/ng/nin',
    body: (key) => ({ id: key, isSubjectConsent: true }),
    map: toNinRecord,
  },
  vnin: {
    path: '/v2/api/identity/ng/vnin',
    body: (key) => ({ id: key, isSubjectConsent: true }),
    map: toVninRecord,
  },
  tin: {
    path: '/v2/api/verifications/ng/tin',
    // The page's field table names `isSubjectConsent`, its sample request `isConsent`: both are sent.
    body: (key) => ({ tin: key, isSubjectConsent: true, isConsent: true }),
    map: toTinRecord,
  },
};

const TYPES = Object.keys(ENDPOINTS) as Supported[];

// Youverify's keys are opaque tokens; this only rejects what cannot be one (and a pasted header).
const TOKEN = /^[A-Za-z0-9._~+/=-]{8,512}$/;

export const youverify: UpstreamKind = {
  kind: 'youverify',
  types: TYPES,
  faceMatchTypes: YOUVERIFY_FACE_TYPES,
  checkSecret(secret: string): void {
    if (!TOKEN.test(secret)) {
      throw new Error('the Youverify secret must be the API token alone: 8 to 512 letters, digits or . _ ~ + / = -, no spaces');
    }
  },
  create(settings) {
    youverify.checkSecret(settings.secret);
    return new YouverifyAdapter(settings.url, settings.secret);
  },
};

class YouverifyAdapter implements UpstreamAdapter {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async find<T extends UpstreamType>(request: UpstreamRequest<T>): Promise<UpstreamRecordOf[T] | undefined> {
    if (!isSupported(request.type)) throw new UpstreamFailure('http', `Youverify does not answer ${request.type} lookups`);
    const endpoint = ENDPOINTS[request.type];
    const json = await this.post(endpoint.path, endpoint.body(request.key), request.signal);
    const data = foundData(json);
    return data && (endpoint.map(data) as UpstreamRecordOf[T]);
  }

  async compareFace(request: FaceMatchRequest): Promise<ProviderFaceMatch | undefined> {
    if (request.type !== 'nin') throw new UpstreamFailure('refused', `Youverify documents no selfie match for ${request.type}`);
    return youverifyVerdict(await this.post(YOUVERIFY_FACE_PATH, youverifyFaceBody(request.key, request.photoJpegBase64), request.signal));
  }

  /** One documented POST: the body's JSON, or the failure its status or text is. */
  private async post(path: string, body: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const response = await upstreamRequest(joinUrl(this.baseUrl, path), {
      method: 'POST',
      headers: { token: this.token, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    if (response.status !== 200 && response.status !== 201) throw unexpectedStatus(response.status);
    if (response.json === undefined) throw new UpstreamFailure('malformed', 'body is not JSON');
    return response.json;
  }
}

function isSupported(type: UpstreamType): type is Supported {
  return (TYPES as UpstreamType[]).includes(type);
}
