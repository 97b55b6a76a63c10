import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_DETECTOR, FaceEngine } from '../../src/identities/biometrics/face-engine.js';
import { decodeForDetection } from '../../src/identities/biometrics/image.js';
import { MEASURED_THRESHOLDS } from '../../src/identities/biometrics/measured-thresholds.js';
import { ONNX_MODELS, modelsDir, verifiedModelPath } from '../../src/identities/biometrics/models.js';
import { FaceMatcher } from '../../src/identities/biometrics/matcher.js';
import { DEFAULT_QUALITY_LIMITS, fuseDescriptors, qualityProblems } from '../../src/identities/biometrics/quality.js';
import { faceCrop, samplePath, samplePortraitBase64, type SampleFace } from '../../src/identities/biometrics/samples.js';
import { distanceToScore, faceDistance, MATCH_SCORE_BOUNDS, MATCH_THRESHOLD, photoMatching, scoreToDistance } from '../../src/identities/biometrics/score.js';

// Faces in face-api's demo photos (the repository's own samples; never the evaluation data).
const FACES: Record<string, SampleFace> = {
  three: { sample: 3, box: { x: 1075, y: 215, width: 220, height: 299 } },
  four: { sample: 4, box: { x: 664, y: 53, width: 187, height: 258 } },
  six: { sample: 6, box: { x: 250, y: 468, width: 210, height: 291 } },
};

/** The face cropped `widthFaces` face-widths wide, as a 300 px JPEG. */
async function crop(face: SampleFace, widthFaces: number, options: { mirror?: boolean } = {}): Promise<Buffer> {
  const image = sharp(samplePath(face.sample)).extract(await faceCrop(face, widthFaces)).resize(300);
  return (options.mirror ? image.flop() : image).jpeg({ quality: 85 }).toBuffer();
}

const engine = new FaceEngine();
afterAll(() => engine.close());

const describeJpeg = async (jpeg: Buffer) => engine.describe(await decodeForDetection(jpeg));

describe('the face engine', () => {
  it('finds a face that fills the frame, as a registry portrait or a close selfie does (the large input sizes alone miss these)', async () => {
    expect(DEFAULT_DETECTOR.tinyInputSizes).toEqual(expect.arrayContaining([160, 128]));
    for (const face of [FACES.three!, FACES.four!]) {
      const found = await describeJpeg(await crop(face, 1.0));
      expect(found, `sample ${face.sample}`).toBeDefined();
    }
  });

  it('describes a face with 512 numbers of length 1, and the same person in another crop, mirrored, stays within the threshold', async () => {
    const a = (await describeJpeg(await crop(FACES.six!, 1.6)))!;
    const b = (await describeJpeg(await crop(FACES.six!, 2.2, { mirror: true })))!;
    expect(a.descriptor).toHaveLength(512);
    const length = Math.hypot(...a.descriptor);
    expect(length).toBeCloseTo(1, 4);
    expect(faceDistance(a.descriptor, b.descriptor)).toBeLessThan(MATCH_THRESHOLD);
    // Two different people are far apart.
    const other = (await describeJpeg(await crop(FACES.three!, 1.6)))!;
    expect(faceDistance(a.descriptor, other.descriptor)).toBeGreaterThan(MATCH_THRESHOLD);
  });

  it('finds no face in a plain image', async () => {
    const grey = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#808080' } }).jpeg().toBuffer();
    expect(await describeJpeg(grey)).toBeUndefined();
  });
});

describe('the score', () => {
  it('is the cosine similarity out of 100, and the threshold a distance', () => {
    const unit = (values: number[]) => Float32Array.from(values.map((v) => v / Math.hypot(...values)));
    expect(faceDistance(unit([1, 0]), unit([1, 0]))).toBeCloseTo(0, 6);
    expect(faceDistance(unit([1, 0]), unit([0, 1]))).toBeCloseTo(1, 6);
    expect(distanceToScore(0.25)).toBe(75);
    expect(distanceToScore(1.5)).toBe(0);
    expect(scoreToDistance(42)).toBe(0.58);
    expect(distanceToScore(MATCH_THRESHOLD)).toBe(43);
    // cos = 0.5 → distance 0.5 → score 50: a match at the default, not at a threshold of 51.
    const a = unit([1, 0]);
    const b = unit([0.5, Math.sqrt(3) / 2]);
    expect(photoMatching(a, b)).toEqual({ match: true, matchScore: 50, matchingThreshold: 43, maxScore: 100 });
    expect(photoMatching(a, b, scoreToDistance(51))).toMatchObject({ match: false, matchingThreshold: 51 });
    // At the threshold as shown: a distance a hair past 0.57 scores 43.0 and is a match, as its answer says.
    const justPast = unit([1 - 0.5702, Math.sqrt(1 - (1 - 0.5702) ** 2)]);
    expect(photoMatching(a, justPast)).toEqual({ match: true, matchScore: 43, matchingThreshold: 43, maxScore: 100 });
    expect(photoMatching(a, unit([1 - 0.5706, Math.sqrt(1 - (1 - 0.5706) ** 2)]))).toMatchObject({ match: false, matchScore: 42.9 });
  });

  it('has a measured row for every threshold an organization may set, the default among them, with false matches between two Black people at most 0.1 % there', () => {
    const scores = MEASURED_THRESHOLDS.rows.map((row) => row.score);
    const expected = Array.from({ length: MATCH_SCORE_BOUNDS.max - MATCH_SCORE_BOUNDS.min + 1 }, (_, i) => MATCH_SCORE_BOUNDS.max - i);
    expect(scores).toEqual(expected);
    const atDefault = MEASURED_THRESHOLDS.rows.find((row) => row.score === distanceToScore(MATCH_THRESHOLD))!;
    expect(atDefault.blackBlack.impostorPairs).toBeGreaterThan(50_000);
    expect(atDefault.blackBlack.falseMatches / atDefault.blackBlack.impostorPairs).toBeLessThanOrEqual(0.001);
    expect(atDefault.blackBlack.falseNonMatches / atDefault.blackBlack.genuinePairs).toBeLessThanOrEqual(0.2);
  });
});

