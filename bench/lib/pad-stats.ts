/**
 * The statistics of a presentation-attack (spoof) evaluation, apart from any model or photo, in
 * ISO/IEC 30107-3's terms: APCER, the share of attack presentations let through; BPCER, the share
 * of bona fide (live) presentations refused. A score passes the gate when it is at least the
 * threshold, as the liveness decision reads its minimums (`score < min` fails).
 * bench/pad-accuracy.ts runs them on real samples; test/unit/pad-stats.test.ts checks them.
 */

/**
 * The probability that a random live sample scores above a random spoof (ties count half): the
 * area under the ROC curve. 0.5 is chance; under 0.5 the score ranks spoofs above live faces.
 * Undefined when either side is empty.
 */
export function auc(live: readonly number[], spoof: readonly number[]): number | undefined {
  if (live.length === 0 || spoof.length === 0) return undefined;
  // Mann–Whitney U from the ranks of the pooled scores, ties given their average rank.
  const pooled = [...live.map((score) => ({ score, live: true })), ...spoof.map((score) => ({ score, live: false }))].sort((a, b) => a.score - b.score);
  let liveRanks = 0;
  for (let i = 0; i < pooled.length; ) {
    let j = i;
    while (j < pooled.length && pooled[j]!.score === pooled[i]!.score) j++;
    const rank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if (pooled[k]!.live) liveRanks += rank;
    i = j;
  }
  const u = liveRanks - (live.length * (live.length + 1)) / 2;
  return u / (live.length * spoof.length);
}

export interface GateRates {
  threshold: number;
  live: number;
  spoof: number;
  /** Spoofs scoring at least the threshold (let through). */
  spoofsPassed: number;
  /** Live samples scoring under it (refused). */
  liveRefused: number;
  apcer: number | undefined;
  bpcer: number | undefined;
}

/** APCER and BPCER when a sample passes at score ≥ `threshold`. */
export function gateRates(live: readonly number[], spoof: readonly number[], threshold: number): GateRates {
  const spoofsPassed = spoof.filter((score) => score >= threshold).length;
  const liveRefused = live.filter((score) => score < threshold).length;
  return {
    threshold,
    live: live.length,
    spoof: spoof.length,
    spoofsPassed,
    liveRefused,
    apcer: spoof.length > 0 ? spoofsPassed / spoof.length : undefined,
    bpcer: live.length > 0 ? liveRefused / live.length : undefined,
  };
}

/**
 * The threshold, among the scores seen, where APCER and BPCER come closest (the equal error
 * rate's operating point), with both rates there. Undefined when either side is empty.
 */
export function equalErrorPoint(live: readonly number[], spoof: readonly number[]): GateRates | undefined {
  if (live.length === 0 || spoof.length === 0) return undefined;
  let best: GateRates | undefined;
  for (const threshold of new Set([...live, ...spoof])) {
    const rates = gateRates(live, spoof, threshold);
    const gap = Math.abs(rates.apcer! - rates.bpcer!);
    if (!best || gap < Math.abs(best.apcer! - best.bpcer!) || (gap === Math.abs(best.apcer! - best.bpcer!) && threshold < best.threshold)) best = rates;
  }
  return best;
}
