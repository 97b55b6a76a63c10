import { describe, expect, it } from 'vitest';
import { atTargetFmr, enumeratePairs, mergePairs, nearestRank, pairGroup, ratesAt, type LabelledFace } from '../../bench/lib/face-stats.js';

// Made-up one-number "descriptors": the distance of two faces is the difference of their numbers.
const face = (id: string, group: string, value: number | undefined): LabelledFace => ({
  id,
  group,
  descriptor: value === undefined ? undefined : Float32Array.of(value),
});
const distance = (a: Float32Array, b: Float32Array) => Math.abs(a[0]! - b[0]!);

describe('enumeratePairs', () => {
  const faces = [
    face('ada', 'black', 0),
    face('ada', 'black', 0.25),
    face('bola', 'black', 1),
    face('carl', 'other', 3),
    face('carl', 'other', 3.5),
    face('dora', 'other', undefined),
    face('dora', 'other', 10),
  ];
  const sets = enumeratePairs(faces, distance);

  it('splits pairs into both-black, both-other and cross-group, genuine only within one person', () => {
    expect([...sets.keys()].sort()).toEqual(['black–black', 'cross', 'other–other']);
    expect(sets.get('black–black')).toEqual({ genuine: [0.25], impostor: [1, 0.75], genuineUnacquired: 0, impostorUnacquired: 0 });
    expect(sets.get('cross')!.genuine).toEqual([]);
    // 3 black photos × 4 other photos, of which the 3 with dora's faceless photo are not measured.
    expect(sets.get('cross')!.impostor).toHaveLength(9);
    expect(sets.get('cross')!.impostorUnacquired).toBe(3);
  });

  it('counts pairs with a photo in which no face was found apart, with no distance', () => {
    const other = sets.get('other–other')!;
    expect(other.genuine).toEqual([0.5]);
    expect(other.genuineUnacquired).toBe(1);
    expect(other.impostor.sort((a, b) => a - b)).toEqual([6.5, 7]);
    expect(other.impostorUnacquired).toBe(2);
  });

  it('merges every group into one set whose counts add up to every pair of photos', () => {
    const all = mergePairs(sets.values());
    const pairs = all.genuine.length + all.impostor.length + all.genuineUnacquired + all.impostorUnacquired;
    expect(pairs).toBe((faces.length * (faces.length - 1)) / 2);
  });

  it('names a pair group the same way whichever photo comes first', () => {
    expect(pairGroup('black', 'other')).toBe('cross');
    expect(pairGroup('other', 'black')).toBe('cross');
    expect(pairGroup('black', 'black')).toBe('black–black');
  });
});

describe('ratesAt', () => {
  it('matches at a distance equal to the threshold, as the service does', () => {
    const rates = ratesAt([0.2, 0.45, 0.5, 0.9], [0.3, 0.45, 0.46, 0.8, 1], 0.45);
    expect(rates).toEqual({ genuinePairs: 4, impostorPairs: 5, falseMatches: 2, falseNonMatches: 2, fmr: 0.4, fnmr: 0.5 });
  });

  it('gives no rate where there is no pair to measure it on', () => {
    expect(ratesAt([], [0.5], 0.45)).toMatchObject({ fmr: 0, fnmr: undefined });
    expect(ratesAt([0.5], [], 0.45)).toMatchObject({ fmr: undefined, fnmr: 1 });
  });
});

describe('atTargetFmr', () => {
  // 1,000 impostor distances 0.001, 0.002, ... 1.000 in shuffled order.
  const impostor = Array.from({ length: 1000 }, (_, i) => ((i * 389) % 1000) / 1000 + 0.001);
  const genuine = [0.1, 0.2, 0.3, 0.0015, 0.0025, 0.5];

  it('allows ⌊target × pairs⌋ false matches and takes the largest threshold that does', () => {
    const point = atTargetFmr(genuine, impostor, 0.001);
    expect(point.falseMatches).toBe(1);
    expect(point.threshold).toBeCloseTo(0.001, 9);
    expect(point.firstRejected).toBeCloseTo(0.002, 9);
    expect(point.fmr).toBe(0.001);
    expect(ratesAt(genuine, impostor, point.threshold!).falseMatches).toBe(1);
    // Accepted: 0.0015 (below the first rejected impostor distance); rejected: the other five.
    expect(point.falseNonMatches).toBe(5);
    expect(point.fnmr).toBeCloseTo(5 / 6, 12);
  });

  it('rounds the allowed count down and never exceeds the target', () => {
    const point = atTargetFmr(genuine, impostor, 0.0025);
    expect(point.falseMatches).toBe(2);
    expect(point.fmr).toBeLessThanOrEqual(0.0025);
  });

  it('rejects every pair of a tie at the cut rather than splitting it', () => {
    // Three impostors tie at 0.3: allowing 2 false matches may not let in two of the three.
    const tied = [0.1, 0.3, 0.3, 0.3, 0.6, 0.7, 0.8, 0.9, 1, 1.1];
    const point = atTargetFmr([0.2, 0.3, 0.35], tied, 0.2);
    expect(point.falseMatches).toBe(1);
    expect(point.threshold).toBe(0.1);
    expect(point.firstRejected).toBe(0.3);
    expect(point.fmr).toBe(0.1);
    expect(point.falseNonMatches).toBe(2);
  });

  it('has no threshold when even the closest impostor breaks the target', () => {
    const point = atTargetFmr([0.05, 0.2], [0.1, 0.3, 0.5], 0.01);
    expect(point).toMatchObject({ threshold: null, firstRejected: 0.1, falseMatches: 0, fmr: 0, falseNonMatches: 1, fnmr: 0.5 });
  });

  it('has no rejected impostor when the target allows them all', () => {
    const point = atTargetFmr([0.9], [0.1, 0.2], 1);
    expect(point).toMatchObject({ threshold: 0.2, firstRejected: null, falseMatches: 2, fnmr: 0 });
  });
});

describe('nearestRank', () => {
  it('takes the nearest-rank value of a sorted list', () => {
    const sorted = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(nearestRank(sorted, 0.5)).toBe(10);
    expect(nearestRank(sorted, 0.95)).toBe(19);
    expect(nearestRank([], 0.5)).toBeUndefined();
  });
});
