import type { Kysely } from 'kysely';
import type { LivenessEngine } from '../identities/liveness/engine.js';
import { createLivenessEngine } from '../identities/liveness/human-engine.js';
import { DatabasePrintStore } from '../identities/liveness/print-store.js';
import { LIVENESS_CAPTURE, pickChallenges, type LivenessThresholds } from '../identities/liveness/settings.js';
import type { DB } from '../platform/db/schema.js';

/**
 * The session's side of liveness: how many tries, how long an attempt lasts, how the browser
 * captures frames, and where the engine comes from (docs/sessions.md, "The end-user API"; the
 * method itself is the engine's, docs/liveness.md).
 */

/** Liveness attempts per session; a fourth is refused (429 TOO_MANY_ATTEMPTS). */
export const MAX_LIVENESS_ATTEMPTS = 3;
/** ID lookups per session. */
export const MAX_ID_ATTEMPTS = 3;
/** How long an attempt's challenges may be answered: the moves take seconds, a slow upload a minute. */
export const ATTEMPT_TTL_MS = 3 * 60_000;
/** An attempt being decided longer than this was lost (a process stopped): the page may start another. */
export const PROCESSING_TIMEOUT_MS = 2 * 60_000;
/**
 * An ID lookup in flight longer than this was lost (a process stopped mid-lookup): it no longer
 * holds the session's ID step, and its answer, should it still come, is thrown away.
 */
export const ID_LOOKUP_TIMEOUT_MS = 2 * 60_000;

/** What the browser is told to send (the engine's capture settings). */
export const CAPTURE = LIVENESS_CAPTURE;
/** The most one frame may weigh. */
export const MAX_FRAME_BYTES = 300 * 1024;

/** 2 or 3 different challenges in a random order, chosen on the server (the engine's picker). */
export const chooseChallenges = pickChallenges;

export type EngineSource = () => Promise<LivenessEngine>;

/**
 * The liveness engine of an app: the human-based engine (src/identities/liveness/) keeping its
 * frame prints in this database, loaded (models warmed up) on first use and shared by every
 * attempt. The one place the sessions module constructs it; tests and benchmarks may pass
 * another EngineSource, or other thresholds (the default ones otherwise).
 */
export function livenessEngineFor(db: Kysely<DB>, thresholds?: Partial<LivenessThresholds>): EngineSource {
  let loading: Promise<LivenessEngine> | undefined;
  return () => {
    loading ??= (async () => {
      const engine = createLivenessEngine({ prints: new DatabasePrintStore(db), requireScope: true, ...(thresholds ? { thresholds } : {}) });
      await engine.ready();
      return engine;
    })().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
}
