import { UpstreamFailure, type FaceMatchType, type ProviderFaceMatch } from '../adapter.js';
import { foundData } from './map.js';

/**
 * Youverify's "NIN Facial Matching" (docs/upstreams-youverify.md, "Face matches"): the NIN
 * lookup's POST with `validations.selfie.image`, answered with the NIN envelope and, in
 * `data.validations.selfie.selfieVerification`, `{confidenceLevel, threshold, match}`. Messages
 * name fields, never values: they are logged.
 */

/** The one identity biometrics takes that Youverify documents a selfie match for (vNIN is not one biometrics takes). */
export const YOUVERIFY_FACE_TYPES = ['nin'] as const satisfies readonly FaceMatchType[];

export const YOUVERIFY_FACE_PATH = '/v2/api/identity/ng/nin';

/** The documented request: the NIN lookup's body with the selfie as the validation's image. */
export function youverifyFaceBody(key: string, photoJpegBase64: string): Record<string, unknown> {
  return { id: key, isSubjectConsent: true, validations: { selfie: { image: photoJpegBase64 } } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The verdict, or undefined for the envelope's documented `not_found`. */
export function youverifyVerdict(body: unknown): ProviderFaceMatch | undefined {
  const data = foundData(body);
  if (!data) return undefined;
  const selfie = isObject(data.validations) ? data.validations.selfie : undefined;
  const verification = isObject(selfie) ? selfie.selfieVerification : undefined;
  if (!isObject(verification)) throw new UpstreamFailure('malformed', 'data.validations.selfie.selfieVerification missing');
  const { confidenceLevel, threshold, match } = verification;
  if (typeof match !== 'boolean') throw new UpstreamFailure('malformed', 'selfieVerification.match is not a boolean');
  if (typeof confidenceLevel !== 'number') throw new UpstreamFailure('malformed', 'selfieVerification.confidenceLevel is not a number');
  if (typeof threshold !== 'number') throw new UpstreamFailure('malformed', 'selfieVerification.threshold is not a number');
  // Below 0 (integrations see -1) is Youverify saying it could not compare the faces: no verdict.
  if (confidenceLevel < 0) throw new UpstreamFailure('malformed', 'selfieVerification.confidenceLevel is below 0: the provider could not compare the faces');
  return { match, confidence: confidenceLevel, threshold, maxScore: 100 };
}
