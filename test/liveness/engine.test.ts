import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameAnalyzer } from '../../src/identities/liveness/analyzer.js';
import type { LivenessAttempt, LivenessFrame } from '../../src/identities/liveness/engine.js';
import { HumanLivenessEngine } from '../../src/identities/liveness/human-engine.js';
import { decodeFrame } from '../../src/identities/liveness/frames.js';
import { MemoryPrintStore } from '../../src/identities/liveness/print-store.js';
import { DEFAULT_THRESHOLDS } from '../../src/identities/liveness/settings.js';
import { faceSwapAttacks, otherPersonFrame, registryPhotoAttacks, replayAttack, stillPhotoAttacks, warpedPhotoAttacks } from './attacks.js';
import { fixtureFrames, loopCapture } from './genuine.js';

// The real models on the committed fixtures (test/fixtures/liveness/README.md): each decision is
// about 1.2 s of CPU, so this file makes a dozen of them, not the whole measurement (npm run bench -- liveness).
const analyzer = new FrameAnalyzer();
let sequence = 0;
const engine = (prints = new MemoryPrintStore()) => new HumanLivenessEngine({ prints, analyzer, requireScope: true });
function attempt(challenges: LivenessAttempt['challenges'], frames: LivenessFrame[], session?: string): LivenessAttempt {
  sequence += 1;
  return { attemptId: `att_${sequence}`, sessionId: session ?? `ses_${sequence}`, challenges, frames, scope: { orgId: 'org_a', mode: 'test' } };
}

beforeAll(async () => {
  await analyzer.warmUp();
}, 120_000);
afterAll(async () => {
  await analyzer.close();
});

