/**
 * `npx tsx bench/pad-accuracy.ts [--faces DIR] [--json] [--crop-scale N]`: how well each passive
 * score of the liveness engine tells a live face from a spoof (issue 50, part 5), on the
 * presentation-attack samples in DIR/pad (default ../shared/faces beside the repository):
 * CelebA-Spoof's and NUAA's samples, and Silent-Face's three. The photos are read from there at
 * run time only: they are for evaluation, never to be copied into this repository. Without the
 * folder the script says so and exits 0; it downloads nothing.
 *
 * Each photo goes through the engine's own path as a one-frame attempt: decoded as a frame
 * (decodeFrame, the pose pass's 320 px copy), the pose pass finds the face, the describe pass
 * scores it: fr_liveness's real probability (the gate), Human's `real` (the gate before) and
 * Human's `live` (the second gate before). Reported per set, with the counts: AUC (the chance a
 * live photo scores above a spoof), and at each score's gate APCER (spoofs let through) and
 * BPCER (live photos refused); for fr_liveness also at other thresholds. A photo in which no face
 * is found is counted apart (the engine would answer NO_FACE). --crop-scale sets fr_liveness's
 * crop factor instead of the engine's (to compare crops).
 *
 * These are single stills of other people, not the 25-frame captures the engine decides on (it
 * takes the median over up to 5 described frames).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ANTISPOOF_CROP_SCALE, FrameAnalyzer } from '../src/identities/liveness/analyzer.js';
import { decodeFrame } from '../src/identities/liveness/frames.js';
import { DEFAULT_THRESHOLDS, LIVENESS_CAPTURE } from '../src/identities/liveness/settings.js';
import { auc, equalErrorPoint, gateRates } from './lib/pad-stats.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Human's gates before issue 50: `real` ≥ 0.3 and `live` ≥ 0.5. */
const HUMAN_REAL_GATE = 0.3;
const HUMAN_LIVE_GATE = 0.5;
const SWEEP = Array.from({ length: 19 }, (_, i) => Math.round((i + 1) * 5) / 100);

/** Each set's folder, and which of its photos (by path inside it) are live; the rest are spoofs. */
const SETS: { name: string; live: (relative: string) => boolean }[] = [
  { name: 'celeba-spoof-sample', live: (relative) => relative.startsWith('Live/') },
  { name: 'nuaa-sample', live: (relative) => relative.startsWith('ClientFace/') },
  { name: 'silent-face-samples', live: (relative) => relative.startsWith('image_T') },
];

interface Scored {
  file: string;
  live: boolean;
  /** Undefined where no face was found. */
  scores?: { fr: number; humanReal: number; humanLive: number };
}

async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(full)));
    else if (/\.(jpe?g|png)$/i.test(entry.name)) found.push(full);
  }
  return found.sort();
}

async function score(analyzer: FrameAnalyzer, file: string, live: boolean): Promise<Scored> {
  const decoded = await decodeFrame(await readFile(file), LIVENESS_CAPTURE.maxWidth);
  if (!decoded) return { file, live };
  const { described } = await analyzer.analyze([decoded.small], (poses) => (poses[0]?.main ? [0] : []), { iris: false });
  const item = described[0];
  if (!item) return { file, live };
  return { file, live, scores: { fr: item.real, humanReal: item.humanReal ?? Number.NaN, humanLive: item.live } };
}

const pct = (value: number | undefined) => (value === undefined ? '–' : `${(value * 100).toFixed(1)} %`);
const fixed = (value: number | undefined, places = 3) => (value === undefined ? '–' : value.toFixed(places));

