import { describe, expect, it } from 'vitest';
import type { FacePose, FrameDescription, FramePose } from '../../src/identities/liveness/analyzer.js';
import { type AttemptAnalysis, decideFromAnalysis, framesToDescribe } from '../../src/identities/liveness/decide.js';
import { CHALLENGES, type Challenge } from '../../src/identities/liveness/engine.js';
import { CHALLENGES_PER_ATTEMPT, DEFAULT_THRESHOLDS, pickChallenges } from '../../src/identities/liveness/settings.js';

// Decisions from poses the test writes itself: the rules without the models.
const limits = DEFAULT_THRESHOLDS;
type Move = 'rest' | 'left' | 'right' | 'up' | 'shut';

function face(move: Move, box: [number, number, number, number] = [100, 60, 120, 120]): FacePose {
  const yaw = move === 'left' ? -12 : move === 'right' ? 12 : -2;
  const pitch = move === 'up' ? -16 : -4;
  const eye = move === 'shut' ? 0.12 : 0.34;
  return { box, score: 0.95, yaw, pitch, roll: 0, eyes: [eye, eye] };
}

const pose = (main: FacePose | null, extra: FacePose[] = []): FramePose => ({
  width: 320,
  height: 240,
  faces: [...(main ? [main] : []), ...extra].map((item) => ({ box: item.box, score: item.score })),
  main,
});

const EMBEDDING_A = Array.from({ length: 16 }, (_, i) => Math.sin(i + 1));
const EMBEDDING_B = Array.from({ length: 16 }, (_, i) => Math.cos(3 * i + 2));

function analysis(moves: Move[], challenges: Challenge[], overrides: Partial<AttemptAnalysis> = {}): Omit<AttemptAnalysis, 'poses'> & { poses: FramePose[] } {
  const poses = moves.map((move) => pose(face(move)));
  const times = moves.map((_, i) => i * 200);
  const described: FrameDescription[] = framesToDescribe(challenges, poses, times, limits).map((index) => ({ index, embedding: EMBEDDING_A, real: 0.97, live: 0.98 }));
  return { challenges, times, described, replayedFrames: 0, ...overrides, poses };
}

const sequence = (...parts: [Move, number][]): Move[] => parts.flatMap(([move, n]) => Array<Move>(n).fill(move));

