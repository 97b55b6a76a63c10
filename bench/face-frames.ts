/**
 * `npx tsx bench/face-frames.ts [--faces DIR] [--frames N] [--json]`: what comparing several frames
 * instead of one does to the face match (issue 50, part 4), per group, on labelled photos.
 *
 * A session holds a few frames of a live face looking at the camera; LFW holds one photo per
 * moment. So each photo stands in for a capture: N frame-like variants of it (a little shifted,
 * scaled, rotated, lighter or darker, softer, recompressed, as consecutive video frames differ)
 * are described, and the other photos of the set (as they are) stand in for registry photos. For
 * each pair (registry photo A, capture of photo B) three rules are compared at the service's
 * threshold: one frame (the first variant), the best of the N frames (smallest distance), and the
 * fused descriptor of the frames that pass the quality gate (quality.ts). Also reported: how many
 * frames and photos the quality gate turns away, per group.
 *
 * What this does not measure: real consecutive frames (motion blur, a moving head, a phone's
 * camera and compression) and real registry photos; the variants are gentler than both.
 */
import { parseArgs } from 'node:util';
import sharp, { type Sharp } from 'sharp';
import { FaceEngine, type Face } from '../src/identities/biometrics/face-engine.js';
import { decodeForDetection } from '../src/identities/biometrics/image.js';
import { fuseDescriptors, qualityProblems, type QualityProblem } from '../src/identities/biometrics/quality.js';
import { faceDistance, MATCH_THRESHOLD } from '../src/identities/biometrics/score.js';
import { labelledSet } from './lib/face-set.js';
import { pairGroup } from './lib/face-stats.js';

/** Frame-like changes of one photo: the first is the photo itself. */
const VARIANTS: ((image: Sharp, width: number) => Sharp)[] = [
  (image) => image,
  (image, width) => image.extract({ left: 6, top: 4, width: width - 10, height: width - 10 }).resize(width, width),
  (image) => image.rotate(4, { background: '#808080' }).modulate({ brightness: 0.85 }),
  (image) => image.blur(0.8).modulate({ brightness: 1.1 }),
  (image, width) => image.resize(Math.round(width * 0.8)).jpeg({ quality: 60 }),
  (image) => image.rotate(-3, { background: '#808080' }).sharpen(),
];

