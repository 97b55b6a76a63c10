import sharp, { type OverlayOptions } from 'sharp';
import { faceCrop, samplePath, TEST_IDENTITY_FACES } from '../../src/identities/biometrics/samples.js';
import type { Challenge, LivenessFrame, LivenessReason } from '../../src/identities/liveness/engine.js';
import { LIVENESS_CAPTURE } from '../../src/identities/liveness/settings.js';
import { allChallengeOrders, fixtureFrames, fixturePath, loopCapture } from './genuine.js';

/**
 * The attack set (docs/liveness.md): each attack is built from images the project ships or has in
 * node_modules, and must fail with the reason given. Other people's faces are face-api's demo
 * photos, as in the face-match tests.
 */
export interface AttackAttempt {
  attack: AttackKind;
  name: string;
  challenges: Challenge[];
  frames: LivenessFrame[];
  /** The reason the attempt must fail with (others may come with it). */
  expected: LivenessReason;
}

export type AttackKind = 'still-photo' | 'registry-photo' | 'warped-photo' | 'replayed-frames' | 'face-swap';

const WIDTH = 480;
const HEIGHT = 360;
const interval = LIVENESS_CAPTURE.frameIntervalMs;
const timed = (jpegs: Buffer[]): LivenessFrame[] => jpegs.map((jpeg, i) => ({ atMs: i * interval, jpeg }));

/** A hand holding a picture shakes: shifts of a few pixels and a fraction of a degree, fixed per frame. */
const SHAKE = [[0, 0, 0], [2, 1, 0.4], [3, -1, 0.8], [1, -2, 0.3], [-1, -1, -0.3], [-2, 1, -0.6], [-1, 2, -0.2], [1, 1, 0.2]] as const;

async function shaken(picture: Buffer, frame: number): Promise<Buffer> {
  const [dx, dy, degrees] = SHAKE[frame % SHAKE.length]!;
  const turned = await sharp(picture).resize(WIDTH + 24, HEIGHT + 18).rotate(degrees, { background: '#7a7a78' }).toBuffer();
  const { width = 0, height = 0 } = await sharp(turned).metadata();
  return sharp(turned)
    .extract({ left: Math.round((width - WIDTH) / 2) + dx, top: Math.round((height - HEIGHT) / 2) + dy, width: WIDTH, height: HEIGHT })
    .jpeg({ quality: 85 })
    .toBuffer();
}

/** The registry photo held up to the camera: the 240×300 portrait in the middle of a grey wall. */
async function registryPhotoScene(): Promise<Buffer> {
  const portrait = await sharp(fixturePath('genuine-registry.jpg')).resize(216, 270).toBuffer();
  return sharp({ create: { width: WIDTH, height: HEIGHT, channels: 3, background: '#8a8780' } })
    .composite([{ input: portrait, left: 132, top: 45 }])
    .jpeg({ quality: 90 })
    .toBuffer();
}

/**
 * A 2-D imitation of a head movement from one frontal photo: a turn is the picture narrowed and
 * one side shortened (a card turned on its vertical axis), looking up is the picture squeezed
 * from the top and tilted back (the same card on its horizontal axis).
 */
async function warped(picture: Buffer, kind: 'left' | 'right' | 'up' | 'none', strength: number): Promise<Buffer> {
  const base = await sharp(picture).resize(WIDTH, HEIGHT, { fit: 'fill' }).raw().toBuffer({ resolveWithObject: true });
  const background = { r: 122, g: 122, b: 120 };
  if (kind === 'none') return sharp(base.data, { raw: base.info }).jpeg({ quality: 85 }).toBuffer();
  const strips = 24;
  const composites: OverlayOptions[] = [];
  if (kind === 'up') {
    const height = Math.round(HEIGHT * (1 - 0.25 * strength));
    for (let i = 0; i < strips; i++) {
      const top = Math.floor((i * height) / strips);
      const stripHeight = Math.max(1, Math.floor(((i + 1) * height) / strips) - top);
      const widthHere = Math.round(WIDTH * (1 - 0.2 * strength * (1 - i / strips)));
      const source = await sharp(base.data, { raw: base.info }).extract({ left: 0, top: Math.floor((i * HEIGHT) / strips), width: WIDTH, height: Math.floor(HEIGHT / strips) }).resize(widthHere, stripHeight, { fit: 'fill' }).png().toBuffer();
      composites.push({ input: source, left: Math.round((WIDTH - widthHere) / 2), top: top + Math.round((HEIGHT - height) / 2) });
    }
  } else {
    const width = Math.round(WIDTH * (1 - 0.3 * strength));
    for (let i = 0; i < strips; i++) {
      const left = Math.floor((i * width) / strips);
      const stripWidth = Math.max(1, Math.floor(((i + 1) * width) / strips) - left);
      const along = kind === 'left' ? i / strips : 1 - i / strips;
      const heightHere = Math.round(HEIGHT * (1 - 0.25 * strength * along));
      const source = await sharp(base.data, { raw: base.info }).extract({ left: Math.floor((i * WIDTH) / strips), top: 0, width: Math.floor(WIDTH / strips), height: HEIGHT }).resize(stripWidth, heightHere, { fit: 'fill' }).png().toBuffer();
      composites.push({ input: source, left: left + Math.round((WIDTH - width) / 2), top: Math.round((HEIGHT - heightHere) / 2) });
    }
  }
  return sharp({ create: { width: WIDTH, height: HEIGHT, channels: 3, background } }).composite(composites).jpeg({ quality: 85 }).toBuffer();
}

