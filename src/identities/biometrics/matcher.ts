import { createHash } from 'node:crypto';
import type { Mode } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { metrics } from '../../platform/metrics.js';
import { sharedFaceEngine, type FaceEngine } from './face-engine.js';
import { decodeForDetection, heldPhotoBytes, ImageError, type DecodedImage } from './image.js';
import { ComputedLru } from './lru.js';
import { fuseDescriptors, qualityProblems, type FrameProblem } from './quality.js';
import { MATCH_THRESHOLD, photoMatching, type PhotoMatching } from './score.js';

/** The identity types biometrics compares against, as the spec names them (`frsc`: drivers license). */
export type BiometricIdType = 'nin' | 'frsc' | 'bvn';

/** The photo a registry holds for an identity (base64, or a base64 data URL). */
export interface HeldPhoto {
  mode: Mode;
  idType: BiometricIdType;
  idNumber: string;
  photo: string;
}

/**
 * The photo on record cannot be compared: it holds no face, or it does not decode. Biometrics
 * answers this as it answers an unknown number (an uncharged answer of its own would tell a funded
 * account which numbers exist); a session records NO_REGISTRY_PHOTO.
 */
export class UnusableHeldPhoto extends ApiError {
  constructor(readonly reason: 'no_face' | 'unreadable') {
    super(
      reason === 'no_face' ? 'BAD_REQUEST' : 'UNPROCESSABLE',
      reason === 'no_face' ? 'No face was found in the photo on record for this identity, so it cannot be compared' : 'The photo on record for this identity cannot be read, so it cannot be compared',
    );
    this.name = 'UnusableHeldPhoto';
  }
}

/** Held-photo descriptors kept: 512 floats each, so 2,000 take about 4 MB. */
const DEFAULT_CACHE_ENTRIES = 2_000;

/** Several frames compared as one (`matchFrames`): the match, or why no frame could be used. */
export type FramesMatch =
  | { matching: PhotoMatching; framesUsed: number; retake?: never }
  | { retake: FrameProblem[]; framesUsed: 0; matching?: never };

/**
 * Compares a supplied photo with the photo on record. The held photo's descriptor is cached by
 * identity and photo hash (a changed registry photo is a new key), including "no face in it", so a
 * repeat verification of the same person runs the model on the supplied photo only.
 */
export class FaceMatcher {
  private readonly held: ComputedLru<string, Float32Array | null>;

  constructor(
    private readonly engine: FaceEngine = sharedFaceEngine(),
    cacheEntries = DEFAULT_CACHE_ENTRIES,
  ) {
    this.held = new ComputedLru(cacheEntries);
  }

  /**
   * Decided at `threshold`, a distance (the organization's: threshold-setting.ts). Throws 400 for
   * a supplied photo without a face, UnusableHeldPhoto when the one on record cannot be compared.
   */
  async match(held: HeldPhoto, supplied: DecodedImage | Float32Array, threshold = MATCH_THRESHOLD): Promise<PhotoMatching> {
    const stop = metrics.faceMatchDuration.startTimer();
    try {
      const matching = await this.compare(held, supplied, threshold);
      stop({ outcome: matching.match ? 'match' : 'no_match' });
      return matching;
    } catch (err) {
      stop({ outcome: 'error' });
      throw err;
    }
  }

  /**
   * The supplied photo's face descriptor; 400 when it shows no face. The biometrics route asks for
   * it before the identity is looked up, so that answer is the same for any number.
   */
  async describeSupplied(supplied: DecodedImage): Promise<Float32Array> {
    const face = await this.engine.describe(supplied);
    if (!face) {
      throw new ApiError('BAD_REQUEST', 'No face was found in the supplied photo; send a clear, front-facing photo of the person');
    }
    return face.descriptor;
  }

  /**
   * Several frames of one live face against the photo on record (a session's liveness capture):
   * each frame is described and judged by the quality gate (quality.ts); the descriptors of the
   * frames that pass are fused into one and compared once, at `threshold`. When no frame passes,
   * nothing is compared and the problems come back, most frequent first, so the person can be
   * asked to take the picture again. Throws UnusableHeldPhoto as `match` does.
   */
  async matchFrames(held: HeldPhoto, frames: readonly DecodedImage[], threshold = MATCH_THRESHOLD): Promise<FramesMatch> {
    const stop = metrics.faceMatchDuration.startTimer();
    try {
      const counts = new Map<FrameProblem, number>();
      const usable: Float32Array[] = [];
      for (const frame of frames) {
        const face = await this.engine.describe(frame);
        const problems: FrameProblem[] = face ? qualityProblems(face) : ['no_face'];
        for (const problem of problems) counts.set(problem, (counts.get(problem) ?? 0) + 1);
        if (face && problems.length === 0) usable.push(face.descriptor);
      }
      if (usable.length === 0) {
        stop({ outcome: 'retake' });
        return { retake: [...counts].sort((a, b) => b[1] - a[1]).map(([problem]) => problem), framesUsed: 0 };
      }
      const heldDescriptor = await this.heldDescriptor(held);
      if (!heldDescriptor) throw new UnusableHeldPhoto('no_face');
      const matching = photoMatching(heldDescriptor, fuseDescriptors(usable), threshold);
      stop({ outcome: matching.match ? 'match' : 'no_match' });
      return { matching, framesUsed: usable.length };
    } catch (err) {
      stop({ outcome: 'error' });
      throw err;
    }
  }

  private async compare(held: HeldPhoto, supplied: DecodedImage | Float32Array, threshold: number): Promise<PhotoMatching> {
    const descriptor = supplied instanceof Float32Array ? supplied : await this.describeSupplied(supplied);
    const heldDescriptor = await this.heldDescriptor(held);
    if (!heldDescriptor) throw new UnusableHeldPhoto('no_face');
    return photoMatching(heldDescriptor, descriptor, threshold);
  }

  private heldDescriptor(held: HeldPhoto): Promise<Float32Array | null> {
    const hash = createHash('sha256').update(held.photo).digest('base64url');
    const key = `${held.mode}:${held.idType}:${held.idNumber}:${hash}`;
    // Concurrent first verifications of one identity share one computation.
    return this.held.get(key, () => this.describeHeld(held.photo));
  }

  private async describeHeld(photo: string): Promise<Float32Array | null> {
    let image: DecodedImage;
    try {
      image = await decodeForDetection(heldPhotoBytes(photo));
    } catch (error) {
      if (error instanceof ImageError) throw new UnusableHeldPhoto('unreadable');
      throw error;
    }
    const face = await this.engine.describe(image);
    return face?.descriptor ?? null;
  }
}
