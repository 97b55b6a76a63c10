import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerLivenessCommands } from '../../src/identities/liveness/cli.js';
import type { LivenessFrame } from '../../src/identities/liveness/engine.js';
import { loopCapture } from './genuine.js';

// `vouch liveness replay DIR`: recorded attempts through the real engine, decisions and a summary.
let root: string;

async function writeAttempt(name: string, challenges: string[], frames: LivenessFrame[], extra: Record<string, unknown> = {}) {
  const folder = path.join(root, name);
  await mkdir(folder, { recursive: true });
  const list = [];
  for (const [i, frame] of frames.entries()) {
    const file = `${String(i).padStart(2, '0')}.jpg`;
    await writeFile(path.join(folder, file), frame.jpeg);
    list.push({ file, atMs: frame.atMs });
  }
  await writeFile(path.join(folder, 'attempt.json'), JSON.stringify({ challenges, frames: list, ...extra }));
}

async function run(...args: string[]): Promise<{ out: string; error: unknown }> {
  const program = new Command().exitOverride();
  registerLivenessCommands(program);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(['node', 'vouch', 'liveness', 'replay', ...args]);
    return { out, error: null };
  } catch (error) {
    return { out, error };
  } finally {
    spy.mockRestore();
  }
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'vouch-liveness-replay-'));
  const genuine = loopCapture('genuine.mjpeg', 0);
  await writeAttempt('1-genuine', ['turn_left', 'look_up'], genuine, { expected: 'pass', sessionId: 'ses_a' });
  await writeAttempt('2-still', ['blink', 'turn_right'], loopCapture('still-photo.mjpeg', 0), { expected: 'fail' });
  // The first attempt's frames sent again for another session: refused as replayed.
  await writeAttempt('3-replayed', ['turn_left', 'look_up'], genuine, { expected: 'fail', sessionId: 'ses_b' });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('vouch liveness replay', { timeout: 180_000 }, () => {
  it('prints each attempt\'s decision, its reasons and scores, and a summary', async () => {
    const { out, error } = await run(root);
    expect(error).toBeNull();
    expect(out).toMatch(/^1-genuine: PASS {2}\(as expected\)\n {2}turn_left@\d+ look_up@\d+\n {2}antispoof \d\.\d\d live \d\.\d\d same-face \d\.\d\d {2}frontal frame \d+ {2}cpu \d+ ms$/m);
    expect(out).toMatch(/^2-still: FAIL [A-Z_,]*CHALLENGE_NOT_MET[A-Z_,]* {2}\(as expected\)$/m);
    expect(out).toMatch(/^3-replayed: FAIL [A-Z_,]*REPLAYED_FRAMES[A-Z_,]* {2}\(as expected\)$/m);
    expect(out).toMatch(/^3 attempts: 1 passed \(33\.3%\), 2 failed$/m);
    expect(out).toMatch(/^agreeing with "expected": 3 of 3 \(100%\)$/m);
    expect(out).toMatch(/^median CPU per decision: \d+ ms; thresholds changed: defaults \(the rest at their defaults\)$/m);
  });

  it('takes thresholds as options and answers JSON lines', async () => {
    const { out, error } = await run(path.join(root, '1-genuine'), '--turn-degrees', '40', '--json');
    expect(error).toBeNull();
    const [line, summary] = out.trim().split('\n').map((text) => JSON.parse(text));
    expect(line).toMatchObject({ attempt: '1-genuine', passed: false, reasons: ['CHALLENGE_NOT_MET'], expected: 'pass' });
    expect(summary.summary).toMatchObject({ attempts: 1, passed: 0, expected: 1, agreeing: 0 });
    expect(summary.summary.thresholds.turnDegrees).toBe(40);
    expect(summary.summary.thresholds).not.toHaveProperty('minLive');
  });

  it('takes --min-antispoof for the passive gate on the real-face probability', async () => {
    const { out, error } = await run(path.join(root, '1-genuine'), '--min-antispoof', '1.01', '--json');
    expect(error).toBeNull();
    const [line, summary] = out.trim().split('\n').map((text) => JSON.parse(text));
    expect(line).toMatchObject({ attempt: '1-genuine', passed: false, reasons: ['SPOOF_SUSPECTED'] });
    expect(line.scores.antispoof).toBeGreaterThan(0.9);
    expect(summary.summary.thresholds.minAntispoof).toBe(1.01);
  });

  it('says what is wrong with a folder or an option', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'vouch-liveness-empty-'));
    try {
      expect(String((await run(empty)).error)).toMatch(/no attempt folders/);
      await writeFile(path.join(empty, 'attempt.json'), JSON.stringify({ challenges: ['smile'], frames: [] }));
      expect(String((await run(empty)).error)).toMatch(/"challenges" must be a non-empty array of turn_left, turn_right, look_up, blink/);
      await writeFile(path.join(empty, 'attempt.json'), JSON.stringify({ challenges: ['blink'], frames: [{ file: '../x.jpg', atMs: 0 }] }));
      expect(String((await run(empty)).error)).toMatch(/must be a plain file name/);
      expect(String((await run(root, '--blink-ratio', 'half')).error)).toMatch(/must be a number/);
      // Human's liveness score no longer decides: its option is refused with the reason, not ignored.
      const minLive = await run(root, '--min-live', '0.5');
      expect(minLive.out).toBe('');
      expect(String(minLive.error)).toMatch(/--min-live is no longer an option: Human's liveness score is reported but does not decide/);
      expect(String(minLive.error)).toMatch(/--min-antispoof sets the one passive gate/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
