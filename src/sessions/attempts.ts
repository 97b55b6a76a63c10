import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import { putFile, recordFiles, sniffImage, type StoredFile } from '../files/service.js';
import { decodeForDetection, ImageError } from '../identities/biometrics/image.js';
import { decideFaceMatch, selfieForProvider, type CannotCompare, type FaceDecision } from '../identities/biometrics/match-decision.js';
import { faceMatchRoutingOf, LOCAL_ROUTING } from '../identities/biometrics/match-routing.js';
import { UnusableHeldPhoto, type BiometricIdType } from '../identities/biometrics/matcher.js';
import { fetchPhoto, PHOTO_FETCH_DEFAULTS } from '../identities/biometrics/photo-url.js';
import type { FrameProblem } from '../identities/biometrics/quality.js';
import { distanceToScore, MAX_SCORE, type PhotoMatching } from '../identities/biometrics/score.js';
import type { FaceMatchType } from '../identities/upstreams/adapter.js';
import { matchThresholdOf } from '../identities/biometrics/threshold-setting.js';
import type { LivenessDecision } from '../identities/liveness/engine.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { DecisionQueue } from './decision-queue.js';
import type { FlowDeps } from './flow.js';
import { findPerson } from './identity.js';
import { frameRetentionDays } from './view.js';
import { ATTEMPT_ID } from './tokens.js';
import { CAPTURE, MAX_FRAME_BYTES, MAX_LIVENESS_ATTEMPTS } from './liveness.js';
import { lockSessionById, updateSession } from './repository.js';
import { isOpen, type SessionReason } from './states.js';
import type { AttemptDecision, AttemptRow, FaceMatchCheck, LivenessCheck, SessionIdType, SessionRow } from './tables.js';
import { applySessionTransition } from './transition.js';

/**
 * One liveness attempt's frames, from upload to decision (docs/sessions.md, "Liveness step"):
 * the frames are checked, stored encrypted, refused when any of them was already sent in another
 * attempt (any session), judged by the liveness engine, and — when they pass and the session asks
 * for it — the engine's frontal frame is compared with the registry photo. The session then
 * completes (charge and webhook in the same transaction) or goes back to the liveness step.
 */

export interface FrameUpload {
  /** Ms since the first frame, one per frame. */
  timestamps: number[];
  frames: Buffer[];
}

export const attemptNotFound = () => new ApiError('NOT_FOUND_ERROR', 'Liveness attempt not found');

/**
 * Whether an attempt takes frames now: it is the session's (404 otherwise), open and not past its
 * time, and the session's ID has passed (409 otherwise). Asked before a frames form is read
 * (SessionFlow.admitFrames) and again when its frames claim the attempt.
 */
export function assertTakesFrames(attempt: Pick<AttemptRow, 'status' | 'expires_at'> | undefined, session: SessionRow, now: Date): void {
  if (!attempt) throw attemptNotFound();
  if (attempt.status !== 'open') throw new ApiError('CONFLICT', 'These challenges were already answered; start a new attempt');
  if (attempt.expires_at <= now) throw new ApiError('CONFLICT', 'The time for these challenges is up; start a new attempt');
  if (!session.checks.idLookup?.passed || !session.id_type || !session.id_number) throw new ApiError('CONFLICT', 'Verify the ID first');
}

/** Whose liveness decision runs next on the engine's one model thread (src/sessions/decision-queue.ts). */
export const decisions = new DecisionQueue();

/** The face match's idType for the registry photo cache (a vNIN is a tokenised NIN; a licence is FRSC's). */
const BIOMETRIC_TYPE: Record<SessionIdType, BiometricIdType> = { BVN: 'bvn', NIN: 'nin', VNIN: 'nin', DRIVERS_LICENSE: 'frsc' };

