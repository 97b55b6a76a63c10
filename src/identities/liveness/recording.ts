import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { CHALLENGES, type Challenge, type LivenessFrame } from './engine.js';

/** The JPEG frames of an MJPEG file (JPEG images written one after another, as Chromium's fake camera reads). */
export function splitMjpeg(bytes: Buffer): Buffer[] {
  const start = Buffer.from([0xff, 0xd8, 0xff]);
  const frames: Buffer[] = [];
  let at = bytes.indexOf(start);
  while (at >= 0) {
    const next = bytes.indexOf(start, at + 3);
    frames.push(bytes.subarray(at, next < 0 ? bytes.length : next));
    at = next;
  }
  return frames;
}

/**
 * A recorded attempt as `vouch liveness replay` reads it: a folder holding `attempt.json`
 * (`{"challenges": ["turn_left", ...], "frames": [{"file": "00.jpg", "atMs": 0}, ...]}`, with an
 * optional `"sessionId"` and `"expected": "pass" | "fail"`) and the frames' JPEG files.
 */
export interface RecordedAttempt {
  name: string;
  sessionId: string;
  challenges: Challenge[];
  frames: LivenessFrame[];
  expected: 'pass' | 'fail' | null;
}

export class RecordingError extends Error {
  override name = 'RecordingError';
}

interface AttemptFile {
  challenges?: unknown;
  frames?: unknown;
  sessionId?: unknown;
  expected?: unknown;
}

/** Reads one recorded attempt folder; a RecordingError says what is wrong with it. */
export async function readRecordedAttempt(folder: string): Promise<RecordedAttempt> {
  const name = path.basename(folder);
  let parsed: AttemptFile;
  try {
    parsed = JSON.parse(await readFile(path.join(folder, 'attempt.json'), 'utf8')) as AttemptFile;
  } catch (error) {
    throw new RecordingError(`${name}: attempt.json is missing or not JSON (${(error as Error).message})`);
  }
  const challenges = parsed.challenges;
  if (!Array.isArray(challenges) || challenges.length === 0 || !challenges.every((item) => (CHALLENGES as readonly unknown[]).includes(item))) {
    throw new RecordingError(`${name}: "challenges" must be a non-empty array of ${CHALLENGES.join(', ')}`);
  }
  if (!Array.isArray(parsed.frames) || parsed.frames.length === 0) throw new RecordingError(`${name}: "frames" must be a non-empty array of {file, atMs}`);
  const frames: LivenessFrame[] = [];
  for (const item of parsed.frames as { file?: unknown; atMs?: unknown }[]) {
    if (typeof item?.file !== 'string' || typeof item.atMs !== 'number' || !Number.isFinite(item.atMs)) {
      throw new RecordingError(`${name}: each frame needs a "file" name and a number "atMs"`);
    }
    if (item.file.includes('/') || item.file.includes('\\') || item.file.startsWith('.')) throw new RecordingError(`${name}: frame file "${item.file}" must be a plain file name in the folder`);
    try {
      frames.push({ atMs: item.atMs, jpeg: await readFile(path.join(folder, item.file)) });
    } catch {
      throw new RecordingError(`${name}: frame file "${item.file}" cannot be read`);
    }
  }
  const expected = parsed.expected === 'pass' || parsed.expected === 'fail' ? parsed.expected : null;
  const sessionId = typeof parsed.sessionId === 'string' && parsed.sessionId ? parsed.sessionId : name;
  return { name, sessionId, challenges: challenges as Challenge[], frames, expected };
}

/** Every attempt folder under `root` (a folder holding attempt.json is one attempt), by name. */
export async function readRecordedAttempts(root: string): Promise<RecordedAttempt[]> {
  let entries;
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    throw new RecordingError(`${root}: not a readable folder`);
  }
  if (entries.some((entry) => entry.isFile() && entry.name === 'attempt.json')) return [await readRecordedAttempt(root)];
  const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  const attempts: RecordedAttempt[] = [];
  for (const folder of folders) {
    const full = path.join(root, folder);
    const inside = await readdir(full);
    if (inside.includes('attempt.json')) attempts.push(await readRecordedAttempt(full));
  }
  if (attempts.length === 0) throw new RecordingError(`${root}: no attempt folders (each holds attempt.json and its frames)`);
  return attempts;
}
