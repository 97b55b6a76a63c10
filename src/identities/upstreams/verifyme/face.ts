import { randomBytes } from 'node:crypto';
import { UpstreamFailure, type FaceMatchType, type ProviderFaceMatch } from '../adapter.js';

/**
 * The spec's biometrics endpoint (`POST /v1/verifications/identities/biometrics`, a multipart form
 * of `idType`, `idNumber` and the `photo` file) as a face-match source: its record's
 * `photoMatching {match, matchScore, matchingThreshold, maxScore}` is the verdict. Messages name
 * fields, never values: they are logged.
 */

export const VERIFYME_FACE_PATH = 'v1/verifications/identities/biometrics';

/** Every identity the endpoint compares with. */
export const VERIFYME_FACE_TYPES = ['bvn', 'nin', 'drivers_license'] as const satisfies readonly FaceMatchType[];

/** The spec's `idType` for each type (`frsc` is the drivers license). */
const ID_TYPES: Record<FaceMatchType, string> = { bvn: 'bvn', nin: 'nin', drivers_license: 'frsc' };

export interface MultipartBody {
  contentType: string;
  body: Buffer;
}

/** The form the spec documents: the two fields, then the photo as a JPEG file. */
export function biometricsForm(type: FaceMatchType, key: string, photoJpegBase64: string): MultipartBody {
  const boundary = `vouch-${randomBytes(12).toString('hex')}`;
  const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head = `${field('idType', ID_TYPES[type])}${field('idNumber', key)}--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="selfie.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from(photoJpegBase64, 'base64'), Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8')]);
  return { contentType: `multipart/form-data; boundary=${boundary}`, body };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `data.photoMatching` of a success envelope as a verdict on the upstream's own scale. */
export function photoMatchingVerdict(body: unknown): ProviderFaceMatch {
  if (!isObject(body) || body.status !== 'success') throw new UpstreamFailure('malformed', 'status is not "success"');
  const matching = isObject(body.data) ? body.data.photoMatching : undefined;
  if (!isObject(matching)) throw new UpstreamFailure('malformed', 'data.photoMatching missing');
  const { match, matchScore, matchingThreshold, maxScore } = matching;
  if (typeof match !== 'boolean') throw new UpstreamFailure('malformed', 'data.photoMatching.match is not a boolean');
  for (const [name, value] of Object.entries({ matchScore, matchingThreshold, maxScore })) {
    if (typeof value !== 'number') throw new UpstreamFailure('malformed', `data.photoMatching.${name} is not a number`);
  }
  return { match, confidence: matchScore as number, threshold: matchingThreshold as number, maxScore: maxScore as number };
}
