/**
 * `npx tsx bench/face-accuracy.ts [--faces DIR] [--json] [--save FILE] [--min-score N]`: the face
 * match's error rates per demographic group, on identity-labelled photos of real people (issue 50).
 * --json prints one JSON document instead of the table; --save writes that document to FILE as
 * well (keep it outside the repository: it names the photos); --min-score sets both face
 * detectors' cut-offs instead of the engine's defaults (to measure the detector's misses);
 * --write-table FILE writes the rates at each threshold an organization may choose, per group, as
 * the TypeScript module the console shows beside the setting
 * (src/identities/biometrics/measured-thresholds.ts: counts only, no photo or name).
 *
 * DIR (default ../shared/faces beside the repository) holds LFW photos and labels/eval_set.json,
 * the 1,393 photos of the reference measurement with each person's group (black/other) and, for
 * Black people, tier (african/diaspora/mixed). The photos are read from there at run time only:
 * they are for evaluation, never to be copied into this repository. Without the folder the
 * script says so and exits 0; it downloads nothing.
 *
 * Every photo goes through the service's own pipeline (decodeForDetection, then FaceEngine's
 * detection, landmarks and descriptor), and every pair of photos whose faces were found is
 * compared with faceDistance: same person → genuine, different people → impostor, grouped as
 * Black–Black, other–other and cross-group (impostor only). Reported per group, with the pair
 * counts: FMR and FNMR at MATCH_THRESHOLD, the thresholds at FMR 0.1 % and 0.01 % and the FNMR
 * there, failure to acquire (per group, per tier, and who), and CPU per face.
 */
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_DETECTOR, FACE_MODEL, FaceEngine, type DetectorSettings, type FaceQuality } from '../src/identities/biometrics/face-engine.js';
import { decodeForDetection } from '../src/identities/biometrics/image.js';
import { faceDistance, MATCH_SCORE_BOUNDS, MATCH_THRESHOLD, scoreToDistance } from '../src/identities/biometrics/score.js';
import { labelledSet, type LabelledSet } from './lib/face-set.js';
import { atTargetFmr, enumeratePairs, mergePairs, nearestRank, ratesAt, type LabelledFace, type PairSet } from './lib/face-stats.js';

interface Described extends LabelledFace {
  path: string;
  tier: string | undefined;
  /** Process CPU (every thread: mostly the engine's worker) while the engine described the photo, ms. */
  cpuMs: number;
  wallMs: number;
  decodeCpuMs: number;
  /** The engine's quality readings and the face's width in the decoded image, when a face was found. */
  quality: (FaceQuality & { faceWidth: number }) | undefined;
}

const TARGET_FMRS = [0.001, 0.0001];
const GROUP_ORDER = ['black–black', 'other–other', 'cross', 'all'];

const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

async function describeAll(set: LabelledSet, detector: DetectorSettings, progress: (line: string) => void): Promise<Described[]> {
  const { entries } = set;
  const engine = new FaceEngine(detector);
  // The model's load is not a face's cost.
  await engine.warmUp();
  const described: Described[] = [];
  try {
    for (const [index, entry] of entries.entries()) {
      const bytes = await set.read(entry);
      const decodeStart = process.cpuUsage();
      const image = await decodeForDetection(bytes);
      const decodeCpuMs = cpuMsSince(decodeStart);
      const started = performance.now();
      const cpuStart = process.cpuUsage();
      const face = await engine.describe(image);
      const cpuMs = cpuMsSince(cpuStart);
      described.push({
        path: entry.path,
        id: entry.id,
        group: entry.group,
        tier: entry.tier,
        descriptor: face?.descriptor,
        quality: face ? { ...face.quality, faceWidth: face.box.width } : undefined,
        cpuMs,
        wallMs: performance.now() - started,
        decodeCpuMs,
      });
      if ((index + 1) % 100 === 0) progress(`described ${index + 1} of ${entries.length}`);
    }
  } finally {
    await engine.close();
  }
  return described;
}

function failureToAcquire(faces: readonly Described[], key: (face: Described) => string | undefined) {
  const counts = new Map<string, { photos: number; noFace: number }>();
  for (const face of faces) {
    const name = key(face);
    if (name === undefined) continue;
    const count = counts.get(name) ?? { photos: 0, noFace: 0 };
    count.photos++;
    if (!face.descriptor) count.noFace++;
    counts.set(name, count);
  }
  return Object.fromEntries([...counts].map(([name, { photos, noFace }]) => [name, { photos, noFace, rate: noFace / photos }]));
}

function groupReport(set: PairSet) {
  const atDefault = ratesAt(set.genuine, set.impostor, MATCH_THRESHOLD);
  const genuineAttempts = set.genuine.length + set.genuineUnacquired;
  return {
    atDefault: {
      ...atDefault,
      // ISO/IEC 19795's transaction view: a genuine pair with a photo in which no face was found is rejected too.
      fnmrWithUnacquired: genuineAttempts > 0 ? (atDefault.falseNonMatches + set.genuineUnacquired) / genuineAttempts : undefined,
    },
    genuineUnacquired: set.genuineUnacquired,
    impostorUnacquired: set.impostorUnacquired,
    atTargetFmr: TARGET_FMRS.map((target) => atTargetFmr(set.genuine, set.impostor, target)),
  };
}

