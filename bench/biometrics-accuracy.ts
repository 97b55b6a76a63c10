/**
 * `npx tsx bench/biometrics-accuracy.ts [--json]`: how often the face match errs, measured on the
 * only real faces reachable here, the 22 people in the face-api package's demo photos.
 *
 * Each person is enrolled as a registry would hold them (the 160×200 JPEG the sandbox uses) and
 * probed with selfie-like variants of their own photo: resized, mirrored, recompressed, brighter,
 * darker, blurred, rotated, cropped tighter and wider. Every probe is compared with every
 * enrolled person through the service's own pipeline (decodeForDetection + FaceEngine + score):
 * same person → genuine pair, anyone else → impostor pair. Prints the false-match rate (FMR),
 * false-non-match rate (FNMR) and failure-to-acquire rate at the service's threshold, and both
 * rates over a range of thresholds (how the threshold was chosen in November 2026).
 *
 * Its genuine pairs are copies of one photo and none of its people is African: the service's error
 * rates are bench/face-accuracy.ts's, per group on labelled photos (docs/biometrics.md). This
 * script stays as `npm run bench -- biometrics`'s check that a change leaves its figures unchanged.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import sharp, { type Region, type Sharp } from 'sharp';
import { FaceEngine, type Face } from '../src/identities/biometrics/face-engine.js';
import { decodeForDetection } from '../src/identities/biometrics/image.js';
import { faceCrop, samplePath, samplePortraitBase64, type Box, type SampleFace, type SampleNumber } from '../src/identities/biometrics/samples.js';
import { distanceToScore, faceDistance, MATCH_THRESHOLD } from '../src/identities/biometrics/score.js';
import { quantile } from './lib/report.js';

interface Variant {
  name: string;
  /** From the face's head-and-shoulders crop to the probe's bytes. */
  make(crop: Sharp): Sharp;
  widthFaces: number;
  shiftX?: number;
  flop?: boolean;
  rotate?: number;
}

const VARIANTS: Variant[] = [
  { name: 'selfie 640 px', widthFaces: 2.5, make: (s) => s.resize(640, 640, { fit: 'inside' }).jpeg({ quality: 90 }) },
  { name: 'small 200 px', widthFaces: 2.5, make: (s) => s.resize(200, 200, { fit: 'inside' }).jpeg({ quality: 85 }) },
  { name: 'mirrored', widthFaces: 2.5, flop: true, make: (s) => s.flop().resize(640, 640, { fit: 'inside' }).jpeg({ quality: 90 }) },
  { name: 'recompressed q25', widthFaces: 2.5, make: (s) => s.resize(480, 480, { fit: 'inside' }).jpeg({ quality: 25 }) },
  { name: 'brighter ×1.4', widthFaces: 2.5, make: (s) => s.modulate({ brightness: 1.4 }).resize(640, 640, { fit: 'inside' }).jpeg({ quality: 90 }) },
  { name: 'darker ×0.6', widthFaces: 2.5, make: (s) => s.modulate({ brightness: 0.6 }).resize(640, 640, { fit: 'inside' }).jpeg({ quality: 90 }) },
  { name: 'blurred σ1.5', widthFaces: 2.5, make: (s) => s.resize(640, 640, { fit: 'inside' }).blur(1.5).jpeg({ quality: 90 }) },
  { name: 'rotated 10°', widthFaces: 2.5, rotate: 10, make: (s) => s.rotate(10, { background: '#808080' }).resize(640, 640, { fit: 'inside' }).jpeg({ quality: 90 }) },
  { name: 'tight crop, off-centre', widthFaces: 1.5, shiftX: 0.15, make: (s) => s.resize(640, 640, { fit: 'inside' }).png() },
  { name: 'wide crop', widthFaces: 4, make: (s) => s.resize(640, 640, { fit: 'inside' }).webp({ quality: 80 }) },
];

const THRESHOLD_SWEEP = [0.35, 0.4, 0.42, 0.45, 0.48, 0.5, 0.55, 0.6];

const require = createRequire(import.meta.url);