/** Another person's head and shoulders from a face-api demo photo, as a 480×360 camera frame. */
export async function otherPersonFrame(): Promise<Buffer> {
  const face = TEST_IDENTITY_FACES.nin;
  const region = await faceCrop(face, 3);
  return sharp(samplePath(face.sample)).extract(region).resize(WIDTH, HEIGHT, { fit: 'cover' }).jpeg({ quality: 85 }).toBuffer();
}

const challengeFor = (index: number): Challenge[] => {
  const orders = allChallengeOrders();
  return orders[(index * 7) % orders.length]!;
};

export async function stillPhotoAttacks(count: number): Promise<AttackAttempt[]> {
  return Array.from({ length: count }, (_, i) => ({
    attack: 'still-photo' as const,
    name: `still-photo#${i + 1}`,
    challenges: challengeFor(i),
    frames: loopCapture('still-photo.mjpeg', i * 97),
    expected: 'CHALLENGE_NOT_MET' as const,
  }));
}

export async function registryPhotoAttacks(count: number): Promise<AttackAttempt[]> {
  const scene = await registryPhotoScene();
  const attempts: AttackAttempt[] = [];
  for (let i = 0; i < count; i++) {
    const jpegs: Buffer[] = [];
    for (let f = 0; f < LIVENESS_CAPTURE.maxFrames; f++) jpegs.push(await shaken(scene, f + i));
    attempts.push({ attack: 'registry-photo', name: `registry-photo#${i + 1}`, challenges: challengeFor(i + 3), frames: timed(jpegs), expected: 'CHALLENGE_NOT_MET' });
  }
  return attempts;
}

/**
 * Warped photos acting out the challenges in order: 4 frames still, then 4 frames of each
 * movement's imitation at growing strength, back to still between them.
 */
export async function warpedPhotoAttacks(count: number): Promise<AttackAttempt[]> {
  const picture = fixtureFrames('natural-a.mjpeg')[0]!;
  const attempts: AttackAttempt[] = [];
  for (let i = 0; i < count; i++) {
    const challenges = challengeFor(i + 5).filter((challenge) => challenge !== 'blink');
    if (challenges.length === 0) challenges.push('turn_left', 'look_up');
    const strength = 0.6 + 0.4 * ((i % 3) / 2);
    const jpegs: Buffer[] = [];
    const still = await warped(picture, 'none', 0);
    for (let f = 0; f < 4; f++) jpegs.push(still);
    for (const challenge of challenges) {
      const kind = challenge === 'turn_left' ? 'left' : challenge === 'turn_right' ? 'right' : 'up';
      for (const step of [0.5, 1, 1, 0.5]) jpegs.push(await warped(picture, kind, strength * step));
      jpegs.push(still);
    }
    while (jpegs.length < LIVENESS_CAPTURE.maxFrames) jpegs.push(still);
    attempts.push({ attack: 'warped-photo', name: `warped-photo#${i + 1}@${strength.toFixed(1)}`, challenges, frames: timed(jpegs.slice(0, LIVENESS_CAPTURE.maxFrames)), expected: 'CHALLENGE_NOT_MET' });
  }
  return attempts;
}

/**
 * A genuine capture of the fake-camera loop, then the same frames sent again for another session:
 * as they were (`exact`), or re-encoded smaller at lower quality to change every byte.
 */
export async function replayAttack(index: number, reencode: boolean): Promise<{ original: AttackAttempt; replay: AttackAttempt }> {
  const challenges = challengeFor(index + 11);
  const frames = loopCapture('genuine.mjpeg', index * 131);
  const original: AttackAttempt = { attack: 'replayed-frames', name: `genuine-for-replay#${index + 1}`, challenges, frames, expected: 'REPLAYED_FRAMES' };
  const replayed = reencode
    ? await Promise.all(frames.map(async (frame) => ({ atMs: frame.atMs, jpeg: await sharp(frame.jpeg).resize(440).jpeg({ quality: 70 }).toBuffer() })))
    : frames.map((frame) => ({ ...frame }));
  return { original, replay: { ...original, name: `replayed-frames#${index + 1}${reencode ? '-reencoded' : ''}`, frames: replayed } };
}

/**
 * Another person in front of the camera for the first 6 frames (where the flow asks to face the
 * camera), then the genuine person doing the movements: the frontal frame and the movements are
 * two different faces.
 */
export async function faceSwapAttacks(count: number): Promise<AttackAttempt[]> {
  const other = await otherPersonFrame();
  const attempts: AttackAttempt[] = [];
  for (let i = 0; i < count; i++) {
    const genuine = loopCapture('genuine.mjpeg', i * 89);
    const frames: LivenessFrame[] = [];
    for (let f = 0; f < genuine.length; f++) frames.push({ atMs: genuine[f]!.atMs, jpeg: f < 6 ? await shaken(other, f + i) : genuine[f]!.jpeg });
    attempts.push({ attack: 'face-swap', name: `face-swap#${i + 1}`, challenges: challengeFor(i + 17), frames, expected: 'FACE_CHANGED' });
  }
  return attempts;
}
