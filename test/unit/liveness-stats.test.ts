import { describe, expect, it } from 'vitest';
import { auc, equalErrorPoint, gateRates } from '../../bench/lib/pad-stats.js';
import { cutoffForSwapRate, shareAbove, shareAtOrAbove, shareAtOrBelow, shareBelow } from '../../bench/lib/same-face-stats.js';

// The statistics of bench/pad-accuracy.ts and bench/same-face-accuracy.ts on made-up scores.
describe('presentation-attack statistics', () => {
  it('AUC: 1 when every live sample scores above every spoof, 0 the other way, ties count half', () => {
    expect(auc([0.9, 0.8], [0.1, 0.2, 0.3])).toBe(1);
    expect(auc([0.1], [0.9, 0.8])).toBe(0);
    expect(auc([0.5], [0.5])).toBe(0.5);
    // Pairs (live, spoof): (0.6, 0.2) yes, (0.6, 0.7) no, (0.6, 0.6) half, (0.9, each) yes.
    expect(auc([0.6, 0.9], [0.2, 0.7, 0.6])).toBeCloseTo(4.5 / 6, 12);
    expect(auc([], [0.1])).toBeUndefined();
  });

  it('APCER counts spoofs at or over the threshold, BPCER live samples under it', () => {
    const rates = gateRates([0.2, 0.5, 0.9, 0.95], [0.1, 0.5, 0.6], 0.5);
    expect(rates).toEqual({ threshold: 0.5, live: 4, spoof: 3, spoofsPassed: 2, liveRefused: 1, apcer: 2 / 3, bpcer: 1 / 4 });
    expect(gateRates([], [], 0.5)).toMatchObject({ apcer: undefined, bpcer: undefined });
  });

  it('finds the threshold where APCER and BPCER come closest', () => {
    const point = equalErrorPoint([0.3, 0.7, 0.8, 0.9], [0.1, 0.2, 0.4, 0.75]);
    // At 0.7: one spoof of four through (0.75), one live of four refused (0.3).
    expect(point).toMatchObject({ threshold: 0.7, spoofsPassed: 1, liveRefused: 1, apcer: 0.25, bpcer: 0.25 });
    expect(equalErrorPoint([0.5], [])).toBeUndefined();
  });
});

describe('same-face statistics', () => {
  const differentPeople = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95];

  it('counts pairs passed (similarity at or over the cut-off) and refused (under it)', () => {
    expect(shareAtOrAbove(differentPeople, 0.8)).toEqual({ count: 3, of: 10 });
    expect(shareBelow(differentPeople, 0.8)).toEqual({ count: 7, of: 10 });
    expect(shareAbove(differentPeople, 0.8)).toEqual({ count: 2, of: 10 });
    expect(shareAtOrBelow(differentPeople, 0.8)).toEqual({ count: 8, of: 10 });
  });

  it('gives the similarity a cut-off must exceed to let through at most the target share of different people', () => {
    // 10 % of 10 pairs: one may pass; a cut-off above 0.9 passes only 0.95.
    expect(cutoffForSwapRate(differentPeople, 0.1)).toBe(0.9);
    expect(shareAbove(differentPeople, cutoffForSwapRate(differentPeople, 0.1)).count).toBe(1);
    // Under one pair allowed: the cut-off must exceed the highest.
    expect(cutoffForSwapRate(differentPeople, 0.05)).toBe(0.95);
    // Ties with the value to exceed are refused with it.
    expect(shareAbove([0.9, 0.9, 0.5, 0.4], cutoffForSwapRate([0.9, 0.9, 0.5, 0.4], 0.25))).toEqual({ count: 0, of: 4 });
    expect(cutoffForSwapRate(differentPeople, 1)).toBe(-Infinity);
  });
});
