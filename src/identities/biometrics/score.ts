/**
 * How two face descriptors become the spec's `photoMatching`. face-api's recognition net maps a
 * face to 128 numbers such that photos of one person lie close together (euclidean distance);
 * the score is that distance turned into a similarity out of 100: 100 × (1 − distance), floored
 * at 0, one decimal. docs/biometrics.md says how the threshold was measured.
 */

export const MAX_SCORE = 100;

/**
 * The largest distance still called a match. Chosen on the 22 people of face-api's demo photos
 * (bench/biometrics-accuracy.ts); measured per group on labelled LFW photos by
 * bench/face-accuracy.ts, where it rejects 41 % of genuine Black pairs (docs/biometrics.md).
 */
export const MATCH_THRESHOLD = 0.45;

export interface PhotoMatching {
  match: boolean;
  matchScore: number;
  matchingThreshold: number;
  maxScore: number;
}

export function faceDistance(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const delta = (a[i] ?? 0) - (b[i] ?? 0);
    sum += delta * delta;
  }
  return Math.sqrt(sum);
}

export function distanceToScore(distance: number): number {
  return Math.max(0, Math.round(MAX_SCORE * (1 - distance) * 10) / 10);
}

export function photoMatching(held: Float32Array, supplied: Float32Array): PhotoMatching {
  const distance = faceDistance(held, supplied);
  return {
    match: distance <= MATCH_THRESHOLD,
    matchScore: distanceToScore(distance),
    matchingThreshold: distanceToScore(MATCH_THRESHOLD),
    maxScore: MAX_SCORE,
  };
}
