import type { FacePose, FrameDescription, FramePose } from './analyzer.js';
import type { Challenge, ChallengeOutcome, LivenessDecision, LivenessReason } from './engine.js';
import type { LivenessThresholds } from './settings.js';

/** What the models said about an attempt, in the order of its frames (null: the frame did not decode). */
export interface AttemptAnalysis {
  challenges: Challenge[];
  /** ms since the first frame, one per frame. */
  times: number[];
  poses: (FramePose | null)[];
  described: FrameDescription[];
  /** Frames matching a print of another attempt. */
  replayedFrames: number;
}

const median = (values: number[]): number => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const area = (box: [number, number, number, number]) => box[2] * box[3];

/** Both eyes' mean openness, or null when the mesh lost an eye. */
function eyesOf(face: FacePose): number | null {
  const [left, right] = face.eyes;
  return left === null || right === null ? null : (left + right) / 2;
}

/** The attempt's resting pose: medians over the frames with a face. */
export interface Baseline {
  yaw: number;
  pitch: number;
  eyes: number;
}

export function baselineOf(faces: FacePose[]): Baseline {
  return {
    yaw: median(faces.map((face) => face.yaw)),
    pitch: median(faces.map((face) => face.pitch)),
    eyes: median(faces.map(eyesOf).filter((value): value is number => value !== null)),
  };
}

/** Whether one frame shows the challenge's movement, against the attempt's baseline. */
export function shows(challenge: Challenge, face: FacePose, base: Baseline, limits: LivenessThresholds): boolean {
  switch (challenge) {
    case 'turn_left':
      return face.yaw - base.yaw <= -limits.turnDegrees;
    case 'turn_right':
      return face.yaw - base.yaw >= limits.turnDegrees;
    case 'look_up':
      return face.pitch - base.pitch <= -limits.lookUpDegrees;
    case 'blink': {
      const eyes = eyesOf(face);
      // Turned far, the eye's outline foreshortens and looks shut: only a near-frontal face blinks.
      return eyes !== null && base.eyes > 0 && eyes <= base.eyes * limits.blinkRatio && Math.abs(face.yaw - base.yaw) < limits.turnDegrees;
    }
  }
}

/** Frames (indexes) where each challenge shows; a blink counts only where open eyes come before or after it. */
function evidence(challenge: Challenge, faces: (FacePose | null)[], base: Baseline, limits: LivenessThresholds): number[] {
  const open = (face: FacePose | null) => {
    const eyes = face ? eyesOf(face) : null;
    return eyes !== null && eyes > base.eyes * limits.blinkRatio;
  };
  const found: number[] = [];
  faces.forEach((face, index) => {
    if (!face || !shows(challenge, face, base, limits)) return;
    if (challenge === 'blink' && !faces.some((other, at) => at !== index && open(other))) return;
    found.push(index);
  });
  return found;
}

export interface ChallengeTrack {
  outcomes: ChallengeOutcome[];
  /** The frame each met challenge was seen in (for the describe pass). */
  frames: number[];
  reasons: LivenessReason[];
}

/**
 * Each challenge must show after the one before it (the earliest such frame is taken, which
 * finds an ordered match whenever one exists), and within `maxChallengeGapMs` of it.
 */
export function trackChallenges(challenges: Challenge[], faces: (FacePose | null)[], times: number[], limits: LivenessThresholds): ChallengeTrack {
  const present = faces.filter((face): face is FacePose => face !== null);
  const base = baselineOf(present);
  const reasons = new Set<LivenessReason>();
  const outcomes: ChallengeOutcome[] = [];
  const frames: number[] = [];
  let after = -1;
  let previousMs = 0;
  for (const challenge of challenges) {
    const seen = evidence(challenge, faces, base, limits);
    const next = seen.find((index) => index > after);
    if (next === undefined) {
      reasons.add(seen.length > 0 ? 'CHALLENGE_OUT_OF_ORDER' : 'CHALLENGE_NOT_MET');
      outcomes.push({ challenge, passed: false, atMs: seen.length > 0 ? times[seen[0]!]! : null });
      continue;
    }
    const atMs = times[next]!;
    if (atMs - previousMs > limits.maxChallengeGapMs) reasons.add('TOO_SLOW');
    outcomes.push({ challenge, passed: true, atMs });
    frames.push(next);
    after = next;
    previousMs = atMs;
  }
  return { outcomes, frames, reasons: [...reasons] };
}

/**
 * The frame to compare with the registry photo: the face nearest the resting pose with open
 * eyes, the larger face winning ties (closer to the camera, more detail).
 */
export function frontalFrame(faces: (FacePose | null)[], limits: LivenessThresholds): number | null {
  const present = faces.filter((face): face is FacePose => face !== null);
  if (present.length === 0) return null;
  const base = baselineOf(present);
  let best: { index: number; cost: number } | null = null;
  faces.forEach((face, index) => {
    if (!face) return;
    const eyes = eyesOf(face);
    const closed = eyes === null || eyes <= base.eyes * limits.blinkRatio;
    const cost = Math.abs(face.yaw - base.yaw) + Math.abs(face.pitch - base.pitch) + (closed ? 90 : 0) - area(face.box) / 1e5;
    if (!best || cost < best.cost) best = { index, cost };
  });
  return (best as { index: number } | null)?.index ?? null;
}

/**
 * The frames to describe (identity, anti-spoofing): the frontal one and each challenge's frame,
 * so every frame that carries evidence or goes to the face match is checked to be the same
 * live face. Computed from the poses alone, before the describe pass.
 */