interface Capture {
  id: string;
  group: string;
  /** The photo as it is: the registry side. */
  photo: Float32Array | undefined;
  frames: Face[];
  problems: QualityProblem[][];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { faces: { type: 'string' }, frames: { type: 'string' }, json: { type: 'boolean' } } });
  const set = await labelledSet('face-frames', values.faces);
  if (!set) return;
  const frameCount = Number(values.frames ?? 4);
  if (!Number.isInteger(frameCount) || frameCount < 2 || frameCount > VARIANTS.length) throw new Error(`--frames takes 2 to ${VARIANTS.length}`);
  const { entries } = set;
  const engine = new FaceEngine();
  await engine.warmUp();
  const captures: Capture[] = [];
  try {
    for (const [index, entry] of entries.entries()) {
      const bytes = await set.read(entry);
      const { width = 250 } = await sharp(bytes).metadata();
      const frames: Face[] = [];
      let photo: Float32Array | undefined;
      for (const [v, variant] of VARIANTS.slice(0, frameCount).entries()) {
        const jpeg = await variant(sharp(bytes), width).jpeg({ quality: 85 }).toBuffer();
        const face = await engine.describe(await decodeForDetection(jpeg));
        if (v === 0) photo = face?.descriptor;
        if (face) frames.push(face);
      }
      captures.push({ id: entry.id, group: entry.group, photo, frames, problems: frames.map((face) => qualityProblems(face)) });
      if ((index + 1) % 100 === 0) process.stderr.write(`face-frames: ${index + 1} of ${entries.length} photos\n`);
    }
  } finally {
    await engine.close();
  }

  interface Tally {
    genuine: number;
    rejected: number;
    impostor: number;
    falseMatches: number;
  }
  const best = `best of ${frameCount}`;
  const rules = ['one frame', best, 'fused, gated'] as const;
  const probe = (capture: Capture) => {
    const passing = capture.frames.filter((_, i) => capture.problems[i]!.length === 0).map((face) => face.descriptor);
    return {
      'one frame': capture.frames[0]?.descriptor,
      all: capture.frames.map((face) => face.descriptor),
      fused: passing.length > 0 ? fuseDescriptors(passing) : undefined,
    };
  };
  const tallies = new Map<string, Record<string, Tally>>();
  const probes = captures.map(probe);
  for (let a = 0; a < captures.length; a++) {
    const held = captures[a]!.photo;
    if (!held) continue;
    for (let b = 0; b < captures.length; b++) {
      if (a === b) continue;
      const key = pairGroup(captures[a]!.group, captures[b]!.group);
      const genuine = captures[a]!.id === captures[b]!.id;
      const tally = tallies.get(key) ?? Object.fromEntries(rules.map((rule) => [rule, { genuine: 0, rejected: 0, impostor: 0, falseMatches: 0 }]));
      tallies.set(key, tally);
      const p = probes[b]!;
      const distances: Record<string, number> = {
        'one frame': p['one frame'] ? faceDistance(held, p['one frame']) : Infinity,
        [best]: p.all.length > 0 ? Math.min(...p.all.map((d) => faceDistance(held, d))) : Infinity,
        'fused, gated': p.fused ? faceDistance(held, p.fused) : Infinity,
      };
      for (const rule of rules) {
        const t = tally[rule]!;
        const match = distances[rule]! <= MATCH_THRESHOLD;
        if (genuine) {
          t.genuine++;
          if (!match) t.rejected++;
        } else {
          t.impostor++;
          if (match) t.falseMatches++;
        }
      }
    }
  }
  const gate = Object.fromEntries(
    ['black', 'other'].map((group) => {
      const ofGroup = captures.filter((capture) => capture.group === group);
      const frames = ofGroup.flatMap((capture) => capture.problems);
      const byProblem: Record<string, number> = {};
      for (const problems of frames) for (const problem of problems) byProblem[problem] = (byProblem[problem] ?? 0) + 1;
      const photosWithoutGoodFrame = ofGroup.filter((capture) => capture.frames.length > 0 && capture.problems.every((p) => p.length > 0)).length;
      const originalsTurnedAway = ofGroup.filter((capture) => capture.problems[0] && capture.problems[0].length > 0).length;
      return [group, { photos: ofGroup.length, frames: frames.length, framesTurnedAway: frames.filter((p) => p.length > 0).length, byProblem, originalsTurnedAway, photosWithoutGoodFrame }];
    }),
  );
  const result = { frames: frameCount, threshold: MATCH_THRESHOLD, groups: Object.fromEntries(tallies), gate };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const pct = (n: number, of: number, places: number) => (of > 0 ? `${((n / of) * 100).toFixed(places)} %` : '–');
  process.stdout.write(`${captures.length} photos, ${frameCount} frame-like variants each; registry side: the other photos as they are; threshold ${MATCH_THRESHOLD}\n\n`);
  process.stdout.write('pairs         | rule          | genuine | rejected           | impostor  | false matches\n');
  for (const [key, tally] of tallies) {
    for (const rule of rules) {
      const t = tally[rule]!;
      process.stdout.write(`${key.padEnd(13)} | ${rule.padEnd(13)} | ${String(t.genuine).padStart(7)} | ${`${pct(t.rejected, t.genuine, 2)} (${t.rejected})`.padEnd(18)} | ${String(t.impostor).padStart(9)} | ${pct(t.falseMatches, t.impostor, 4)} (${t.falseMatches})\n`);
    }
  }
  process.stdout.write('\nquality gate:\n');
  for (const [group, g] of Object.entries(gate)) {
    process.stdout.write(`  ${group}: ${g.framesTurnedAway} of ${g.frames} frames turned away (${pct(g.framesTurnedAway, g.frames, 1)}) ${JSON.stringify(g.byProblem)}; the photo itself turned away for ${g.originalsTurnedAway} of ${g.photos}; no good frame at all for ${g.photosWithoutGoodFrame}\n`);
  }
}

await main();
