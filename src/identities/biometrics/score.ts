/**
 * How two face descriptors become the spec's `photoMatching`. The descriptor model maps a face to
 * 512 numbers of length 1 such that photos of one person point the same way; the distance of two
 * faces is their cosine distance (1 − cosine similarity, 0 for the same direction, 2 for
 * opposite ones), and the score is the cosine similarity out of 100: 100 × (1 − distance), floored
 * at 0, one decimal. docs/biometrics.md says how the threshold was measured.
 */

export const MAX_SCORE = 100;

/**
 * The largest distance still called a match by default (a score of 43): the loosest whole score at
 * which false matches between two Black people stay at or under 0.1 % on labelled photos with room
 * for the sampling error, i.e. the upper end of the 95 % interval of their measured rate is under
 * 0.1 % (69 of 96,451 pairs, 0.072 %, at most 0.09 %; at 42 the rate is 0.088 % but its interval
 * reaches 0.11 %): bench/face-accuracy.ts, docs/biometrics.md. An organization may set its own,
 * within the bounds below.
 */
export const MATCH_THRESHOLD = 0.57;

/**
 * The thresholds an organization may choose, as scores (what `matchingThreshold` reports): from
 * the loosest whose false matches between two Black people were still under 1 % to the strictest
 * that still let most genuine pairs through (src/identities/biometrics/measured-thresholds.ts).
 */
export const MATCH_SCORE_BOUNDS = { min: 35, max: 50 } as const;

/** Pairs of labelled photos at one threshold (measured-thresholds.ts, written by bench/face-accuracy.ts). */
export interface MeasuredPairs {
  genuinePairs: number;
  impostorPairs: number;
  /** Impostor pairs (two different people) that would match. */
  falseMatches: number;
  /** Genuine pairs (two photos of one person) that would not match. */
  falseNonMatches: number;
}

/** The measured errors at one threshold an organization may set, per group. */
export interface MeasuredThreshold {
  score: number;
  blackBlack: MeasuredPairs;
  otherOther: MeasuredPairs;
  /** One Black and one other person: impostor pairs only. */
  cross: MeasuredPairs;
}

/** The distance a threshold score stands for: a pair matches when its distance is at most this. */
export function scoreToDistance(score: number): number {
  return Math.round((1 - score / MAX_SCORE) * 1e6) / 1e6;
}

export interface PhotoMatching {
  match: boolean;
  matchScore: number;
  matchingThreshold: number;
  maxScore: number;
}

/** Cosine distance of two descriptors of length 1. */
export function faceDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] ?? 0) * (b[i] ?? 0);
  return 1 - dot;
}

export function distanceToScore(distance: number): number {
  return Math.max(0, Math.round(MAX_SCORE * (1 - distance) * 10) / 10);
}

/**
 * The spec's verdict on two descriptors at `threshold` (a distance). `match` is decided on the
 * scores as shown, `matchScore ≥ matchingThreshold`, so that the answer never contradicts itself
 * where rounding to one decimal puts a distance just past the threshold on it (0.5702 → 43.0).
 */
export function photoMatching(held: Float32Array, supplied: Float32Array, threshold = MATCH_THRESHOLD): PhotoMatching {
  const matchScore = distanceToScore(faceDistance(held, supplied));
  const matchingThreshold = distanceToScore(threshold);
  return { match: matchScore >= matchingThreshold, matchScore, matchingThreshold, maxScore: MAX_SCORE };
}
