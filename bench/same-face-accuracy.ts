/**
 * `npx tsx bench/same-face-accuracy.ts [--faces DIR] [--json]`: the liveness engine's same-face
 * check (issue 50, part 5). The check refuses an attempt (FACE_CHANGED) when a described frame's
 * faceres embedding is less similar to the frontal frame's than `minSameFace` (cosine); a face
 * swapped in between two people gets through when their similarity reaches it.
 *
 * Two measurements:
 * - Different people: the labelled LFW photos of DIR (default ../shared/faces beside the
 *   repository; labels/eval_set.json), each a one-frame attempt through the engine's pose and
 *   describe passes (decodeFrame's 320 px copy, Human's face crop, faceres), every pair compared.
 *   Per group (Black–Black, other–other, cross), with the counts: the share of different-person
 *   pairs at or over the cut-off (a swap let through), the cut-offs that hold it under 1 % and
 *   0.1 %, and the share of same-person pairs under them (LFW's same-person pairs are different
 *   photos years apart, harder than frames of one capture). The photos are read from there at run
 *   time only, never copied into this repository. Without the folder that part is skipped with a
 *   line saying so; nothing is downloaded.
 * - Genuine captures: the liveness bench's genuine attempts (test/liveness/genuine.ts: unedited
 *   captures and the fake-camera loop in all 36 orders) and its 12 face swaps, decided by the
 *   engine: their same-face scores (the lowest similarity of a described frame to the frontal one).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FrameAnalyzer } from '../src/identities/liveness/analyzer.js';
import { cosineSimilarity } from '../src/identities/liveness/decide.js';
import { HumanLivenessEngine } from '../src/identities/liveness/human-engine.js';
import { decodeFrame } from '../src/identities/liveness/frames.js';
import { MemoryPrintStore } from '../src/identities/liveness/print-store.js';
import { DEFAULT_THRESHOLDS, LIVENESS_CAPTURE } from '../src/identities/liveness/settings.js';
import { faceSwapAttacks } from '../test/liveness/attacks.js';
import { allChallengeOrders, loopCapture, naturalAttempts } from '../test/liveness/genuine.js';
import { enumeratePairs, type LabelledFace } from './lib/face-stats.js';
import { cutoffForSwapRate, shareAbove, shareAtOrAbove, shareAtOrBelow, shareBelow } from './lib/same-face-stats.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TARGET_SWAP_RATES = [0.01, 0.001];
const SWEEP = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8];
const GROUP_ORDER = ['black–black', 'other–other', 'cross'];

interface EvalEntry {
  path: string;
  id: string;
  group: string;
}

async function embedAll(analyzer: FrameAnalyzer, dir: string, entries: EvalEntry[]): Promise<LabelledFace[]> {
  const faces: LabelledFace[] = [];
  for (const [index, entry] of entries.entries()) {
    const decoded = await decodeFrame(await readFile(path.join(dir, 'lfw-subset', entry.path)), LIVENESS_CAPTURE.maxWidth);
    let descriptor: Float32Array | undefined;
    if (decoded) {
      const { described } = await analyzer.analyze([decoded.small], (poses) => (poses[0]?.main ? [0] : []), { iris: false });
      if (described[0]) descriptor = Float32Array.from(described[0].embedding);
    }
    faces.push({ id: entry.id, group: entry.group, descriptor });
    if ((index + 1) % 200 === 0) process.stderr.write(`embedded ${index + 1} of ${entries.length}\n`);
  }
  return faces;
}

async function lfwPairs(analyzer: FrameAnalyzer, dir: string) {
  const entries = JSON.parse(await readFile(path.join(dir, 'labels', 'eval_set.json'), 'utf8')) as EvalEntry[];
  const faces = await embedAll(analyzer, dir, entries);
  // enumeratePairs hands back whatever the function returns: here similarities, not distances.
  const sets = enumeratePairs(faces, (a, b) => cosineSimilarity(Array.from(a), Array.from(b)));
  const groups = Object.fromEntries(
    GROUP_ORDER.filter((key) => sets.has(key)).map((key) => {
      const set = sets.get(key)!;
      return [
        key,
        {
          differentPeople: set.impostor.length,
          samePerson: set.genuine.length,
          atDefault: { swapsPassed: shareAtOrAbove(set.impostor, DEFAULT_THRESHOLDS.minSameFace), samePersonRefused: shareBelow(set.genuine, DEFAULT_THRESHOLDS.minSameFace) },
          targets: TARGET_SWAP_RATES.map((target) => {
            const cutoff = cutoffForSwapRate(set.impostor, target);
            return { target, cutoff, swapsPassed: shareAbove(set.impostor, cutoff), samePersonRefused: shareAtOrBelow(set.genuine, cutoff) };
          }),
          sweep: SWEEP.map((cutoff) => ({ cutoff, swapsPassed: shareAtOrAbove(set.impostor, cutoff), samePersonRefused: shareBelow(set.genuine, cutoff) })),
          highestDifferentPeople: set.impostor.reduce((high, value) => Math.max(high, value), -1),
        },
      ];
    }),
  );
  return { photos: faces.length, noFace: faces.filter((face) => !face.descriptor).length, groups };
}

async function captures(analyzer: FrameAnalyzer) {
  const engine = () => new HumanLivenessEngine({ prints: new MemoryPrintStore(), analyzer });
  let sequence = 0;
  const decide = (challenges: Parameters<HumanLivenessEngine['decide']>[0]['challenges'], frames: Parameters<HumanLivenessEngine['decide']>[0]['frames']) => {
    sequence += 1;
    return engine().decide({ attemptId: `att_${sequence}`, sessionId: `ses_${sequence}`, challenges, frames, scope: { orgId: 'bench', mode: 'test' } });
  };
  const genuine: number[] = [];
  for (const item of naturalAttempts().attempts) genuine.push((await decide(item.challenges, item.frames)).scores.consistency);
  for (const [index, challenges] of allChallengeOrders().entries()) genuine.push((await decide(challenges, loopCapture('genuine.mjpeg', (index * 173) % 1067))).scores.consistency);
  const swaps: number[] = [];
  for (const attack of await faceSwapAttacks(12)) swaps.push((await decide(attack.challenges, attack.frames)).scores.consistency);
  return { genuine: genuine.sort((a, b) => a - b), swaps: swaps.sort((a, b) => a - b) };
}

const pct = (part: { count: number; of: number }) => `${part.of === 0 ? '–' : ((part.count / part.of) * 100).toFixed(3)} % (${part.count} of ${part.of.toLocaleString('en-GB')})`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { faces: { type: 'string' }, json: { type: 'boolean' } } });
  const dir = path.resolve(REPO_ROOT, values.faces ?? '../shared/faces');
  const hasFaces = existsSync(path.join(dir, 'labels', 'eval_set.json')) && existsSync(path.join(dir, 'lfw-subset'));
  const analyzer = new FrameAnalyzer();
  await analyzer.warmUp();
  let lfw: Awaited<ReturnType<typeof lfwPairs>> | null = null;
  let captured: Awaited<ReturnType<typeof captures>>;
  try {
    if (hasFaces) lfw = await lfwPairs(analyzer, dir);
    captured = await captures(analyzer);
  } finally {
    await analyzer.close();
  }
  const result = { faces: hasFaces ? dir : null, minSameFace: DEFAULT_THRESHOLDS.minSameFace, lfw, captures: captured };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const cut = DEFAULT_THRESHOLDS.minSameFace;
  if (!lfw) log(`same-face-accuracy: LFW part skipped, no face data: ${path.join(dir, 'labels', 'eval_set.json')} or ${path.join(dir, 'lfw-subset')} is missing (see --faces)`);
  else {
    log(`faceres cosine similarity on ${lfw.photos} LFW photos (no face found in ${lfw.noFace}), one-frame attempts through the engine; the check passes at similarity ≥ the cut-off`);
    for (const [key, group] of Object.entries(lfw.groups)) {
      log('');
      log(`${key}: ${group.differentPeople.toLocaleString('en-GB')} different-person pairs, ${group.samePerson.toLocaleString('en-GB')} same-person pairs; highest different-person similarity ${group.highestDifferentPeople.toFixed(3)}`);
      log(`  at ${cut} (the engine's): swaps let through ${pct(group.atDefault.swapsPassed)}; same-person photo pairs under it ${pct(group.atDefault.samePersonRefused)}`);
      for (const point of group.targets) log(`  swaps under ${point.target * 100} %: cut-off above ${point.cutoff.toFixed(3)}: let through ${pct(point.swapsPassed)}; same-person photo pairs under it ${pct(point.samePersonRefused)}`);
      for (const point of group.sweep) log(`  at ${point.cutoff.toFixed(2)}: swaps let through ${pct(point.swapsPassed)}; same-person photo pairs under it ${pct(point.samePersonRefused)}`);
    }
    log('');
  }
  const { genuine, swaps } = captured;
  log(`genuine captures (${genuine.length}): same-face score lowest ${genuine[0]?.toFixed(3)}, then ${genuine.slice(1, 5).map((v) => v.toFixed(3)).join(', ')}; under ${cut}: ${genuine.filter((v) => v < cut).length}`);
  log(`  under each cut-off: ${SWEEP.map((cutoff) => `${cutoff.toFixed(2)}: ${genuine.filter((v) => v < cutoff).length}`).join(', ')}`);
  log(`face swaps (${swaps.length}): highest ${swaps.at(-1)?.toFixed(3)}; at or over ${cut}: ${swaps.filter((v) => v >= cut).length}`);
}

await main();