/** The measured rates at every whole score an organization may set, as a TypeScript module. */
function thresholdTable(sets: Map<string, PairSet>, result: { photos: number; people: number; model: string; detector: DetectorSettings }): string {
  const rows = [];
  for (let score = MATCH_SCORE_BOUNDS.max; score >= MATCH_SCORE_BOUNDS.min; score--) {
    const distance = scoreToDistance(score);
    const groups = Object.fromEntries(
      ['black–black', 'other–other', 'cross'].map((key) => {
        const set = sets.get(key)!;
        const { genuinePairs, impostorPairs, falseMatches, falseNonMatches } = ratesAt(set.genuine, set.impostor, distance);
        return [key === 'black–black' ? 'blackBlack' : key === 'other–other' ? 'otherOther' : 'cross', { genuinePairs, impostorPairs, falseMatches, falseNonMatches }];
      }),
    );
    rows.push({ score, ...groups });
  }
  const measuredOn = new Date().toISOString().slice(0, 10);
  return `/**
 * Generated by \`npx tsx bench/face-accuracy.ts --write-table src/identities/biometrics/measured-thresholds.ts\`
 * on ${measuredOn}; do not edit by hand. The face match's errors at each threshold an organization may
 * set (a score out of 100; pairs at or above it match), per group, on ${result.photos.toLocaleString('en-GB')} labelled photos of ${result.people} people
 * (Labeled Faces in the Wild, docs/biometrics.md says which and their limits), model ${result.model},
 * detector cut-offs ${result.detector.tinyMinScore}/${result.detector.ssdMinConfidence}. Counts only: no photo or name.
 */
import type { MeasuredThreshold } from './score.js';

export const MEASURED_THRESHOLDS = {
  model: ${JSON.stringify(result.model)},
  measuredOn: ${JSON.stringify(measuredOn)},
  photos: ${result.photos},
  people: ${result.people},
  rows: ${JSON.stringify(rows, null, 2).replaceAll('\n', '\n  ')} as MeasuredThreshold[],
};
`;
}

