/**
 * Active liveness: the server picks a random sequence of challenges for each attempt, the person
 * performs them in front of the camera, and the engine decides from the frames whether the
 * requested movements happened, in order, within time, by one and the same real face.
 * docs/liveness.md explains the method, its thresholds and what it does not claim to stop.
 */

/** The movements a person can be asked to make. */
export const CHALLENGES = ['turn_left', 'turn_right', 'look_up', 'blink'] as const;
export type Challenge = (typeof CHALLENGES)[number];

/** Closed reasons an attempt fails for (the session's `checks.liveness.reasons`). */
export const LIVENESS_REASONS = [
  'NO_FACE',
  'MULTIPLE_FACES',
  'TOO_FEW_FRAMES',
  'CHALLENGE_NOT_MET',
  'CHALLENGE_OUT_OF_ORDER',
  'TOO_SLOW',
  'FACE_CHANGED',
  'SPOOF_SUSPECTED',
  'REPLAYED_FRAMES',
  'POOR_QUALITY',
] as const;
export type LivenessReason = (typeof LIVENESS_REASONS)[number];

/** One captured frame: a JPEG and when it was taken, in ms since the attempt's first frame. */
export interface LivenessFrame {
  atMs: number;
  jpeg: Buffer;
}

export interface LivenessAttempt {
  /** Unique per attempt: frames already seen in another attempt are refused as replayed. */
  attemptId: string;
  /** The session the attempt belongs to (frames may repeat within one attempt, never across). */
  sessionId: string;
  challenges: Challenge[];
  frames: LivenessFrame[];
  /**
   * Whose attempt it is: the prints kept to refuse replayed frames are compared within one
   * organization and mode. Required by an engine that keeps prints in the database.
   */
  scope?: { orgId: string; mode: 'test' | 'live' };
  /** How long this attempt's frame prints are kept: as long as its frames (default: 365 days). */
  retainUntil?: Date;
}

export interface ChallengeOutcome {
  challenge: Challenge;
  passed: boolean;
  /** When the movement was seen, ms since the first frame. */
  atMs: number | null;
}

export interface LivenessDecision {
  passed: boolean;
  /** Empty when passed. */
  reasons: LivenessReason[];
  scores: {
    /** Passive anti-spoofing: fr_liveness's probability of a real face, 0 (spoof) .. 1 (real), the median over the described frames. */
    antispoof: number;
    /** Human's liveness score, 0..1, median over the described frames: reported, not used to decide. */
    live: number;
    /** Similarity of the face across the frames (1 = the same face throughout). */
    consistency: number;
  };
  challenges: ChallengeOutcome[];
  /** The frame to compare with the registry photo (the most frontal, sharpest one); null when none. */
  frontalFrame: number | null;
  /** Server CPU time spent deciding, ms. */
  cpuMs: number;
}

export interface LivenessEngine {
  /** Loads the models (once); call at start-up or before the first decision. */
  ready(): Promise<void>;
  decide(attempt: LivenessAttempt): Promise<LivenessDecision>;
}
