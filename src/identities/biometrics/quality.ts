import type { Face } from './face-engine.js';

/**
 * Whether a face is good enough to compare, from what the engine read of it (face-engine.ts,
 * `quality`): big enough, sharp enough, neither too dark nor washed out, eyes open. A face that
 * fails is not compared: the person is asked to take it again, in plain words (the verification
 * page's words.ts), rather than failed on a bad picture.
 *
 * The cut-offs are set so that the labelled news photos of bench/face-accuracy.ts pass in both
 * groups alike (docs/biometrics.md, "Quality gate", has the readings per group): brightness in
 * particular is read on the inner face, where a dark skin reads darker than a light one in the
 * same light, so its floor sits below what any Black face in that set read, and it is the
 * picture being dark, not the skin, that fails it.
 */

export type QualityProblem = 'too_small' | 'too_dark' | 'too_bright' | 'blurred' | 'eyes_closed';

/** Why a frame could not be compared: no face found in it at all, or a face the gate turned away. */
export type FrameProblem = QualityProblem | 'no_face';

export interface QualityLimits {
  /** The face's box, in pixels of the decoded image (at most 640 px on its long side). */
  minFaceWidth: number;
  /** Mean brightness of the inner face at the model's input, 0–255. */
  minBrightness: number;
  maxBrightness: number;
  /** Variance of the Laplacian of the inner face's luma at 112 px. */
  minSharpness: number;
  /** Eye aspect ratio, both eyes averaged. */
  minEyeOpenness: number;
}

export const DEFAULT_QUALITY_LIMITS: QualityLimits = {
  minFaceWidth: 64,
  minBrightness: 25,
  maxBrightness: 225,
  minSharpness: 12,
  minEyeOpenness: 0.12,
};

/** The problems of a face, empty when it is good enough to compare; the worst (most actionable) first. */
export function qualityProblems(face: Pick<Face, 'box' | 'quality'>, limits: QualityLimits = DEFAULT_QUALITY_LIMITS): QualityProblem[] {
  const problems: QualityProblem[] = [];
  const { brightness, sharpness, eyeOpenness } = face.quality;
  if (face.box.width < limits.minFaceWidth) problems.push('too_small');
  if (brightness < limits.minBrightness) problems.push('too_dark');
  if (brightness > limits.maxBrightness) problems.push('too_bright');
  if (sharpness < limits.minSharpness) problems.push('blurred');
  if (eyeOpenness < limits.minEyeOpenness) problems.push('eyes_closed');
  return problems;
}

/**
 * One descriptor for several frames of one face: the mean of their (unit) descriptors, scaled
 * back to length 1. Unlike the best of several comparisons, it gives an impostor no extra chances:
 * noise of single frames averages out, and a pair is still one comparison.
 */
export function fuseDescriptors(descriptors: readonly Float32Array[]): Float32Array {
  const first = descriptors[0];
  if (!first) throw new Error('fuseDescriptors needs at least one descriptor');
  const sum = new Float32Array(first.length);
  for (const descriptor of descriptors) for (let i = 0; i < sum.length; i++) sum[i]! += descriptor[i] ?? 0;
  let norm = 0;
  for (const value of sum) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < sum.length; i++) sum[i]! /= norm;
  return sum;
}
