import { UpstreamFailure, type FaceMatchType, type ProviderFaceMatch } from '../adapter.js';

/**
 * Dojah's selfie verification (docs/upstreams-dojah.md, "Face matches"): a POST per identity type
 * with the number and `selfie_image`, answered with the registry record and
 * `entity.selfie_verification {confidence_value, match}`. Messages name fields, never values.
 */

/**
 * Dojah's pages state the verdict's cut-off in words: 0–90 % is no match, 90–100 % a match
 * ("Verify BVN with Selfie Image", "Verify NIN with Selfie Image"); the answer does not repeat it.
 */
export const DOJAH_FACE_THRESHOLD = 90;

/** The identities Dojah documents a selfie match for (its vNIN one is not one biometrics takes). */
export const DOJAH_FACE_TYPES = ['bvn', 'nin'] as const satisfies readonly FaceMatchType[];

export interface DojahFaceCall {
  path: string;
  body: Record<string, string>;
}

/** The documented endpoint and JSON body: the number under the type's name, the selfie without a `data:` prefix. */
export function dojahFaceCall(type: FaceMatchType, key: string, photoJpegBase64: string): DojahFaceCall {
  switch (type) {
    case 'bvn':
      return { path: '/api/v1/kyc/bvn/verify', body: { bvn: key, selfie_image: photoJpegBase64 } };
    case 'nin':
      return { path: '/api/v1/kyc/nin/verify', body: { nin: key, selfie_image: photoJpegBase64 } };
    default:
      // The router asks a source only for the types its kind lists.
      throw new UpstreamFailure('refused', `dojah documents no selfie match for ${type}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `entity.selfie_verification` as a verdict on Dojah's 0–100 scale. */
export function dojahVerdict(body: unknown): ProviderFaceMatch {
  if (!isObject(body)) throw new UpstreamFailure('malformed', 'body is not a JSON object');
  if (!isObject(body.entity)) throw new UpstreamFailure('malformed', 'entity missing');
  const verification = body.entity.selfie_verification;
  if (!isObject(verification)) throw new UpstreamFailure('malformed', 'entity.selfie_verification missing');
  const { confidence_value: confidence, match } = verification;
  if (typeof match !== 'boolean') throw new UpstreamFailure('malformed', 'entity.selfie_verification.match is not a boolean');
  if (typeof confidence !== 'number') throw new UpstreamFailure('malformed', 'entity.selfie_verification.confidence_value is not a number');
  return { match, confidence, threshold: DOJAH_FACE_THRESHOLD, maxScore: 100 };
}