/** Every face in the six photos, found once at full size by SSD MobileNet (in this process). */
async function findSampleFaces(): Promise<SampleFace[]> {
  const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js') as typeof import('@vladmandic/face-api');
  const tf = faceapi.tf as unknown as typeof import('@tensorflow/tfjs');
  await tf.setBackend('wasm');
  await tf.ready();
  const modelDir = require.resolve('@vladmandic/face-api/model/ssd_mobilenetv1_model-weights_manifest.json').replace(/\/[^/]+$/, '');
  await faceapi.nets.ssdMobilenetv1.loadFromDisk(modelDir);
  const faces: SampleFace[] = [];
  for (const sample of [1, 2, 3, 4, 5, 6] as SampleNumber[]) {
    const { data, info } = await sharp(samplePath(sample)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const input = tf.tensor3d(new Uint8Array(data), [info.height, info.width, 3], 'int32');
    const detections = await faceapi.detectAllFaces(input as never, new faceapi.SsdMobilenetv1Options({ minConfidence: 0.3 }));
    input.dispose();
    for (const detection of detections.sort((a, b) => a.box.x - b.box.x)) {
      const { x, y, width, height } = detection.box;
      faces.push({ sample, box: { x: Math.round(x), y: Math.round(y), width: Math.round(width), height: Math.round(height) } });
    }
  }
  return faces;
}

/** Where the face's centre lands in the probe (after crop, mirror, rotation and resize). */
function expectedCentre(face: SampleFace, region: Region, variant: Variant, probe: { width: number; height: number }) {
  let x = face.box.x + face.box.width / 2 - region.left;
  let y = face.box.y + face.box.height / 2 - region.top;
  let width = region.width;
  let height = region.height;
  if (variant.flop) x = width - x;
  if (variant.rotate) {
    const angle = (variant.rotate * Math.PI) / 180;
    const [cx, cy] = [x - width / 2, y - height / 2];
    const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
    const rotatedWidth = Math.abs(width * cos) + Math.abs(height * sin);
    const rotatedHeight = Math.abs(width * sin) + Math.abs(height * cos);
    x = cx * cos - cy * sin + rotatedWidth / 2;
    y = cx * sin + cy * cos + rotatedHeight / 2;
    [width, height] = [rotatedWidth, rotatedHeight];
  }
  return { x: (x * probe.width) / width, y: (y * probe.height) / height };
}

function contains(box: Box, point: { x: number; y: number }): boolean {
  return point.x >= box.x && point.x <= box.x + box.width && point.y >= box.y && point.y <= box.y + box.height;
}

interface Probe {
  person: number;
  variant: string;
  face: Face | undefined;
  /** False when no face was found, or the largest face found is someone else's. */
  acquired: boolean;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'boolean' } } });
  const log = (line: string) => {
    if (!values.json) process.stdout.write(`${line}\n`);
  };
  const faces = await findSampleFaces();
  const engine = new FaceEngine();
  const enrolled: (Face | undefined)[] = [];
  const probes: Probe[] = [];
  for (const [person, face] of faces.entries()) {
    const portrait = Buffer.from(await samplePortraitBase64(face), 'base64');
    enrolled.push(await engine.describe(await decodeForDetection(portrait)));
    for (const variant of VARIANTS) {
      const region = await faceCrop(face, variant.widthFaces, variant.shiftX ?? 0);
      // Cropped first, on its own: sharp would otherwise rotate before it extracts.
      const crop = await sharp(samplePath(face.sample)).extract(region).png({ compressionLevel: 0 }).toBuffer();
      const bytes = await variant.make(sharp(crop)).toBuffer();
      const image = await decodeForDetection(bytes);
      const found = await engine.describe(image);
      const centre = expectedCentre(face, region, variant, image);
      probes.push({ person, variant: variant.name, face: found, acquired: !!found && contains(found.box, centre) });
    }
  }
  await engine.close();

  const genuine: number[] = [];
  const impostor: number[] = [];
  for (const probe of probes) {
    if (!probe.acquired || !probe.face) continue;
    for (const [person, reference] of enrolled.entries()) {
      if (!reference) continue;
      (person === probe.person ? genuine : impostor).push(faceDistance(reference.descriptor, probe.face.descriptor));
    }
  }
  const rates = (threshold: number) => ({
    threshold,
    score: distanceToScore(threshold),
    fmr: impostor.filter((d) => d <= threshold).length / impostor.length,
    fnmr: genuine.filter((d) => d > threshold).length / genuine.length,
  });
  const failedToAcquire = probes.filter((probe) => !probe.acquired);
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const result = {
    people: faces.length,
    enrolledWithoutFace: enrolled.filter((face) => !face).length,
    probes: probes.length,
    failedToAcquire: failedToAcquire.length,
    failedToAcquireDetail: failedToAcquire.map((probe) => `person ${probe.person} ${probe.variant}${probe.face ? ' (another face)' : ' (no face)'}`),
    genuinePairs: genuine.length,
    impostorPairs: impostor.length,
    genuineDistance: { max: sorted(genuine).at(-1), p95: quantile(sorted(genuine), 0.95) },
    impostorDistance: { min: sorted(impostor)[0], p1: quantile(sorted(impostor), 0.01) },
    atThreshold: rates(MATCH_THRESHOLD),
    sweep: THRESHOLD_SWEEP.map(rates),
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  log(`${result.people} people, ${result.probes} probes, ${result.genuinePairs} genuine and ${result.impostorPairs} impostor pairs`);
  log(`enrolment portraits without a face found: ${result.enrolledWithoutFace} (their probes count as impostors only)`);
  log(`failed to acquire: ${result.failedToAcquire} (${result.failedToAcquireDetail.join('; ') || 'none'})`);
  log(`genuine distance max ${result.genuineDistance.max?.toFixed(3)}, p95 ${result.genuineDistance.p95?.toFixed(3)}`);
  log(`impostor distance min ${result.impostorDistance.min?.toFixed(3)}, p1 ${result.impostorDistance.p1?.toFixed(3)}`);
  log('distance  score   FMR       FNMR');
  for (const row of result.sweep) {
    const mark = row.threshold === MATCH_THRESHOLD ? '  <- service threshold' : '';
    log(`${row.threshold.toFixed(2).padEnd(9)} ${String(row.score).padEnd(7)} ${(row.fmr * 100).toFixed(2).padStart(6)} %  ${(row.fnmr * 100).toFixed(2).padStart(6)} %${mark}`);
  }
}

await main();