const pct = (value: number | undefined, places = 2) => (value === undefined ? '–' : `${(value * 100).toFixed(places)} %`);
const count = (value: number) => value.toLocaleString('en-GB');
const fixed = (value: number | null | undefined, places = 3) => (value === null || value === undefined ? '–' : value.toFixed(places));

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { faces: { type: 'string' }, json: { type: 'boolean' }, save: { type: 'string' }, 'write-table': { type: 'string' }, 'min-score': { type: 'string' } } });
  const minScore = values['min-score'] === undefined ? undefined : Number(values['min-score']);
  if (minScore !== undefined && !(minScore > 0 && minScore < 1)) throw new Error('--min-score takes a number between 0 and 1');
  const detector: DetectorSettings = minScore === undefined ? DEFAULT_DETECTOR : { ...DEFAULT_DETECTOR, tinyMinScore: minScore, ssdMinConfidence: minScore };
  const set = await labelledSet('face-accuracy', values.faces);
  if (!set) return;
  const { dir, entries } = set;
  const log = (line: string) => {
    if (!values.json) process.stdout.write(`${line}\n`);
  };
  const started = Date.now();
  const faces = await describeAll(set, detector, (line) => process.stderr.write(`${line}\n`));
  const describeSeconds = (Date.now() - started) / 1000;

  const sets = enumeratePairs(faces, faceDistance);
  sets.set('all', mergePairs(sets.values()));
  const groups = Object.fromEntries(GROUP_ORDER.filter((key) => sets.has(key)).map((key) => [key, groupReport(sets.get(key)!)]));

  const noFace = faces.filter((face) => !face.descriptor);
  const people = new Map<string, { group: string; tier: string | undefined; photos: number; noFace: number }>();
  for (const face of faces) {
    const person = people.get(face.id) ?? { group: face.group, tier: face.tier, photos: 0, noFace: 0 };
    person.photos++;
    if (!face.descriptor) person.noFace++;
    people.set(face.id, person);
  }
  const qualityOf = (group: string) => {
    const found = faces.filter((face) => face.group === group && face.quality);
    const spread = (key: keyof NonNullable<Described['quality']>) => {
      const sorted = found.map((face) => face.quality![key]).sort((a, b) => a - b);
      return { p1: nearestRank(sorted, 0.01), p5: nearestRank(sorted, 0.05), p50: nearestRank(sorted, 0.5), p95: nearestRank(sorted, 0.95), p99: nearestRank(sorted, 0.99) };
    };
    return { photos: found.length, brightness: spread('brightness'), sharpness: spread('sharpness'), eyeOpenness: spread('eyeOpenness'), faceWidth: spread('faceWidth') };
  };
  const sortedCpu = faces.map((face) => face.cpuMs).sort((a, b) => a - b);
  const sortedWall = faces.map((face) => face.wallMs).sort((a, b) => a - b);
  const sortedDecode = faces.map((face) => face.decodeCpuMs).sort((a, b) => a - b);
  const result = {
    faces: dir,
    set: 'labels/eval_set.json',
    photos: faces.length,
    people: people.size,
    model: FACE_MODEL,
    detector,
    matchThreshold: MATCH_THRESHOLD,
    machine: { cpus: os.availableParallelism(), cpu: os.cpus()[0]?.model, node: process.version },
    describeSeconds,
    groups,
    failureToAcquire: {
      byGroup: failureToAcquire(faces, (face) => face.group),
      byTier: failureToAcquire(faces, (face) => (face.group === 'black' ? face.tier : undefined)),
      people: [...people]
        .filter(([, person]) => person.noFace > 0)
        .map(([id, person]) => ({ id, ...person, paths: noFace.filter((face) => face.id === id).map((face) => face.path) })),
    },
    quality: { black: qualityOf('black'), other: qualityOf('other') },
    cpuPerFace: {
      measure: 'process.cpuUsage() over FaceEngine.describe (every thread of the process, in practice the engine worker: detection, landmarks, descriptor); decoding apart',
      engineMs: { median: nearestRank(sortedCpu, 0.5), p95: nearestRank(sortedCpu, 0.95) },
      wallMs: { median: nearestRank(sortedWall, 0.5), p95: nearestRank(sortedWall, 0.95) },
      decodeMs: { median: nearestRank(sortedDecode, 0.5), p95: nearestRank(sortedDecode, 0.95) },
    },
  };
  if (values['write-table']) await writeFile(values['write-table'], thresholdTable(sets, result));
  if (values.save) await writeFile(values.save, `${JSON.stringify(result, null, 2)}\n`);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }

  log(`${count(result.photos)} photos of ${result.people} people (${result.set}), described in ${describeSeconds.toFixed(0)} s; model ${FACE_MODEL}, threshold ${MATCH_THRESHOLD} (cosine distance), detector cut-offs ${detector.tinyMinScore}/${detector.ssdMinConfidence}`);
  log('');
  const at = String(MATCH_THRESHOLD).padEnd(4);
  log(`pairs         | genuine | impostor  | FMR at ${at} (false matches) | FNMR at ${at} | FNMR incl. no face | FMR 0.1 %: threshold → FNMR | FMR 0.01 %: threshold → FNMR`);
  log('--------------|---------|-----------|-----------------------------|--------------|--------------------|-----------------------------|-----------------------------');
  for (const [key, group] of Object.entries(groups)) {
    const d = group.atDefault;
    const points = group.atTargetFmr.map((p) => `${p.threshold === null ? `< ${fixed(p.firstRejected)}` : fixed(p.threshold)} (${p.falseMatches}) → ${pct(p.fnmr, 1)}`.padEnd(27));
    log(
      `${key.padEnd(13)} | ${count(d.genuinePairs).padStart(7)} | ${count(d.impostorPairs).padStart(9)} | ${`${pct(d.fmr, 4)} (${d.falseMatches})`.padEnd(27)} | ${pct(d.fnmr, 1).padStart(12)} | ${pct(d.fnmrWithUnacquired, 1).padStart(18)} | ${points.join(' | ')}`,
    );
  }
  log('(a threshold is the largest distance still matched; in brackets the false matches it lets through)');
  log('');
  log('no face found (failure to acquire):');
  for (const [name, fta] of [...Object.entries(result.failureToAcquire.byGroup), ...Object.entries(result.failureToAcquire.byTier).map(([tier, fta]) => [`black, ${tier}`, fta] as const)]) {
    log(`  ${name.padEnd(16)} ${String(fta.noFace).padStart(3)} of ${String(fta.photos).padStart(4)} photos (${pct(fta.rate, 1)})`);
  }
  for (const person of result.failureToAcquire.people) {
    log(`  ${person.id.replaceAll('_', ' ')} (${person.group}${person.tier ? `, ${person.tier}` : ''}): ${person.noFace} of ${person.photos}`);
  }
  log('');
  log('quality readings of the faces found (p1 / p5 / p50 / p95 / p99):');
  for (const [group, q] of Object.entries(result.quality)) {
    const row = (spread: Record<string, number | undefined>) => Object.values(spread).map((v) => fixed(v, 2)).join(' / ');
    log(`  ${group} (${q.photos} photos): brightness ${row(q.brightness)}; sharpness ${row(q.sharpness)}; eye openness ${row(q.eyeOpenness)}; face width px ${row(q.faceWidth)}`);
  }
  log('');
  const { engineMs, wallMs, decodeMs } = result.cpuPerFace;
  log(`CPU per face (process CPU over FaceEngine.describe): median ${fixed(engineMs.median, 1)} ms, p95 ${fixed(engineMs.p95, 1)} ms`);
  log(`  wall per face median ${fixed(wallMs.median, 1)} ms, p95 ${fixed(wallMs.p95, 1)} ms; decoding (sharp) CPU median ${fixed(decodeMs.median, 1)} ms, p95 ${fixed(decodeMs.p95, 1)} ms`);
  log(`  machine: ${result.machine.cpus} CPUs, ${result.machine.cpu}, Node ${result.machine.node}`);
}

await main();