describe('the models in models/', () => {
  it('are the files measured, checked by SHA-256 at load', () => {
    for (const [name, model] of Object.entries(ONNX_MODELS)) {
      const file = verifiedModelPath(name as keyof typeof ONNX_MODELS);
      expect(createHash('sha256').update(readFileSync(file)).digest('hex')).toBe(model.sha256);
      expect(path.relative(modelsDir(), file)).toBe(model.file);
    }
  });
});

describe('the quality gate and several frames', () => {
  const six = FACES.six!;
  const frame = async (make: (image: Sharp) => Sharp) => decodeForDetection(await make(sharp(samplePath(six.sample)).extract(await faceCrop(six, 2.2)).resize(480)).jpeg().toBuffer());
  const problemsOf = async (make: (image: Sharp) => Sharp) => {
    const face = await engine.describe(await frame(make));
    return face ? qualityProblems(face) : ['no_face'];
  };

  it('passes a clear face and names what is wrong with a dark, washed-out, blurred or distant one', async () => {
    expect(await problemsOf((image) => image)).toEqual([]);
    expect(await problemsOf((image) => image.linear(0.16, 0))).toEqual(['too_dark']);
    expect(await problemsOf((image) => image.linear(2.2, 60))).toEqual(['too_bright']);
    expect(await problemsOf((image) => image.blur(8))).toEqual(['blurred']);
    expect(await problemsOf((image) => image.resize(88).extend({ top: 200, bottom: 200, left: 200, right: 200, background: '#808080' }))).toContain('too_small');
  });

  it('judges from the readings, against limits', () => {
    const face = { box: { x: 0, y: 0, width: 120, height: 150 }, quality: { brightness: 100, sharpness: 200, eyeOpenness: 0.3 } };
    expect(qualityProblems(face)).toEqual([]);
    expect(qualityProblems({ ...face, quality: { ...face.quality, eyeOpenness: 0.05 } })).toEqual(['eyes_closed']);
    expect(qualityProblems({ ...face, box: { ...face.box, width: 30 } }, { ...DEFAULT_QUALITY_LIMITS, minFaceWidth: 31 })).toEqual(['too_small']);
  });

  it('fuses descriptors into one of length 1, their mean direction', () => {
    const fused = fuseDescriptors([Float32Array.from([1, 0, 0]), Float32Array.from([0, 1, 0])]);
    expect(Array.from(fused).map((v) => Number(v.toFixed(4)))).toEqual([0.7071, 0.7071, 0]);
    expect(() => fuseDescriptors([])).toThrow();
  });

  it('matchFrames compares the fused good frames once, and asks for a retake when no frame is good enough', { timeout: 180_000 }, async () => {
    const matcher = new FaceMatcher(engine);
    const held = { mode: 'test' as const, idType: 'nin' as const, idNumber: '10000000001', photo: await samplePortraitBase64(six) };
    const good = await frame((image) => image);
    const blurred = await frame((image) => image.blur(8));
    const dark = await frame((image) => image.linear(0.16, 0));
    const both = await matcher.matchFrames(held, [good, blurred, await frame((image) => image.modulate({ brightness: 1.1 }))]);
    expect(both.framesUsed).toBe(2);
    expect(both.matching).toMatchObject({ match: true, matchingThreshold: 43 });
    // Each decoded frame goes to the engine's thread once (its pixels are handed over): new ones.
    const blurredAgain = await frame((image) => image.blur(8));
    expect(await matcher.matchFrames(held, [blurredAgain, dark, await frame((image) => image.linear(0.17, 0))])).toEqual({ retake: ['too_dark', 'blurred'], framesUsed: 0 });
    // Another person's good frames: compared, and no match.
    const other = await decodeForDetection(await crop(FACES.three!, 2.2));
    expect((await matcher.matchFrames(held, [other])).matching).toMatchObject({ match: false });
  });
});