export function framesToDescribe(challenges: Challenge[], poses: (FramePose | null)[], times: number[], limits: LivenessThresholds): number[] {
  const faces = poses.map((pose) => pose?.main ?? null);
  const frontal = frontalFrame(faces, limits);
  if (frontal === null) return [];
  const { frames } = trackChallenges(challenges, faces, times, limits);
  const present = faces.flatMap((face, index) => (face ? [index] : []));
  // The faces either side of the largest jump between two frames, and the first and last faces,
  // catch a face swapped in before, after or between the movements.
  // Between frames the detector found: where the mesh followed the face, a cut spreads over
  // the frames after it as the followed box adapts, and shows whole only at the next detection.
  const cut = largestJump(poses.map((pose) => (pose && pose.detected !== false ? pose.main : null)));
  const wanted = [frontal, ...frames, ...(cut === null ? [] : [cut.before, cut.after]), present[0]!, present[present.length - 1]!];
  return [...new Set(wanted)].slice(0, limits.maxDescribed);
}

/** The two frames around the largest move of the face between frames (centre and size), when over half a face width. */
function largestJump(faces: (FacePose | null)[]): { before: number; after: number } | null {
  let best: { before: number; after: number; jump: number } | null = null;
  let previous: { face: FacePose; index: number } | null = null;
  faces.forEach((face, index) => {
    if (!face) return;
    if (previous) {
      const [x0, y0, w0, h0] = previous.face.box;
      const [x1, y1, w1, h1] = face.box;
      const jump = Math.hypot(x1 + w1 / 2 - (x0 + w0 / 2), y1 + h1 / 2 - (y0 + h0 / 2)) / Math.max(w0, 1) + Math.abs(Math.log(Math.max(w1, 1) / Math.max(w0, 1)));
      if (jump > 0.5 && (!best || jump > best.jump)) best = { before: previous.index, after: index, jump };
    }
    previous = { face, index };
  });
  return best;
}

export function cosineSimilarity(a: number[], b: number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * (b[i] ?? 0);
    normA += a[i]! * a[i]!;
    normB += (b[i] ?? 0) * (b[i] ?? 0);
  }
  return normA > 0 && normB > 0 ? dot / Math.sqrt(normA * normB) : 0;
}

/** The decision from the analysis, without `cpuMs` (the engine adds it). Pure: tests feed it poses. */
export function decideFromAnalysis(analysis: AttemptAnalysis, limits: LivenessThresholds): Omit<LivenessDecision, 'cpuMs'> {
  const { challenges, times, poses, described } = analysis;
  const reasons = new Set<LivenessReason>();
  const scores = { antispoof: 0, live: 0, consistency: 0 };
  const unmet = (): ChallengeOutcome[] => challenges.map((challenge) => ({ challenge, passed: false, atMs: null }));
  const finish = (challengeOutcomes: ChallengeOutcome[], frontal: number | null) => ({
    passed: reasons.size === 0,
    reasons: [...reasons],
    scores,
    challenges: challengeOutcomes,
    frontalFrame: frontal,
  });

  if (analysis.replayedFrames >= limits.minReplayedFrames) reasons.add('REPLAYED_FRAMES');
  if (poses.length < limits.minFrames) {
    reasons.add('TOO_FEW_FRAMES');
    return finish(unmet(), null);
  }
  const decoded = poses.filter((pose): pose is FramePose => pose !== null);
  if (decoded.length < limits.minFrames) {
    reasons.add('POOR_QUALITY');
    return finish(unmet(), null);
  }
  if (times.length > 0 && times[times.length - 1]! - times[0]! > limits.maxDurationMs) reasons.add('TOO_SLOW');

  const faces = poses.map((pose) => pose?.main ?? null);
  const withFace = faces.filter((face): face is FacePose => face !== null);
  if (withFace.length === 0) {
    reasons.add('NO_FACE');
    return finish(unmet(), null);
  }
  if (withFace.length < decoded.length * limits.minFaceShare) reasons.add('NO_FACE');

  const crowded = decoded.filter((pose) => {
    if (!pose.main) return false;
    const mainArea = area(pose.main.box);
    return pose.faces.filter((face) => area(face.box) >= mainArea * limits.secondFaceArea).length >= 2;
  });
  if (crowded.length >= limits.minMultiFaceFrames) reasons.add('MULTIPLE_FACES');

  const widths = decoded.flatMap((pose) => (pose.main ? [pose.main.box[2] / pose.width] : []));
  if (median(widths) < limits.minFaceWidth) reasons.add('POOR_QUALITY');

  const track = trackChallenges(challenges, faces, times, limits);
  for (const reason of track.reasons) reasons.add(reason);
  const frontal = frontalFrame(faces, limits);

  const reference = described.find((item) => item.index === frontal) ?? described[0];
  if (!reference) {
    reasons.add('POOR_QUALITY');
    return finish(track.outcomes, frontal);
  }
  const similarities = described.filter((item) => item !== reference).map((item) => cosineSimilarity(reference.embedding, item.embedding));
  scores.consistency = similarities.length > 0 ? Math.min(...similarities) : 1;
  scores.antispoof = median(described.map((item) => item.real));
  // Reported, not a gate: Human's liveness score ranked printed faces above live ones about as
  // often as not (docs/liveness.md, "Passive anti-spoofing").
  scores.live = median(described.map((item) => item.live));
  if (scores.consistency < limits.minSameFace) reasons.add('FACE_CHANGED');
  if (scores.antispoof < limits.minAntispoof) reasons.add('SPOOF_SUSPECTED');
  return finish(track.outcomes, frontal);
}
