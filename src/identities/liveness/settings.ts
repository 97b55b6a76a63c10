import { randomInt } from 'node:crypto';
import { CHALLENGES, type Challenge } from './engine.js';

/**
 * What the browser is asked to send for one attempt (returned with the attempt as `capture`).
 * 25 frames one per 200 ms is 4.8 s of capture: the browser shows "look straight" for 3 frames,
 * then each movement's prompt for an equal share of the rest (2 movements: 2.2 s each, 3: 1.4–1.6
 * s), and a movement that comes late still counts in the next prompt's time as long as the order
 * holds. A blink held for 200 ms or more always falls on a frame. The CPU budget (1.5 s a decision)
 * sets the count: every frame is analysed (face, pose, eyes: ~14 ms of CPU, ~27 ms with the iris
 * model an attempt with a blink needs, plus ~12 ms of decoding) and at most 5 are described
 * (identity and anti-spoofing, ~95 ms each); docs/liveness.md has the measurements.
 * 480 px wide keeps a face at arm's length over 150 px, plenty for the models, and each JPEG small.
 */
export const LIVENESS_CAPTURE = { maxFrames: 25, frameIntervalMs: 200, maxWidth: 480 } as const;
export type LivenessCapture = typeof LIVENESS_CAPTURE;

/** How many challenges an attempt asks for, at least and at most. */
export const CHALLENGES_PER_ATTEMPT = { min: 2, max: 3 } as const;

export type RandomInt = (maxExclusive: number) => number;

/**
 * 2–3 distinct challenges in a random order, from the operating system's CSPRNG, so that a
 * recording made for one attempt cannot be expected to fit the next. `random` is injectable for
 * tests; it must return an integer in [0, maxExclusive).
 */
export function pickChallenges(random: RandomInt = (max) => randomInt(max)): Challenge[] {
  const count = CHALLENGES_PER_ATTEMPT.min + random(CHALLENGES_PER_ATTEMPT.max - CHALLENGES_PER_ATTEMPT.min + 1);
  const pool: Challenge[] = [...CHALLENGES];
  const picked: Challenge[] = [];
  while (picked.length < count) {
    const [challenge] = pool.splice(random(pool.length), 1);
    if (challenge) picked.push(challenge);
  }
  return picked;
}

/**
 * Every number the decision depends on. Angles are the face model's, in degrees, measured from
 * the attempt's own median pose (so a camera held a little low does not count as a movement).
 * docs/liveness.md gives the measurements each default rests on; `vouch liveness replay` tries
 * others on recorded attempts.
 */
export interface LivenessThresholds {
  /** Fewer frames than this cannot show 2–3 movements. */
  minFrames: number;
  /** Frames beyond the capture's maxFrames are not analysed (the CPU budget). */
  maxFrames: number;
  /** The frames must have been taken within this span, and each movement within `maxChallengeGapMs` of the one before. */
  maxDurationMs: number;
  maxChallengeGapMs: number;
  /** At least this share of the frames must show a face. */
  minFaceShare: number;
  /** A second face at least this fraction of the main face's area, in at least `minMultiFaceFrames` frames, is a second person. */
  secondFaceArea: number;
  minMultiFaceFrames: number;
  /** The main face must be at least this fraction of the frame's width (median over frames). */
  minFaceWidth: number;
  /** turn_left / turn_right: yaw from the median pose, degrees. */
  turnDegrees: number;
  /** look_up: pitch from the median pose, degrees (up is negative pitch). */
  lookUpDegrees: number;
  /** blink: both eyes at most this fraction of their median openness, with open eyes before or after. */
  blinkRatio: number;
  /** At most this many frames are described (identity and anti-spoofing, ~125 ms of CPU each). */
  maxDescribed: number;
  /** One face throughout: cosine similarity of the face embeddings of the described frames to the frontal one. */
  minSameFace: number;
  /**
   * Passive check: the median of fr_liveness's real-face probability over the described frames.
   * (Human's liveness score is reported but not a gate: it did not tell prints from live faces.)
   */
  minAntispoof: number;
  /** A frame whose 3072-bit print is within this many bits of a print from another attempt is replayed. */
  replayBits: number;
  /** This many replayed frames make the attempt a replay. */
  minReplayedFrames: number;
}

export const DEFAULT_THRESHOLDS: LivenessThresholds = {
  minFrames: 8,
  maxFrames: LIVENESS_CAPTURE.maxFrames,
  // The capture spans 4.8 s; a slow phone's timers and JPEG encoding stretch it (each frame waits
  // for the one before), so up to 8 s is accepted. A movement may come at the start of its prompt
  // and the next at the end of the next prompt: two movement windows of 2.2 s, plus slack.
  maxDurationMs: 8000,
  maxChallengeGapMs: 5000,
  minFaceShare: 0.7,
  secondFaceArea: 0.2,
  minMultiFaceFrames: 2,
  minFaceWidth: 0.12,
  turnDegrees: 7,
  lookUpDegrees: 8,
  blinkRatio: 0.65,
  maxDescribed: 5,
  // faceres similarity of different Black people's LFW photos: 20 % of pairs reached 0.5, 0.45 %
  // reach 0.65 (434 of 96,451); the genuine captures' lowest is 0.81 (bench/same-face-accuracy.ts).
  minSameFace: 0.65,
  // Between the equal-error points of CelebA-Spoof's sample (0.45) and NUAA's (0.22): spoofs let
  // through 2.0 % and 10.3 %, live stills refused 1.0 % and 17.3 %; genuine captures' lowest
  // median 0.96 (bench/pad-accuracy.ts, docs/liveness.md).
  minAntispoof: 0.3,
  replayBits: 350,
  minReplayedFrames: 2,
};
