import { randomInt } from 'node:crypto';
import { CHALLENGES, type Challenge, type LivenessEngine } from '../identities/liveness/engine.js';
import { ApiError } from '../platform/errors.js';

/**
 * The session's side of liveness: which challenges an attempt asks for, how the browser captures
 * frames, and where the engine comes from (docs/sessions.md, "Liveness step"; the method itself
 * is the engine's, docs/liveness.md).
 */

/** Liveness attempts per session; a fourth is refused (429 TOO_MANY_ATTEMPTS). */
export const MAX_LIVENESS_ATTEMPTS = 3;
/** ID lookups per session. */
export const MAX_ID_ATTEMPTS = 3;
/** How long an attempt's challenges may be answered: the moves take seconds, a slow upload a minute. */
export const ATTEMPT_TTL_MS = 3 * 60_000;
/** An attempt being decided longer than this was lost (a process stopped): the page may start another. */
export const PROCESSING_TIMEOUT_MS = 2 * 60_000;

/** What the browser is told to send: at most `maxFrames` JPEGs, one every `frameIntervalMs`, at most `maxWidth` pixels wide. */
export const CAPTURE = { maxFrames: 30, frameIntervalMs: 200, maxWidth: 640 } as const;
/** The most one frame may weigh. */
export const MAX_FRAME_BYTES = 300 * 1024;

/** 2 or 3 different challenges in a random order, chosen here so the browser cannot pick easy ones. */
export function chooseChallenges(random: (max: number) => number = randomInt): Challenge[] {
  const pool = [...CHALLENGES];
  const count = 2 + random(2);
  const chosen: Challenge[] = [];
  while (chosen.length < count && pool.length > 0) chosen.push(pool.splice(random(pool.length), 1)[0]!);
  return chosen;
}

export type EngineSource = () => Promise<LivenessEngine>;

let shared: Promise<LivenessEngine> | undefined;

/**
 * The process's liveness engine (src/identities/liveness/), loaded on first use. The one place the
 * sessions module constructs it: tests and benchmarks pass their own EngineSource instead.
 */
export const sharedLivenessEngine: EngineSource = () => {
  shared ??= loadEngine().catch((err: unknown) => {
    shared = undefined;
    throw err;
  });
  return shared;
};

async function loadEngine(): Promise<LivenessEngine> {
  // The engine's implementation (helper S2) is not in this tree yet: until it is, an attempt's
  // frames are answered 503, never judged by anything else.
  throw new ApiError('SERVICE_UNAVAILABLE', 'The liveness check is not available on this server yet', { retryAfterSeconds: 60 });
}
