/**
 * The statistics of a face-match evaluation, apart from any model or photo: which pairs a labelled
 * set of descriptors makes per demographic group, the error rates at a threshold, and the
 * threshold that holds the false-match rate to a target. bench/face-accuracy.ts runs them on real
 * photos; test/unit/face-stats.test.ts checks them on made-up distances.
 *
 * A pair matches when its distance is at most the threshold, as the service decides
 * (score.ts: `distance <= MATCH_THRESHOLD`).
 */

/** One photo: whose it is, the group its person belongs to, and its descriptor (none when no face was found). */
export interface LabelledFace {
  id: string;
  group: string;
  descriptor: Float32Array | undefined;
}

export interface PairSet {
  genuine: number[];
  impostor: number[];
  /** Genuine pairs lost because a photo of the pair had no face found (failure to acquire). */
  genuineUnacquired: number;
  /** Impostor pairs lost the same way. */
  impostorUnacquired: number;
}

/** `black–black` for two people of one group, `cross` for two of different groups. */
export function pairGroup(a: string, b: string): string {
  return a === b ? `${a}–${a}` : 'cross';
}

/**
 * Every unordered pair of photos, by pair group: genuine when both are of one person, impostor
 * otherwise. Pairs with an unacquired photo are counted apart, not given a distance.
 */
export function enumeratePairs(
  faces: readonly LabelledFace[],
  distance: (a: Float32Array, b: Float32Array) => number,
): Map<string, PairSet> {
  const sets = new Map<string, PairSet>();
  const setFor = (key: string) => {
    let set = sets.get(key);
    if (!set) {
      set = { genuine: [], impostor: [], genuineUnacquired: 0, impostorUnacquired: 0 };
      sets.set(key, set);
    }
    return set;
  };
  for (let i = 0; i < faces.length; i++) {
    const a = faces[i]!;
    for (let j = i + 1; j < faces.length; j++) {
      const b = faces[j]!;
      const set = setFor(pairGroup(a.group, b.group));
      const genuine = a.id === b.id;
      if (!a.descriptor || !b.descriptor) {
        if (genuine) set.genuineUnacquired++;
        else set.impostorUnacquired++;
        continue;
      }
      (genuine ? set.genuine : set.impostor).push(distance(a.descriptor, b.descriptor));
    }
  }
  return sets;
}

/** Several pair sets as one (all groups together). */
export function mergePairs(sets: Iterable<PairSet>): PairSet {
  const merged: PairSet = { genuine: [], impostor: [], genuineUnacquired: 0, impostorUnacquired: 0 };
  for (const set of sets) {
    for (const d of set.genuine) merged.genuine.push(d);
    for (const d of set.impostor) merged.impostor.push(d);
    merged.genuineUnacquired += set.genuineUnacquired;
    merged.impostorUnacquired += set.impostorUnacquired;
  }
  return merged;
}

export interface Rates {
  genuinePairs: number;
  impostorPairs: number;
  falseMatches: number;
  falseNonMatches: number;
  /** Undefined when there is no impostor pair to measure it on. */
  fmr: number | undefined;
  /** Undefined when there is no genuine pair to measure it on. */
  fnmr: number | undefined;
}

const rate = (count: number, of: number) => (of > 0 ? count / of : undefined);

/** FMR and FNMR when a pair matches at distance ≤ `threshold`. */
export function ratesAt(genuine: readonly number[], impostor: readonly number[], threshold: number): Rates {
  let falseMatches = 0;
  for (const d of impostor) if (d <= threshold) falseMatches++;
  let falseNonMatches = 0;
  for (const d of genuine) if (d > threshold) falseNonMatches++;
  return {
    genuinePairs: genuine.length,
    impostorPairs: impostor.length,
    falseMatches,
    falseNonMatches,
    fmr: rate(falseMatches, impostor.length),
    fnmr: rate(falseNonMatches, genuine.length),
  };
}

export interface OperatingPoint extends Rates {
  targetFmr: number;
  /**
   * The largest threshold whose FMR is at most the target: a pair matches at distance ≤ this.
   * It is the largest impostor distance below the first one that would break the target, so a
   * tie at that distance is never split (all its pairs are rejected); null when even the
   * smallest impostor distance would break it (then every distance below it qualifies).
   */
  threshold: number | null;
  /** The impostor distance from which pairs must be rejected: the threshold holds for any value below it. */
  firstRejected: number | null;
}

/**
 * The operating point for a target FMR: at most ⌊target × impostor pairs⌋ false matches. The
 * FNMR is taken at the threshold's upper edge (every genuine distance below `firstRejected`
 * accepted), the best any threshold with that FMR can do.
 */
export function atTargetFmr(genuine: readonly number[], impostor: readonly number[], targetFmr: number): OperatingPoint {
  const sorted = Float64Array.from(impostor).sort();
  // The guard keeps 0.001 × 1000 from landing just under 1 after rounding.
  const allowed = Math.floor(targetFmr * sorted.length * (1 + 1e-12));
  if (allowed >= sorted.length) {
    return { targetFmr, threshold: sorted.at(-1) ?? null, firstRejected: null, ...ratesAt(genuine, impostor, Infinity) };
  }
  const firstRejected = sorted[allowed]!;
  // Ties with the first rejected distance are rejected with it.
  let below = allowed;
  while (below > 0 && sorted[below - 1] === firstRejected) below--;
  const threshold = below > 0 ? sorted[below - 1]! : null;
  let falseNonMatches = 0;
  for (const d of genuine) if (d >= firstRejected) falseNonMatches++;
  return {
    targetFmr,
    threshold,
    firstRejected,
    genuinePairs: genuine.length,
    impostorPairs: sorted.length,
    falseMatches: below,
    falseNonMatches,
    fmr: rate(below, sorted.length),
    fnmr: rate(falseNonMatches, genuine.length),
  };
}

/** The value at `fraction` of a sorted list (nearest rank), undefined for an empty one. */
export function nearestRank(sorted: readonly number[], fraction: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}
