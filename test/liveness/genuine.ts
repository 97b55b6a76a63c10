import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHALLENGES, type Challenge, type LivenessFrame } from '../../src/identities/liveness/engine.js';
import { splitMjpeg } from '../../src/identities/liveness/recording.js';
import { LIVENESS_CAPTURE } from '../../src/identities/liveness/settings.js';

/**
 * The genuine sequences of test/fixtures/liveness (README.md there): one real person, two webcam
 * recordings at 25 frames a second. The movement ranges are the ground truth of the accuracy
 * measurement: the frames within 3° of each movement's furthest point (by the face model's
 * angles), the blinks' shut-eye frames, each checked by eye on the frames.
 */
export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'liveness');

export const fixturePath = (name: string) => path.join(FIXTURES, name);

const SOURCE_FPS = 25;
const STEP = (LIVENESS_CAPTURE.frameIntervalMs * SOURCE_FPS) / 1000;

/** Where each movement shows, by 1-based frame number in the file. */
export const NATURAL_EVENTS: Record<string, { challenge: Challenge; from: number; to: number }[]> = {
  'natural-a.mjpeg': [
    { challenge: 'turn_right', from: 13, to: 31 },
    { challenge: 'turn_left', from: 44, to: 59 },
    { challenge: 'look_up', from: 129, to: 144 },
    { challenge: 'blink', from: 162, to: 164 },
  ],
  'natural-b.mjpeg': [
    { challenge: 'turn_right', from: 16, to: 33 },
    { challenge: 'turn_left', from: 44, to: 58 },
  ],
  'natural-c.mjpeg': [
    { challenge: 'turn_left', from: 16, to: 31 },
    { challenge: 'turn_right', from: 44, to: 62 },
    { challenge: 'turn_left', from: 71, to: 89 },
  ],
  'natural-d.mjpeg': [{ challenge: 'blink', from: 20, to: 24 }],
};

const cache = new Map<string, Buffer[]>();
export function fixtureFrames(name: string): Buffer[] {
  let frames = cache.get(name);
  if (!frames) {
    frames = splitMjpeg(readFileSync(fixturePath(name)));
    cache.set(name, frames);
  }
  return frames;
}

export interface LabelledAttempt {
  name: string;
  challenges: Challenge[];
  frames: LivenessFrame[];
}

/**
 * Every capture the browser could have made of the unedited recordings: 25 frames one per 200 ms
 * (every 5th frame) from each starting frame, that saw at least two different movements (a
 * sampled frame inside the movement's range). Its challenges are those movements in the order
 * they happened, first occurrence of each, at most three. Short recordings give shorter captures.
 * Also returns how many captures a movement fell inside of without a frame landing on it.
 */
export function naturalAttempts(): { attempts: LabelledAttempt[]; missedBetweenFrames: Record<Challenge, number> } {
  const attempts: LabelledAttempt[] = [];
  const missedBetweenFrames = Object.fromEntries(CHALLENGES.map((challenge) => [challenge, 0])) as Record<Challenge, number>;
  for (const [file, events] of Object.entries(NATURAL_EVENTS)) {
    const frames = fixtureFrames(file);
    const span = Math.min(LIVENESS_CAPTURE.maxFrames, Math.floor((frames.length - 1) / STEP) + 1);
    for (let start = 0; start + (span - 1) * STEP < frames.length; start++) {
      const picked = Array.from({ length: span }, (_, i) => start + i * STEP);
      const seen: Challenge[] = [];
      for (const event of events) {
        const inside = picked.some((index) => index + 1 >= event.from && index + 1 <= event.to);
        const overlaps = start + 1 <= event.to && picked[picked.length - 1]! + 1 >= event.from;
        if (inside && !seen.includes(event.challenge)) seen.push(event.challenge);
        else if (!inside && overlaps) missedBetweenFrames[event.challenge] += 1;
      }
      if (seen.length < 2) continue;
      attempts.push({
        name: `${file.replace('.mjpeg', '')}@${start + 1}`,
        challenges: seen.slice(0, 3),
        frames: picked.map((index, i) => ({ atMs: i * LIVENESS_CAPTURE.frameIntervalMs, jpeg: frames[index]! })),
      });
    }
  }
  return { attempts, missedBetweenFrames };
}

/** Every ordered choice of 2 or 3 distinct challenges (36). */
export function allChallengeOrders(): Challenge[][] {
  const orders: Challenge[][] = [];
  const extend = (prefix: Challenge[]) => {
    if (prefix.length >= 2) orders.push(prefix);
    if (prefix.length === 3) return;
    for (const challenge of CHALLENGES) if (!prefix.includes(challenge)) extend([...prefix, challenge]);
  };
  extend([]);
  return orders;
}

/**
 * What the browser captures from a looping fake camera file (Chromium plays MJPEG at 30 fps):
 * `count` frames one per 200 ms, starting `phaseMs` into the loop.
 */
export function loopCapture(file: string, phaseMs: number, count: number = LIVENESS_CAPTURE.maxFrames): LivenessFrame[] {
  const frames = fixtureFrames(file);
  return Array.from({ length: count }, (_, i) => {
    const atMs = i * LIVENESS_CAPTURE.frameIntervalMs;
    return { atMs, jpeg: frames[Math.floor(((phaseMs + atMs) * 30) / 1000) % frames.length]! };
  });
}