describe('liveness engine on the real models', { timeout: 120_000 }, () => {
  it('loads every model from the package on disk and never reaches for the network', async () => {
    const status = await analyzer.warmUp();
    expect(status.backend).toBe('wasm');
    expect(status.refusedFetches).toBe(0);
    const names = status.models.map((model) => model.name);
    for (const name of ['blazeface', 'facemesh', 'iris', 'faceres', 'liveness', 'fr_liveness']) expect(names).toContain(name);
    // Human's anti-spoofing model is not loaded: it is no longer a gate.
    expect(names).not.toContain('antispoof');
    for (const model of status.models) {
      if (model.name === 'fr_liveness') expect(model.url).toMatch(/^file:\/\/.*\/models\/faceplugin\/fr_liveness\.onnx$/);
      else expect(model.url).toMatch(/^file:\/\/.*node_modules\/@vladmandic\/human\/models\//);
    }
  });

  it('passes the genuine fake-camera loop in two orders, with a frontal frame and the CPU it took', async () => {
    // A store each: the loop's frames are the same every time, and a second attempt would be a replay.
    for (const challenges of [['turn_left', 'blink', 'look_up'], ['turn_right', 'turn_left']] as const) {
      const decision = await engine().decide(attempt([...challenges], loopCapture('genuine.mjpeg', 300)));
      expect(decision.reasons).toEqual([]);
      expect(decision.passed).toBe(true);
      expect(decision.challenges.every((outcome) => outcome.passed && outcome.atMs !== null)).toBe(true);
      expect(decision.frontalFrame).not.toBeNull();
      expect(decision.scores.consistency).toBeGreaterThan(DEFAULT_THRESHOLDS.minSameFace);
      expect(decision.scores.antispoof).toBeGreaterThan(0.9);
      expect(decision.cpuMs).toBeGreaterThan(0);
    }
  });

  it('follows the face with the mesh between detector frames, describes from the pose pass\'s crops and leaves no tensor behind', async () => {
    const before = (await analyzer.warmUp()).tensors;
    const frames = await Promise.all(loopCapture('genuine.mjpeg', 300).map(async (frame) => (await decodeFrame(frame.jpeg, 480))!.small));
    const result = await analyzer.analyze(frames, (poses) => poses.map((_, index) => index).filter((index) => index % 4 === 0), { iris: true });
    expect(result.poses.every((pose) => pose.main !== null)).toBe(true);
    // The detector on frames 0, 3, 6, … (9 of 25) and where the followed face jumped, the mesh
    // following the face on the others.
    expect(result.detected).toBeGreaterThanOrEqual(9);
    expect(result.detected).toBeLessThanOrEqual(13);
    expect(result.described.map((item) => item.index)).toEqual([0, 4, 8, 12, 16, 20, 24]);
    for (const item of result.described) {
      expect(item.embedding).toHaveLength(1024);
      // fr_liveness's real-face probability on the live person's frames (Human's anti-spoofing
      // model, the score before, gave these frames 0.68–0.79).
      expect(item.real).toBeGreaterThan(0.9);
      expect(item.real).toBeLessThanOrEqual(1);
      expect(item.live).toBeGreaterThan(0.5);
      expect(item).not.toHaveProperty('humanReal');
    }
    expect((await analyzer.warmUp()).tensors).toBe(before);
  });

  it('refuses a still photo of the person, the registry photo and a warped photo: CHALLENGE_NOT_MET', async () => {
    const attacks = [...(await stillPhotoAttacks(1)), ...(await registryPhotoAttacks(1)), ...(await warpedPhotoAttacks(1))];
    for (const attack of attacks) {
      const decision = await engine().decide(attempt(attack.challenges, attack.frames));
      expect(decision.passed, attack.name).toBe(false);
      expect(decision.reasons, attack.name).toContain('CHALLENGE_NOT_MET');
    }
  });

  it('refuses another face swapped in: FACE_CHANGED', async () => {
    const [attack] = await faceSwapAttacks(1);
    const decision = await engine().decide(attempt(attack!.challenges, attack!.frames));
    expect(decision.passed).toBe(false);
    expect(decision.reasons).toContain('FACE_CHANGED');
  });

  it('refuses another face swapped in on a frame where the mesh follows the face (a cut at frame 7 or 8)', async () => {
    const other = await sharp(await otherPersonFrame()).resize(480, 360).jpeg().toBuffer();
    // Frames 0, 3, 6, … run the detector; a cut at 7 or 8 falls on frames that follow the face.
    for (const cut of [7, 8]) {
      const frames = loopCapture('genuine.mjpeg', 600).map((frame, index) => ({ atMs: frame.atMs, jpeg: index < cut ? other : frame.jpeg }));
      const decision = await engine().decide(attempt(['turn_left', 'blink', 'look_up'], frames));
      expect(decision.passed, `cut at ${cut}`).toBe(false);
      expect(decision.reasons, `cut at ${cut}`).toContain('FACE_CHANGED');
    }
  });

  it('refuses frames replayed from another attempt, as sent and re-encoded, but not within its own attempt', async () => {
    const prints = new MemoryPrintStore();
    const liveness = engine(prints);
    const { original, replay } = await replayAttack(0, false);
    const first = await liveness.decide(attempt(original.challenges, original.frames, 'ses_first'));
    expect(first.passed).toBe(true);
    const again = await liveness.decide(attempt(replay.challenges, replay.frames, 'ses_second'));
    expect(again.reasons).toContain('REPLAYED_FRAMES');
    const { replay: reencoded } = await replayAttack(0, true);
    const disguised = await liveness.decide(attempt(reencoded.challenges, reencoded.frames, 'ses_third'));
    expect(disguised.reasons).toContain('REPLAYED_FRAMES');
    // Another organization's attempts are not compared.
    const elsewhere = await liveness.decide({ ...attempt(original.challenges, original.frames), scope: { orgId: 'org_b', mode: 'test' } });
    expect(elsewhere.reasons).not.toContain('REPLAYED_FRAMES');
  });

  it('refuses two people in the frame: MULTIPLE_FACES', async () => {
    const other = await sharp(await otherPersonFrame()).resize(240, 180).toBuffer();
    const frames = await Promise.all(
      loopCapture('genuine.mjpeg', 0).map(async (frame) => ({
        atMs: frame.atMs,
        jpeg: await sharp({ create: { width: 720, height: 360, channels: 3, background: '#777' } })
          .composite([
            { input: await sharp(frame.jpeg).resize(480, 360).toBuffer(), left: 0, top: 0 },
            { input: other, left: 480, top: 90 },
          ])
          .jpeg()
          .toBuffer(),
      })),
    );
    const decision = await engine().decide(attempt(['turn_left', 'turn_right'], frames));
    expect(decision.reasons).toContain('MULTIPLE_FACES');
  });

  it('refuses movements the other way round (CHALLENGE_OUT_OF_ORDER) and frames spread too long (TOO_SLOW)', async () => {
    // natural-b: the person turns right, then left.
    const frames = fixtureFrames('natural-b.mjpeg').filter((_, i) => i % 5 === 0).map((jpeg, i) => ({ atMs: i * 200, jpeg }));
    const reversed = await engine().decide(attempt(['turn_left', 'turn_right'], frames));
    expect(reversed.reasons).toEqual(['CHALLENGE_OUT_OF_ORDER']);
    const slow = await engine().decide(attempt(['turn_right', 'turn_left'], frames.map((frame) => ({ ...frame, atMs: frame.atMs * 4 }))));
    expect(slow.reasons).toContain('TOO_SLOW');
  });

  it('answers TOO_FEW_FRAMES, NO_FACE and POOR_QUALITY without failing', async () => {
    const few = await engine().decide(attempt(['blink', 'look_up'], loopCapture('genuine.mjpeg', 0, 5)));
    expect(few.reasons).toEqual(['TOO_FEW_FRAMES']);
    const grey = await sharp({ create: { width: 480, height: 360, channels: 3, background: '#808080' } }).jpeg().toBuffer();
    const empty = await engine().decide(attempt(['blink', 'look_up'], Array.from({ length: 12 }, (_, i) => ({ atMs: i * 200, jpeg: grey }))));
    expect(empty.reasons).toEqual(['NO_FACE']);
    const garbage = await engine().decide(attempt(['blink', 'look_up'], Array.from({ length: 12 }, (_, i) => ({ atMs: i * 200, jpeg: Buffer.from('not a jpeg') }))));
    expect(garbage.reasons).toEqual(['POOR_QUALITY']);
  });

  it('refuses an attempt without a scope when prints are kept per organization', async () => {
    const { scope: _scope, ...unscoped } = attempt(['blink', 'look_up'], loopCapture('genuine.mjpeg', 0, 5));
    await expect(engine().decide(unscoped)).rejects.toThrow(/scope/);
  });
});