function report(scored: Scored[], frThreshold: number) {
  const withFace = scored.filter((item) => item.scores);
  const side = (live: boolean, key: 'fr' | 'humanReal' | 'humanLive') => withFace.filter((item) => item.live === live).map((item) => item.scores![key]);
  const scores = {
    fr_liveness: { auc: auc(side(true, 'fr'), side(false, 'fr')), gate: gateRates(side(true, 'fr'), side(false, 'fr'), frThreshold) },
    human_real: { auc: auc(side(true, 'humanReal'), side(false, 'humanReal')), gate: gateRates(side(true, 'humanReal'), side(false, 'humanReal'), HUMAN_REAL_GATE) },
    human_live: { auc: auc(side(true, 'humanLive'), side(false, 'humanLive')), gate: gateRates(side(true, 'humanLive'), side(false, 'humanLive'), HUMAN_LIVE_GATE) },
  };
  // Both of Human's gates, as the engine applied them before: a spoof had to pass both.
  const passesBoth = (item: Scored) => item.scores!.humanReal >= HUMAN_REAL_GATE && item.scores!.humanLive >= HUMAN_LIVE_GATE;
  const liveScored = withFace.filter((item) => item.live);
  const spoofScored = withFace.filter((item) => !item.live);
  return {
    photos: { live: scored.filter((item) => item.live).length, spoof: scored.filter((item) => !item.live).length },
    noFace: { live: scored.filter((item) => item.live && !item.scores).length, spoof: scored.filter((item) => !item.live && !item.scores).length },
    scores,
    humanBothGates: {
      spoofsPassed: spoofScored.filter(passesBoth).length,
      spoof: spoofScored.length,
      liveRefused: liveScored.filter((item) => !passesBoth(item)).length,
      live: liveScored.length,
    },
    frEqualError: equalErrorPoint(side(true, 'fr'), side(false, 'fr')),
    frSweep: SWEEP.map((threshold) => gateRates(side(true, 'fr'), side(false, 'fr'), threshold)),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { faces: { type: 'string' }, json: { type: 'boolean' }, 'crop-scale': { type: 'string' } } });
  const cropScale = values['crop-scale'] === undefined ? ANTISPOOF_CROP_SCALE : Number(values['crop-scale']);
  if (!(cropScale >= 1 && cropScale <= 5)) throw new Error('--crop-scale takes a number from 1 to 5');
  const dir = path.resolve(REPO_ROOT, values.faces ?? '../shared/faces');
  const pad = path.join(dir, 'pad');
  if (!existsSync(pad)) {
    process.stdout.write(`pad-accuracy: skipped, no face data: ${pad} is missing (see --faces)\n`);
    return;
  }
  const frThreshold = DEFAULT_THRESHOLDS.minAntispoof;
  const analyzer = new FrameAnalyzer({ minFaceScore: 0.5, antispoofCropScale: cropScale, humanAntispoof: true });
  await analyzer.warmUp();
  const results: Record<string, ReturnType<typeof report>> = {};
  try {
    for (const set of SETS) {
      const root = path.join(pad, set.name);
      if (!existsSync(root)) continue;
      const scored: Scored[] = [];
      for (const file of await filesUnder(root)) scored.push(await score(analyzer, file, set.live(path.relative(root, file).split(path.sep).join('/'))));
      results[set.name] = report(scored, frThreshold);
      process.stderr.write(`${set.name}: ${scored.length} photos scored\n`);
    }
  } finally {
    await analyzer.close();
  }
  const document = { faces: dir, cropScale, gates: { fr_liveness: frThreshold, human_real: HUMAN_REAL_GATE, human_live: HUMAN_LIVE_GATE }, sets: results };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(document)}\n`);
    return;
  }
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(`passive scores on ${pad} (single stills through the engine's pose and describe passes; fr_liveness crop ${cropScale.toFixed(3)} × Human's face box)`);
  for (const [name, result] of Object.entries(results)) {
    log('');
    log(`${name}: ${result.photos.live} live, ${result.photos.spoof} spoof photos; no face found in ${result.noFace.live} live, ${result.noFace.spoof} spoof (not scored: the engine answers NO_FACE)`);
    log('score         | AUC (live > spoof) | gate  | APCER: spoofs let through | BPCER: live refused');
    for (const [key, entry] of Object.entries(result.scores)) {
      const gate = entry.gate;
      log(`${key.padEnd(13)} | ${fixed(entry.auc).padStart(18)} | ${gate.threshold.toFixed(2)}  | ${`${pct(gate.apcer)} (${gate.spoofsPassed} of ${gate.spoof})`.padEnd(25)} | ${pct(gate.bpcer)} (${gate.liveRefused} of ${gate.live})`);
    }
    const both = result.humanBothGates;
    log(`Human's two gates together (before): APCER ${pct(both.spoof ? both.spoofsPassed / both.spoof : undefined)} (${both.spoofsPassed} of ${both.spoof}), BPCER ${pct(both.live ? both.liveRefused / both.live : undefined)} (${both.liveRefused} of ${both.live})`);
    const eer = result.frEqualError;
    if (eer) log(`fr_liveness's equal-error point: ${eer.threshold.toFixed(3)}: APCER ${pct(eer.apcer)} (${eer.spoofsPassed}), BPCER ${pct(eer.bpcer)} (${eer.liveRefused})`);
    log('fr_liveness at other thresholds (spoofs let through, live refused):');
    for (const gate of result.frSweep) log(`  ${gate.threshold.toFixed(2)}: APCER ${pct(gate.apcer)} (${gate.spoofsPassed}), BPCER ${pct(gate.bpcer)} (${gate.liveRefused})`);
  }
}

await main();