describe('liveness decision', () => {
  it('passes the movements asked for, in order, and picks a frontal frame with open eyes', () => {
    const moves = sequence(['rest', 5], ['left', 3], ['rest', 3], ['shut', 1], ['rest', 3], ['up', 3], ['rest', 2]);
    const decision = decideFromAnalysis(analysis(moves, ['turn_left', 'blink', 'look_up']), limits);
    expect(decision.reasons).toEqual([]);
    expect(decision.passed).toBe(true);
    expect(decision.challenges.map((outcome) => [outcome.challenge, outcome.passed, outcome.atMs])).toEqual([
      ['turn_left', true, 1000],
      ['blink', true, 2200],
      ['look_up', true, 3000],
    ]);
    expect(moves[decision.frontalFrame!]).toBe('rest');
    expect(decision.scores).toEqual({ antispoof: 0.97, live: 0.98, consistency: 1 });
  });

  it('says CHALLENGE_OUT_OF_ORDER when the movements came the other way round', () => {
    const moves = sequence(['rest', 5], ['right', 3], ['rest', 4], ['left', 3], ['rest', 5]);
    const decision = decideFromAnalysis(analysis(moves, ['turn_left', 'turn_right']), limits);
    expect(decision.passed).toBe(false);
    expect(decision.reasons).toEqual(['CHALLENGE_OUT_OF_ORDER']);
    expect(decision.challenges[1]).toMatchObject({ challenge: 'turn_right', passed: false, atMs: 1000 });
  });

  it('says CHALLENGE_NOT_MET for a movement that never came, and for a still face', () => {
    const turned = decideFromAnalysis(analysis(sequence(['rest', 6], ['left', 3], ['rest', 11]), ['turn_left', 'look_up']), limits);
    expect(turned.reasons).toEqual(['CHALLENGE_NOT_MET']);
    const still = decideFromAnalysis(analysis(sequence(['rest', 20]), ['blink', 'turn_right']), limits);
    expect(still.reasons).toEqual(['CHALLENGE_NOT_MET']);
    expect(still.challenges.every((outcome) => !outcome.passed && outcome.atMs === null)).toBe(true);
  });

  it('says TOO_SLOW when a movement comes too long after the one before, or the frames span too long', () => {
    const moves = sequence(['rest', 3], ['left', 2], ['rest', 10], ['up', 2], ['rest', 3]);
    const late = analysis(moves, ['turn_left', 'look_up']);
    late.times = moves.map((_, i) => (i < 5 ? i * 200 : 5000 + i * 200));
    expect(decideFromAnalysis(late, limits).reasons).toContain('TOO_SLOW');
    const slowFrames = analysis(sequence(['rest', 3], ['left', 2], ['up', 2], ['rest', 13]), ['turn_left', 'look_up']);
    slowFrames.times = slowFrames.times.map((ms) => ms * 3);
    expect(decideFromAnalysis(slowFrames, limits).reasons).toEqual(['TOO_SLOW']);
  });

  it('says TOO_FEW_FRAMES under the minimum, before anything else', () => {
    const decision = decideFromAnalysis(analysis(sequence(['left', 3], ['up', 3]), ['turn_left', 'look_up']), limits);
    expect(decision).toMatchObject({ passed: false, reasons: ['TOO_FEW_FRAMES'], frontalFrame: null });
  });

  it('says NO_FACE when too many frames have no face, and POOR_QUALITY for frames that did not decode or a face too small', () => {
    const base = analysis(sequence(['rest', 5], ['left', 3], ['up', 3], ['rest', 9]), ['turn_left', 'look_up']);
    const faceless = { ...base, poses: base.poses.map((item, i) => (i >= 12 ? pose(null) : item)) };
    expect(decideFromAnalysis(faceless, limits).reasons).toContain('NO_FACE');
    const undecoded = { ...base, poses: base.poses.map((item, i) => (i >= 5 ? null : item)) };
    expect(decideFromAnalysis(undecoded, limits).reasons).toEqual(['POOR_QUALITY']);
    const far = { ...base, poses: base.poses.map((item) => ({ ...item, main: { ...item.main!, box: [150, 100, 20, 20] as [number, number, number, number] } })) };
    expect(decideFromAnalysis(far, limits).reasons).toContain('POOR_QUALITY');
  });

  it('says MULTIPLE_FACES when a second face of some size shows in two frames or more', () => {
    const base = analysis(sequence(['rest', 5], ['left', 3], ['up', 3], ['rest', 9]), ['turn_left', 'look_up']);
    const second = face('rest', [230, 70, 70, 70]);
    const crowded = { ...base, poses: base.poses.map((item, i) => (i === 2 || i === 9 ? pose(item.main, [second]) : item)) };
    expect(decideFromAnalysis(crowded, limits).reasons).toEqual(['MULTIPLE_FACES']);
    const poster = face('rest', [290, 10, 20, 20]);
    const background = { ...base, poses: base.poses.map((item) => pose(item.main, [poster])) };
    expect(decideFromAnalysis(background, limits).reasons).toEqual([]);
  });

  it('says FACE_CHANGED when a described frame is another face, and SPOOF_SUSPECTED on low passive scores', () => {
    const base = analysis(sequence(['rest', 5], ['left', 3], ['up', 3], ['rest', 9]), ['turn_left', 'look_up']);
    const swapped = { ...base, described: base.described.map((item, i) => (i === 1 ? { ...item, embedding: EMBEDDING_B } : item)) };
    const changed = decideFromAnalysis(swapped, limits);
    expect(changed.reasons).toEqual(['FACE_CHANGED']);
    expect(changed.scores.consistency).toBeLessThan(limits.minSameFace);
    const flat = { ...base, described: base.described.map((item) => ({ ...item, real: 0.1 })) };
    expect(decideFromAnalysis(flat, limits).reasons).toEqual(['SPOOF_SUSPECTED']);
  });

  it('does not fail an attempt on a low Human liveness score: it is reported, not a gate', () => {
    const base = analysis(sequence(['rest', 5], ['left', 3], ['up', 3], ['rest', 9]), ['turn_left', 'look_up']);
    const lowLive = decideFromAnalysis({ ...base, described: base.described.map((item) => ({ ...item, live: 0.05 })) }, limits);
    expect(lowLive.reasons).toEqual([]);
    expect(lowLive.passed).toBe(true);
    expect(lowLive.scores.live).toBe(0.05);
    expect(limits).not.toHaveProperty('minLive');
  });

  it('gates on the median real-face probability of the described frames at minAntispoof', () => {
    const base = analysis(sequence(['rest', 5], ['left', 3], ['up', 3], ['rest', 9]), ['turn_left', 'look_up']);
    expect(base.described.length).toBeGreaterThanOrEqual(3);
    const withReal = (real: (i: number) => number) => ({ ...base, described: base.described.map((item, i) => ({ ...item, real: real(i) })) });
    // One low frame does not move the median.
    const oneLow = decideFromAnalysis(withReal((i) => (i === 0 ? 0.05 : 0.97)), limits);
    expect(oneLow.reasons).toEqual([]);
    expect(oneLow.scores.antispoof).toBe(0.97);
    const justUnder = decideFromAnalysis(withReal(() => limits.minAntispoof - 0.01), limits);
    expect(justUnder.reasons).toEqual(['SPOOF_SUSPECTED']);
    expect(decideFromAnalysis(withReal(() => limits.minAntispoof), limits).reasons).toEqual([]);
  });

  it('refuses a face whose similarity to the frontal one is 0.6 (a different person passed at 0.5 before), and passes 0.7', () => {
    const base = analysis(sequence(['rest', 5], ['left', 3], ['up', 3], ['rest', 9]), ['turn_left', 'look_up']);
    // Unit vectors at a chosen cosine: cos·e1 + sin·e2 against e1.
    const e1 = [1, 0, 0, 0];
    const at = (cosine: number) => [cosine, Math.sqrt(1 - cosine * cosine), 0, 0];
    const reference = base.described[0]!.index;
    const withSimilarity = (cosine: number) => ({ ...base, described: base.described.map((item) => ({ ...item, embedding: item.index === reference ? e1 : at(cosine) })) });
    const swapped = decideFromAnalysis(withSimilarity(0.6), limits);
    expect(swapped.reasons).toEqual(['FACE_CHANGED']);
    expect(swapped.scores.consistency).toBeCloseTo(0.6, 6);
    expect(decideFromAnalysis(withSimilarity(0.7), limits).reasons).toEqual([]);
  });

  it('says REPLAYED_FRAMES from the count of frames matching another attempt', () => {
    const base = analysis(sequence(['rest', 5], ['left', 3], ['up', 3], ['rest', 9]), ['turn_left', 'look_up']);
    expect(decideFromAnalysis({ ...base, replayedFrames: limits.minReplayedFrames }, limits).reasons).toEqual(['REPLAYED_FRAMES']);
    expect(decideFromAnalysis({ ...base, replayedFrames: limits.minReplayedFrames - 1 }, limits).passed).toBe(true);
  });

  it('describes the frontal frame and each challenge frame, within the limit', () => {
    const moves = sequence(['rest', 5], ['left', 3], ['rest', 3], ['shut', 1], ['rest', 3], ['up', 3], ['rest', 2]);
    const poses = moves.map((move) => pose(face(move)));
    const chosen = framesToDescribe(['turn_left', 'blink', 'look_up'], poses, moves.map((_, i) => i * 200), limits);
    // The frontal frame (the first resting one, also the first face), the three movements, the last face.
    expect(chosen).toEqual([0, 5, 11, 15, 19]);
  });
});

describe('challenge picker', () => {
  it('picks 2–3 distinct challenges with the injected randomness', () => {
    const script = [1, 3, 0, 1];
    const picked = pickChallenges((max) => script.shift()! % max);
    expect(picked).toEqual(['blink', 'turn_left', 'look_up']);
  });

  it('gives every count and every challenge from the system CSPRNG', () => {
    const counts = new Set<number>();
    const seen = new Set<Challenge>();
    const firsts = new Set<Challenge>();
    for (let i = 0; i < 300; i++) {
      const picked = pickChallenges();
      expect(new Set(picked).size).toBe(picked.length);
      expect(picked.length).toBeGreaterThanOrEqual(CHALLENGES_PER_ATTEMPT.min);
      expect(picked.length).toBeLessThanOrEqual(CHALLENGES_PER_ATTEMPT.max);
      counts.add(picked.length);
      picked.forEach((challenge) => seen.add(challenge));
      firsts.add(picked[0]!);
    }
    expect([...counts].sort()).toEqual([2, 3]);
    expect(seen.size).toBe(CHALLENGES.length);
    expect(firsts.size).toBe(CHALLENGES.length);
  });
});
