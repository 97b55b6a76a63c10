import type { FaceMatchRequest, FaceMatchType, ProviderFaceMatch } from '../upstreams/adapter.js';
import { FaceMatchUnavailable } from '../upstreams/router.js';
import { loadSharp } from '../../platform/sharp.js';
import type { FaceMatchRouting } from './match-routing.js';
import type { PhotoMatching } from './score.js';

/**
 * One face match decided as the organization's routing says (match-routing.ts): by the local
 * model, by an upstream provider's selfie match through the lookup gateway, or by one with the
 * other behind it. The decision names the engine that made it; the record shows it.
 */

/** The lookup gateway as a face match needs it (the upstream router implements it). */
export interface FaceMatchGateway {
  /** The provider's verdict, undefined for its "no such identity"; throws FaceMatchUnavailable when it cannot answer. */
  compareFace(source: string, request: Omit<FaceMatchRequest, 'signal'>): Promise<ProviderFaceMatch | undefined>;
}

/** Why an engine could not compare: the local one (no photo on record, none that decodes, no face in it), or the provider (it does not know the identity). */
export type CannotCompare = 'no_photo' | 'no_face' | 'unreadable' | 'not_found';

/** `local`, or the upstream source's name. */
export type Engine = string;

export type FaceDecision = { engine: Engine; matching: PhotoMatching } | { engine: Engine; cannotCompare: CannotCompare };

export interface FaceDecisionInput {
  routing: FaceMatchRouting;
  /** Absent in test mode (no upstream is asked there) and where the live registry is no gateway. */
  gateway: FaceMatchGateway | undefined;
  /** Undefined for an identity no provider compares (a vNIN): the local engine decides. */
  type: FaceMatchType | undefined;
  key: string;
  /** The local engine's decision, or why it cannot compare; run only when the routing asks for it. */
  local(): Promise<PhotoMatching | { cannotCompare: CannotCompare }>;
  /** The selfie as the provider takes it (selfieForProvider), made only when one is asked. */
  selfie(): Promise<string>;
}

export const LOCAL_ENGINE = 'local';

/**
 * - `local`, no gateway, or an identity the source cannot compare: the local engine.
 * - `upstream`: the source; its failure is FaceMatchUnavailable (503), its "no such identity" cannot compare.
 * - `upstream-then-local`: the source; after its failure or "no such identity", the local engine.
 * - `local-then-upstream`: the local engine; when it cannot compare, the source (whose failure is 503).
 */
export async function decideFaceMatch(input: FaceDecisionInput): Promise<FaceDecision> {
  const { routing, gateway } = input;
  const runLocal = async (): Promise<FaceDecision> => {
    const outcome = await input.local();
    return 'cannotCompare' in outcome ? { engine: LOCAL_ENGINE, cannotCompare: outcome.cannotCompare } : { engine: LOCAL_ENGINE, matching: outcome };
  };
  const { type } = input;
  if (routing.engine === 'local' || !gateway || type === undefined || !routing.faceTypes.includes(type)) return runLocal();
  const { source } = routing;
  const runUpstream = async (): Promise<FaceDecision> => {
    const verdict = await gateway.compareFace(source, { type, key: input.key, photoJpegBase64: await input.selfie() });
    return verdict ? { engine: source, matching: asPhotoMatching(verdict) } : { engine: source, cannotCompare: 'not_found' };
  };
  switch (routing.engine) {
    case 'upstream':
      return runUpstream();
    case 'upstream-then-local': {
      try {
        const decided = await runUpstream();
        if ('matching' in decided) return decided;
      } catch (err) {
        if (!(err instanceof FaceMatchUnavailable)) throw err;
      }
      return runLocal();
    }
    case 'local-then-upstream': {
      const decided = await runLocal();
      return 'matching' in decided ? decided : runUpstream();
    }
  }
}

/** The provider's verdict in the spec's `photoMatching` shape, on the provider's own scale. */
export function asPhotoMatching(verdict: ProviderFaceMatch): PhotoMatching {
  return { match: verdict.match, matchScore: verdict.confidence, matchingThreshold: verdict.threshold, maxScore: verdict.maxScore };
}

/**
 * The selfie as providers document it: a JPEG in plain base64. Re-encoded whatever came in
 * (JPEG, PNG, WebP), upright (EXIF orientation applied) and without its metadata (sharp writes
 * none unless told to), so no camera, time or location travels to the provider.
 */
export async function selfieForProvider(bytes: Uint8Array): Promise<string> {
  const sharp = await loadSharp();
  const jpeg = await sharp(bytes).rotate().flatten({ background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer();
  return jpeg.toString('base64');
}