export function checkUpload(upload: FrameUpload): void {
  const { frames, timestamps } = upload;
  if (frames.length === 0) throw new ApiError('VALIDATION_ERROR', 'Send the frames as files named "frame"');
  if (frames.length > CAPTURE.maxFrames) throw new ApiError('VALIDATION_ERROR', `At most ${CAPTURE.maxFrames} frames per attempt`);
  if (timestamps.length !== frames.length) throw new ApiError('VALIDATION_ERROR', `timestamps must hold one number per frame (${frames.length} frames, ${timestamps.length} timestamps)`);
  let previous = -1;
  for (const at of timestamps) {
    if (!Number.isInteger(at) || at < 0 || at > 600_000 || at < previous) {
      throw new ApiError('VALIDATION_ERROR', 'timestamps must be whole milliseconds since the first frame, in order, from 0 to 600000');
    }
    previous = at;
  }
  frames.forEach((frame, i) => {
    if (frame.length > MAX_FRAME_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE', `Frame ${i + 1} is larger than ${MAX_FRAME_BYTES / 1024} KB`);
    if (sniffImage(frame) !== 'image/jpeg') throw new ApiError('VALIDATION_ERROR', `Frame ${i + 1} is not a JPEG image`);
  });
}

export async function decideAttempt(deps: FlowDeps, row: SessionRow, attemptId: string, upload: FrameUpload, now: Date): Promise<SessionRow> {
  if (!ATTEMPT_ID.test(attemptId)) throw attemptNotFound();
  checkUpload(upload);
  const release = await decisions.take(row.org_id, row.mode);
  try {
    return await decide(deps, row, attemptId, upload, now);
  } finally {
    release();
  }
}

async function decide(deps: FlowDeps, row: SessionRow, attemptId: string, upload: FrameUpload, now: Date): Promise<SessionRow> {
  const { db } = deps;
  // 1. Claim the attempt: one submission each, before it expires, for the ID the session holds now
  //    (recorded with it: the face is compared with that ID's photo, and only that ID can complete).
  const attempt = await db.transaction().execute(async (trx) => {
    const session = await lockSessionById(trx, Number(row.id));
    if (!session || !isOpen(session.status)) throw new ApiError('CONFLICT', 'This verification has already ended; reload it to see the result');
    const found = await trx.selectFrom('session_liveness_attempts').selectAll().where('id', '=', attemptId).where('session_id', '=', Number(row.id)).executeTakeFirst();
    assertTakesFrames(found, session, now);
    return trx
      .updateTable('session_liveness_attempts')
      .set({ status: 'processing', submitted_at: now, id_type: session.id_type, id_number: session.id_number })
      .where('id', '=', attemptId)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  // 2. Store the frames (encrypted) and judge them.
  let stored: StoredFile[] = [];
  let judged: { decision: AttemptDecision; faceFrames: Buffer[] };
  let faceMatch: FaceMatchCheck | undefined;
  try {
    stored = await Promise.all(upload.frames.map((frame) => putFile(deps.store, frame, 'image/jpeg')));
    await db.transaction().execute(async (trx) => {
      await recordFiles(trx, { orgId: row.org_id, mode: row.mode }, stored);
      await trx
        .insertInto('session_frames')
        .values(stored.map((file, i) => ({ attempt_id: attemptId, position: i, file_id: file.id, sha256: file.sha256, at_ms: upload.timestamps[i]!, created_at: now })))
        .execute();
    });
    judged = await judge(deps, row, attempt, upload, stored);
    // 3. The face match, only for a live face and only when asked for. Frames too poor to compare
    //    are not a mismatch: the attempt fails POOR_QUALITY, saying why, and the person tries again.
    if (judged.decision.passed && row.check_face_match && judged.faceFrames.length > 0) {
      const outcome = await matchFace(deps, row, matchedId(attempt), judged.faceFrames);
      if ('retake' in outcome) judged.decision = { ...judged.decision, passed: false, reasons: ['POOR_QUALITY'], quality: outcome.retake };
      else faceMatch = outcome;
    }
  } catch (err) {
    // Nothing was decided (the frames could not be stored, the engine could not run, or no
    // registry answered for the face match's photo): the attempt may be sent again; what was
    // stored of it goes. Nothing an attacker can cause leads here after the engine decided: a
    // face match is never refused for want of a place (matchFace).
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('session_frames').where('attempt_id', '=', attemptId).execute();
      if (stored.length > 0) await trx.deleteFrom('uploaded_files').where('id', 'in', stored.map((file) => file.id)).execute();
      await trx.updateTable('session_liveness_attempts').set({ status: 'open', submitted_at: null, id_type: null, id_number: null }).where('id', '=', attemptId).execute();
    });
    await Promise.all(stored.map((file) => deps.store.delete(file.id)));
    throw err;
  }
  // 4. The outcome, applied if the session is still open.
  return db.transaction().execute((trx) => applyDecision(trx, row, attempt, judged.decision, faceMatch, now));
}

/** The engine's decision, or REPLAYED_FRAMES without running it when a frame was seen in another attempt. */
async function judge(deps: FlowDeps, row: SessionRow, attempt: AttemptRow, upload: FrameUpload, stored: StoredFile[]): Promise<{ decision: AttemptDecision; faceFrames: Buffer[] }> {
  const hashes = [...new Set(stored.map((file) => file.sha256))];
  const replayed = await deps.db.selectFrom('session_frames').select('attempt_id').where('sha256', 'in', hashes).where('attempt_id', '<>', attempt.id).limit(1).executeTakeFirst();
  if (replayed) {
    return { decision: { passed: false, reasons: ['REPLAYED_FRAMES'], scores: null, challenges: [], frontalFrame: null, frames: upload.frames.length, cpuMs: 0 }, faceFrames: [] };
  }
  const engine = await deps.engine();
  let result: LivenessDecision;
  try {
    result = await engine.decide({
      attemptId: attempt.id,
      sessionId: row.public_id,
      challenges: attempt.challenges,
      frames: upload.frames.map((jpeg, i) => ({ atMs: upload.timestamps[i]!, jpeg })),
      scope: { orgId: row.org_id, mode: row.mode },
      // The frames' perceptual prints are kept as long as the frames themselves.
      retainUntil: new Date(Date.now() + (await frameRetentionDays(deps.db, row.org_id)) * 86_400_000),
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError('SERVICE_UNAVAILABLE', 'The liveness check could not run; try again in a moment', { retryAfterSeconds: 5 });
  }
  return {
    decision: {
      passed: result.passed,
      reasons: result.reasons,
      scores: result.scores,
      challenges: result.challenges,
      frontalFrame: result.frontalFrame,
      frames: upload.frames.length,
      cpuMs: result.cpuMs,
    },
    faceFrames: faceFrames(upload.frames, result.frontalFrame),
  };
}

/** The frames a session's face match compares: the engine's frontal frame and the capture's "look straight" lead-in. */
export const FACE_MATCH_FRAMES = { leadIn: 3, max: 4 } as const;

function faceFrames(frames: readonly Buffer[], frontal: number | null): Buffer[] {
  if (frontal === null) return [];
  const picked = [frontal, ...Array.from({ length: FACE_MATCH_FRAMES.leadIn }, (_, i) => i)].filter((index, i, all) => index < frames.length && all.indexOf(index) === i);
  return picked.slice(0, FACE_MATCH_FRAMES.max).map((index) => frames[index]!);
}

/** `threshold`: the distance the match was decided at (the organization's when it ran), recorded as a score. */
function faceMatchCheck(threshold: number, matchScore: number | null, passed: boolean, reasons: SessionReason[]): FaceMatchCheck {
  return { passed, matchScore, matchingThreshold: distanceToScore(threshold), maxScore: MAX_SCORE, reasons, simulated: false, engine: 'local' };
}

/** The provider's identity type for each session ID type; a vNIN is a token no provider's selfie match takes. */
const FACE_MATCH_TYPE: Record<SessionIdType, FaceMatchType | undefined> = { BVN: 'bvn', NIN: 'nin', VNIN: undefined, DRIVERS_LICENSE: 'drivers_license' };

/** The local model found no frame good enough to compare: the person is asked to retake, whatever the routing. */
class Retake extends Error {
  constructor(readonly quality: FrameProblem[]) {
    super('retake');
  }
}

/** The ID an attempt's face is compared with: the session's when its frames were claimed. */
interface MatchedId {
  idType: SessionIdType;
  idNumber: string;
}

function matchedId(attempt: AttemptRow): MatchedId {
  return { idType: attempt.id_type!, idNumber: attempt.id_number! };
}

/** The registry photo of the ID as base64 (fetched when the registry holds a URL), or undefined. */
async function registryPhoto(deps: FlowDeps, row: SessionRow, id: MatchedId): Promise<string | undefined> {
  const record = await findPerson(deps.registry(row.mode), id.idType, id.idNumber);
  const photo = record?.photo?.trim();
  if (!photo) return undefined;
  if (!/^https?:\/\//i.test(photo)) return photo;
  try {
    return (await fetchPhoto(photo, { ...PHOTO_FETCH_DEFAULTS, allowPrivate: deps.allowPrivateUrls })).toString('base64');
  } catch {
    return undefined;
  }
}

/**
 * The face frames against the ID's registry photo, counted in the organization's face-match places
 * (shared with the biometrics endpoint) but never refused for want of one: the liveness decision it
 * follows cost seconds, and an attempt is decided once.
 */
async function matchFace(deps: FlowDeps, row: SessionRow, id: MatchedId, frames: readonly Buffer[]): Promise<FaceMatchCheck | { retake: FrameProblem[] }> {
  const release = deps.faceMatchCapacity.hold(row.org_id);
  try {
    return await compareWithRegistry(deps, row, id, frames);
  } finally {
    release();
  }
}

/**
 * The face frames against the ID's registry photo, by the engine the organization's live routing
 * names (docs/upstreams.md, "Face matches"): the local model, or a provider's selfie match, which is
 * sent the engine's frontal frame. A provider that cannot answer where the local model is not its
 * fallback throws FaceMatchUnavailable: nothing is decided, and the attempt may be sent again.
 */
async function compareWithRegistry(deps: FlowDeps, row: SessionRow, id: MatchedId, frames: readonly Buffer[]): Promise<FaceMatchCheck | { retake: FrameProblem[] }> {
  const gateway = row.mode === 'live' ? deps.faceMatchGateway : undefined;
  let decided: FaceDecision;
  try {
    decided = await decideFaceMatch({
      routing: gateway ? await faceMatchRoutingOf(deps.db, row.org_id) : LOCAL_ROUTING,
      gateway,
      type: FACE_MATCH_TYPE[id.idType],
      key: id.idNumber,
      local: () => compareLocally(deps, row, id, frames),
      selfie: () => selfieForProvider(frames[0]!),
    });
  } catch (err) {
    if (err instanceof Retake) return { retake: err.quality };
    throw err;
  }
  if ('cannotCompare' in decided) return { ...faceMatchCheck(await matchThresholdOf(deps.db, row.org_id), null, false, ['NO_REGISTRY_PHOTO']), engine: decided.engine };
  const { matching, engine } = decided;
  return { passed: matching.match, matchScore: matching.matchScore, matchingThreshold: matching.matchingThreshold, maxScore: matching.maxScore, reasons: matching.match ? [] : ['FACE_MISMATCH'], simulated: false, engine };
}

/**
 * The face frames against the ID's registry photo with the biometrics face matcher (several frames
 * fused after its quality gate: FaceMatcher.matchFrames), at the organization's threshold as it is
 * now (an operator may have changed it since the session began). Throws Retake when no frame was
 * good enough to compare.
 */
async function compareLocally(deps: FlowDeps, row: SessionRow, id: MatchedId, frames: readonly Buffer[]): Promise<PhotoMatching | { cannotCompare: CannotCompare }> {
  const threshold = await matchThresholdOf(deps.db, row.org_id);
  const photo = await registryPhoto(deps, row, id);
  if (!photo) return { cannotCompare: 'no_photo' };
  const images = [];
  for (const frame of frames) {
    try {
      images.push(await decodeForDetection(frame));
    } catch (err) {
      if (!(err instanceof ImageError)) throw err;
    }
  }
  try {
    const outcome = await deps.matcher.matchFrames({ mode: row.mode, idType: BIOMETRIC_TYPE[id.idType], idNumber: id.idNumber, photo }, images, threshold);
    if (outcome.retake) throw new Retake(outcome.retake);
    return outcome.matching;
  } catch (err) {
    // No face in the registry's photo, or one that does not decode, is no photo to compare with.
    if (err instanceof UnusableHeldPhoto) return { cannotCompare: err.reason };
    throw err;
  }
}

async function applyDecision(
  trx: Transaction<DB>,
  row: SessionRow,
  attempt: AttemptRow,
  decision: AttemptDecision,
  faceMatch: FaceMatchCheck | undefined,
  now: Date,
): Promise<SessionRow> {
  const session = (await lockSessionById(trx, Number(row.id)))!;
  // The face was compared with the ID the session held when the frames were claimed: should the
  // session hold another now, this attempt decides nothing about it and fails (the person may
  // try again, against the ID the session holds).
  const sameId = session.checks.idLookup?.passed === true && session.id_type === attempt.id_type && session.id_number === attempt.id_number;
  const decided = sameId ? decision : { ...decision, passed: false };
  await trx
    .updateTable('session_liveness_attempts')
    .set({ status: decided.passed ? 'passed' : 'failed', decision: JSON.stringify(decided), decided_at: now })
    .where('id', '=', attempt.id)
    .execute();
  if (!isOpen(session.status) || !sameId) return session;
  const passed = decision.passed && (faceMatch?.passed ?? true);
  const exhausted = !decision.passed && attempt.number >= MAX_LIVENESS_ATTEMPTS;
  const livenessReasons: string[] = exhausted ? [...decision.reasons, 'LIVENESS_ATTEMPTS_EXHAUSTED'] : decision.reasons;
  const liveness: LivenessCheck = {
    passed: decision.passed,
    attempts: attempt.number,
    scores: decision.scores,
    challenges: decision.challenges,
    reasons: livenessReasons,
    simulated: false,
  };
  const checks = JSON.stringify({ ...session.checks, liveness, ...(faceMatch ? { faceMatch } : {}) });
  if (passed) return applySessionTransition(trx, session, { to: 'verified', patch: { checks }, now });
  // A live face that is not the registry's ends the session: trying other faces is not a retry.
  if (faceMatch && !faceMatch.passed) return applySessionTransition(trx, session, { to: 'failed', reasons: faceMatch.reasons as SessionReason[], patch: { checks }, now });
  if (exhausted) return applySessionTransition(trx, session, { to: 'failed', reasons: livenessReasons as SessionReason[], patch: { checks }, now });
  return updateSession(trx, Number(session.id), { checks });
}
