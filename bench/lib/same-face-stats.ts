/**
 * The statistics of the same-face check's evaluation (bench/same-face-accuracy.ts), apart from any
 * model: the check passes two faces whose similarity is at least its cut-off (decide.ts refuses
 * `consistency < minSameFace`). test/unit/same-face-stats.test.ts checks them on made-up values.
 */

export interface Share {
  count: number;
  of: number;
}

/** How many values reach the cut-off (similarity ≥ cutoff: passed). */
export function shareAtOrAbove(values: readonly number[], cutoff: number): Share {
  return { count: values.filter((value) => value >= cutoff).length, of: values.length };
}

/** How many values stay under the cut-off (refused). */
export function shareBelow(values: readonly number[], cutoff: number): Share {
  return { count: values.filter((value) => value < cutoff).length, of: values.length };
}

/**
 * For a target share of different-person pairs let through: the similarity that a cut-off must
 * exceed. Any cut-off above it passes at most ⌊target × pairs⌋ of them (the pairs tied with it are
 * refused with it). -Infinity when the target allows every pair.
 */
export function cutoffForSwapRate(differentPeople: readonly number[], target: number): number {
  const sorted = [...differentPeople].sort((a, b) => b - a);
  // The guard keeps 0.01 × 100 from landing just under 1 after rounding.
  const allowed = Math.floor(target * sorted.length * (1 + 1e-12));
  return allowed >= sorted.length ? -Infinity : sorted[allowed]!;
}

/** The share over `cutoff`, strictly: what a cut-off just above it lets through. */
export function shareAbove(values: readonly number[], cutoff: number): Share {
  return { count: values.filter((value) => value > cutoff).length, of: values.length };
}

/** The share at or under `cutoff`: what a cut-off just above it refuses. */
export function shareAtOrBelow(values: readonly number[], cutoff: number): Share {
  return { count: values.filter((value) => value <= cutoff).length, of: values.length };
}
