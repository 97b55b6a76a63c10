import type { Kysely, Transaction, Updateable } from 'kysely';
import QRCode from 'qrcode';
import type { FileStore } from '../files/store.js';
import type { FaceMatchCapacity } from '../identities/biometrics/capacity.js';
import type { FaceMatchGateway } from '../identities/biometrics/match-decision.js';
import type { FaceMatcher } from '../identities/biometrics/matcher.js';
import type { Challenge } from '../identities/liveness/engine.js';
import type { Registry } from '../identities/registry/registry.js';
import type { DB, Mode } from '../platform/db/schema.js';
import type { AuthContext } from '../platform/auth.js';
import { ApiError } from '../platform/errors.js';
import type { ScreeningService } from '../screening/service.js';
import { compareWithApplicant, findPerson, renderIdentity, screeningSubjectOf, type PersonRecord } from './identity.js';
import { ID_TYPE_RULES, readIdType } from './input.js';
import { assertTakesFrames, attemptNotFound, decideAttempt, decisions, type FrameUpload } from './attempts.js';
import { ATTEMPT_TTL_MS, CAPTURE, chooseChallenges, ID_LOOKUP_TIMEOUT_MS, MAX_ID_ATTEMPTS, MAX_LIVENESS_ATTEMPTS, PROCESSING_TIMEOUT_MS, type EngineSource } from './liveness.js';
import { findSessionById, lockSessionById, sessionByTokenHash, updateSession } from './repository.js';
import { admitLinkIdStep } from './links/id-step-limits.js';
import { hostedUrl } from './service.js';
import { isOpen, type SessionReason } from './states.js';
import { assertMayProceed, cannotPay, paySession, refundSession } from './payment.js';
import type { AttemptRow, IdLookupCheck, ScreeningCheck, SessionIdType, SessionRow, VerificationSessionsTable } from './tables.js';
import { ATTEMPT_ID, hashToken, isHandoffCode, isTokenShaped, randomAttemptId, randomHandoffCode, randomUrlToken } from './tokens.js';
import { applySessionTransition } from './transition.js';
import { buildView, consentTextVersion, organizationFacts, stepOf, type EndUserView, type OrganizationFacts } from './view.js';

/**
 * The end user's side of a session (the end-user API under /verify/api/:token, docs/sessions.md):
 * consent, the ID step, liveness attempts and their frames, cancel, and the cross-device handoff.
 * Every step locks the session row; slow work (registry lookups, the liveness engine, the face
 * match) runs between two short transactions, and its result is applied only if the session is
 * still open when it comes back.
 */

/** After a session ends, its tokens show the result this long (the page's result screen and redirect), then nothing. */
export const RESULT_VIEW_MS = 60 * 60_000;
/** A handoff code works this long. */
export const HANDOFF_TTL_MS = 15 * 60_000;
/** Live handoff codes a session may hold at once. */
export const MAX_LIVE_HANDOFFS = 5;

export interface FlowDeps {
  db: Kysely<DB>;
  /** The identity registry of a mode (the identity lookups' registries). */
  registry(mode: Mode): Registry;
  matcher: FaceMatcher;
  /** Face-match places, shared with the biometrics endpoint: a session's match counts against its organization's cap. */
  faceMatchCapacity: FaceMatchCapacity;
  /** The upstream router, when the live registry is one: organizations routed to a provider's face match go through it. */
  faceMatchGateway?: FaceMatchGateway | undefined;
  engine: EngineSource;
  /** The encrypted file store: frames are personal data. */
  store: FileStore;
  /** Screenings (src/screening): a session with checks.screening screens the person its ID lookup finds. */
  screening?: Pick<ScreeningService, 'create'> | undefined;
  publicUrl: string;
  allowPrivateUrls: boolean;
  now?: () => Date;
}

/** A 422 the page shows at the ID field, with the tries left. */
export class IdNotVerified extends Error {
  constructor(
    readonly attemptsLeft: number,
    message: string,
  ) {
    super(message);
  }
}

/** A 429 the page shows as "no tries left". */
export class TooManyAttempts extends Error {}

/** The screening a session asked for could not be made: the ID step answers `answer` and gives its try back. */
class ScreeningNotMade extends Error {
  constructor(readonly answer: ApiError) {
    super(answer.message);
  }
}

export const unknownToken = () => new ApiError('NOT_FOUND_ERROR', 'This verification link is not valid or has expired');
const ended = () => new ApiError('CONFLICT', 'This verification has already ended; reload it to see the result');
const alreadyVerified = () => new ApiError('CONFLICT', 'The ID has already been verified');
const lookupPending = () => new ApiError('CONFLICT', 'An ID is already being checked for this verification; wait for its answer');

/**
 * Whether an ID lookup holds the session: one at a time, so that two IDs sent at once cannot both
 * be looked up and the one answered last overwrite the other. A reservation older than
 * ID_LOOKUP_TIMEOUT_MS was lost with its process and holds nothing any more.
 */
export function lookupInFlight(row: Pick<SessionRow, 'id_lookup_started_at'>, now: Date): boolean {
  return row.id_lookup_started_at !== null && now.getTime() - row.id_lookup_started_at.getTime() < ID_LOOKUP_TIMEOUT_MS;
}

export interface AttemptAnswer {
  attemptId: string;
  challenges: Challenge[];
  expiresAt: string;
  capture: { maxFrames: number; frameIntervalMs: number; maxWidth: number };
}

export class SessionFlow {
  private readonly db: Kysely<DB>;
  constructor(private readonly deps: FlowDeps) {
    this.db = deps.db;
  }

  now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  /**
   * The session a token opens, expired first if its time is up. Unknown tokens, anonymised
   * sessions and sessions that ended more than RESULT_VIEW_MS ago answer the same 404.
   */
  async open(token: string): Promise<SessionRow> {
    if (!isTokenShaped(token)) throw unknownToken();
    const found = await sessionByTokenHash(this.db, hashToken(token));
    if (!found || found.row.anonymised_at) throw unknownToken();
    let row = found.row;
    const now = this.now();
    if (isOpen(row.status) && row.expires_at <= now) row = await this.expire(row, now);
    const endedAt = row.completed_at ?? row.cancelled_at ?? row.expired_at;
    if (!isOpen(row.status) && endedAt && now.getTime() - endedAt.getTime() > RESULT_VIEW_MS) throw unknownToken();
    return row;
  }

  private async expire(row: SessionRow, now: Date): Promise<SessionRow> {
    return this.db.transaction().execute(async (trx) => {
      const locked = (await lockSessionById(trx, Number(row.id)))!;
      if (!isOpen(locked.status) || locked.expires_at > now) return locked;
      return applySessionTransition(trx, locked, { to: 'expired', reasons: ['EXPIRED'], now });
    });
  }

  /**
   * Opens the session for a step: it must still be open (409 otherwise) and, live, its
   * organization must still have live access (403 otherwise: turning it off stops the sessions
   * already open, not only new ones). Cancelling is always allowed.
   */
  private async openForStep(token: string, { cancelling = false } = {}): Promise<SessionRow> {
    const row = await this.open(token);
    if (!isOpen(row.status)) throw ended();
    if (!cancelling) await assertMayProceed(this.db, row);
    return row;
  }

  async view(token: string): Promise<EndUserView> {
    return this.viewOf(await this.open(token));
  }

  async viewOf(row: SessionRow): Promise<EndUserView> {
    const [org, attempts] = await Promise.all([organizationFacts(this.db, row.org_id), this.attemptsOf(Number(row.id))]);
    return buildView(row, org, attempts, this.now());
  }

  private attemptsOf(sessionId: number): Promise<AttemptRow[]> {
    return this.db.selectFrom('session_liveness_attempts').selectAll().where('session_id', '=', sessionId).orderBy('number').execute();
  }

  /** Runs `work` on the session locked, if still open (409 otherwise). */
  private locked<T>(row: SessionRow, work: (trx: Transaction<DB>, locked: SessionRow) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      const locked = await lockSessionById(trx, Number(row.id));
      if (!locked || !isOpen(locked.status)) throw ended();
      return work(trx, locked);
    });
  }

  /** The end user accepts the consent text: recorded with the time, address and text version. A prefilled ID is looked up at once. */
  async consent(token: string, ip: string): Promise<EndUserView> {
    const row = await this.openForStep(token);
    const now = this.now();
    const consented = await this.locked(row, async (trx, locked) => {
      if (locked.user_consent) return locked;
      const userConsent = JSON.stringify({ acceptedAt: now.toISOString(), ip, textVersion: consentTextVersion(locked) });
      if (locked.status === 'created') return applySessionTransition(trx, locked, { to: 'in_progress', patch: { user_consent: userConsent }, now });
      return updateSession(trx, Number(locked.id), { user_consent: userConsent });
    });
    const { idType, idNumber } = consented.applicant;
    if (idType && idNumber && !consented.checks.idLookup) return this.viewOf(await this.lookUp(consented, idType, idNumber, true, ip));
    return this.viewOf(consented);
  }

  /**
   * The ID step. A customer's prefilled ID cannot be replaced by the end user (an empty body
   * retries its lookup after the registry was unavailable); otherwise the end user's ID is
   * looked up, at most MAX_ID_ATTEMPTS times.
   */
  async submitId(token: string, body: { idType?: string | undefined; idNumber?: string | undefined }, ip: string): Promise<EndUserView> {
    const row = await this.openForStep(token);
    if (!row.user_consent) throw new ApiError('CONFLICT', 'Accept the consent first');
    if (row.checks.idLookup?.passed) throw alreadyVerified();
    const prefilled = row.applicant.idType && row.applicant.idNumber ? { idType: row.applicant.idType, idNumber: row.applicant.idNumber } : undefined;
    if (prefilled) {
      if (body.idType !== undefined || body.idNumber !== undefined) {
        throw new ApiError('VALIDATION_ERROR', 'The ID for this verification was given by the organization and cannot be changed here');
      }
      return this.viewOf(await this.lookUp(row, prefilled.idType, prefilled.idNumber, true, ip));
    }
    const idTypeRaw = body.idType?.trim();
    const idNumberRaw = body.idNumber?.trim();
    if (!idTypeRaw || !idNumberRaw) throw new ApiError('VALIDATION_ERROR', 'idType and idNumber are required');
    const idType = readIdType(idTypeRaw);
    if (!idType || !row.id_types.includes(idType)) {
      throw new ApiError('VALIDATION_ERROR', `idType must be one of ${row.id_types.join(', ')}`);
    }
    const idNumber = ID_TYPE_RULES[idType].canonical(idNumberRaw);
    if (!idNumber) throw new ApiError('VALIDATION_ERROR', `The ${ID_TYPE_RULES[idType].label} must be ${ID_TYPE_RULES[idType].hint}`);
    return this.viewOf(await this.lookUp(row, idType, idNumber, false, ip));
  }

  /**
   * One ID lookup, and only one at a time per session: the try is counted and the lookup reserved
   * in the row before the registry is asked, so concurrent submits can neither exceed the limit
   * nor race each other (409 while one is in flight); both are given back if no registry could
   * answer (503). The answer is applied only while the reservation is still this lookup's and no
   * ID has passed: an ID that passed never changes, since a liveness decision compares a face
   * with it. A prefilled ID that is not found or does not match ends the session: the end user
   * cannot correct the customer's data.
   */
  private async lookUp(row: SessionRow, idType: SessionIdType, idNumber: string, prefilled: boolean, ip: string): Promise<SessionRow> {
    const startedAt = this.now();
    const reserved = await this.locked(row, async (trx, locked) => {
      if (locked.checks.idLookup?.passed) throw alreadyVerified();
      if (lookupInFlight(locked, startedAt)) throw lookupPending();
      if (locked.id_attempts >= MAX_ID_ATTEMPTS) throw new TooManyAttempts('No ID tries are left for this verification');
      // A public link's session: its limits per address and per link, and its spend cap (429, 402 before anything is charged).
      if (locked.link_id !== null) await admitLinkIdStep(trx, locked, { address: ip, charging: locked.usage_id === null, now: startedAt });
      // Paid before it looks: the session's price is charged with its first lookup, in this
      // transaction, under the wallet's row lock. Two open sessions can never spend one price, and
      // a wallet that cannot pay gets 402 before anything is asked of a registry or a try is spent.
      const payment = locked.usage_id === null ? await paySession(trx, locked) : undefined;
      const updated = await updateSession(trx, Number(locked.id), { id_attempts: locked.id_attempts + 1, id_lookup_started_at: startedAt, ...payment });
      return { ...updated, paidNow: payment !== undefined };
    });
    const tryNumber = reserved.id_attempts;
    // The reservation is this lookup's while nothing replaced it (after it was taken for lost) or gave it back.
    const ours = (locked: SessionRow) => locked.id_attempts === tryNumber && locked.id_lookup_started_at?.getTime() === startedAt.getTime();
    let record: Awaited<ReturnType<typeof findPerson>>;
    try {
      record = await findPerson(this.deps.registry(row.mode), idType, idNumber);
    } catch (err) {
      await this.giveBack(reserved, startedAt);
      throw err;
    }
    const org = await organizationFacts(this.db, row.org_id);
    const comparison = record ? compareWithApplicant(record, reserved.applicant, org.riskLevel) : undefined;
    const reasons: SessionReason[] = !record ? ['ID_NOT_FOUND'] : comparison!.reasons;
    const check: IdLookupCheck = { passed: reasons.length === 0, idType, attempts: tryNumber, fieldMatches: comparison?.fieldMatches ?? null, reasons };
    const now = this.now();
    const apply = async (trx: Transaction<DB>, locked: SessionRow, screening?: ScreeningCheck): Promise<SessionRow> => {
      if (!ours(locked) || locked.checks.idLookup?.passed) {
        throw new ApiError('CONFLICT', 'Another ID was checked for this verification meanwhile; reload it to see where it stands');
      }
      const checks = JSON.stringify({ ...locked.checks, idLookup: check, ...(screening ? { screening } : {}) });
      if (check.passed) {
        const patch = {
          checks,
          id_type: idType,
          id_number: idNumber,
          identity: JSON.stringify(renderIdentity(idType, record!, locked.applicant, org.payloadType)),
          id_lookup_started_at: null,
        };
        // Without liveness (and so without a face match) the ID decides the session.
        if (!locked.check_liveness) return applySessionTransition(trx, locked, { to: 'verified', patch, now });
        return updateSession(trx, Number(locked.id), patch);
      }
      if (prefilled || locked.id_attempts >= MAX_ID_ATTEMPTS) {
        const final = prefilled ? reasons : [...reasons, 'ID_ATTEMPTS_EXHAUSTED' as const];
        return applySessionTransition(trx, locked, { to: 'failed', reasons: final, patch: { checks: JSON.stringify({ ...locked.checks, idLookup: { ...check, reasons: final } }), id_lookup_started_at: null }, now });
      }
      return updateSession(trx, Number(locked.id), { checks, id_lookup_started_at: null });
    };
    let applied: SessionRow;
    try {
      // The person found is screened before the ID's result is applied, and the result is applied in
      // the screening's transaction: a session never completes without the screening it asked for.
      applied = check.passed && reserved.check_screening ? await this.screenAndApply(row, record!, org, apply) : await this.locked(row, (trx, locked) => apply(trx, locked));
    } catch (err) {
      // A screening that could not be made (no list loaded, a wallet that cannot pay it) leaves the ID unchecked: the try is given back.
      if (err instanceof ScreeningNotMade) {
        await this.giveBack(reserved, startedAt);
        throw err.answer;
      }
      throw err;
    }
    if (isOpen(applied.status) && !applied.checks.idLookup?.passed) {
      const left = MAX_ID_ATTEMPTS - applied.id_attempts;
      throw new IdNotVerified(left, `We could not verify this ID. Check the type and the number, then try again (${left} ${left === 1 ? 'try' : 'tries'} left).`);
    }
    return applied;
  }

  /**
   * Screens the person the ID lookup found, as a screening of the session's organization and mode
   * (charged at the screening price live; test mode screens the sandbox list, free), and applies
   * the ID's result with the screening's check inside the screening's transaction, with the
   * session locked (409 if it ended meanwhile: then no screening is stored or charged).
   */
  private async screenAndApply(
    row: SessionRow,
    record: PersonRecord,
    org: OrganizationFacts,
    apply: (trx: Transaction<DB>, locked: SessionRow, screening: ScreeningCheck) => Promise<SessionRow>,
  ): Promise<SessionRow> {
    const service = this.deps.screening;
    if (!service) throw new ScreeningNotMade(new ApiError('SERVICE_UNAVAILABLE', 'Screening is not available on this server just now. Please try again later.'));
    const caller: AuthContext = { orgId: row.org_id, mode: row.mode, riskLevel: org.riskLevel, payloadType: org.payloadType, rateLimitPerMinute: null, consentRequired: false, secretId: null };
    let applied: SessionRow | undefined;
    try {
      await service.create(caller, { subject: screeningSubjectOf(record), reference: row.reference, metadata: { sessionId: row.public_id } }, async (trx, screening) => {
        const locked = await lockSessionById(trx as Transaction<DB>, Number(row.id));
        if (!locked || !isOpen(locked.status)) throw ended();
        const hits = screening.hits.length;
        applied = await apply(trx as Transaction<DB>, locked, { passed: hits === 0, screeningId: screening.id, status: screening.status.status, hits, reasons: hits > 0 ? ['SCREENING_MATCH'] : [] });
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'PAYMENT_REQUIRED') throw new ScreeningNotMade(cannotPay());
      if (err instanceof ApiError && (err.code === 'SERVICE_UNAVAILABLE' || err.code === 'VALIDATION_ERROR')) {
        throw new ScreeningNotMade(new ApiError('SERVICE_UNAVAILABLE', 'The check this verification needs cannot be made just now. Please try again later.'));
      }
      throw err;
    }
    return applied!;
  }

  /**
   * A lookup that no registry answered gives back its try and its place; and when its try paid the
   * session's price and no lookup of the session has answered since, the price too (a refund with
   * its ledger row, the usage row marked `refunded`): nothing was learned, and the next try pays.
   */
  private async giveBack(reserved: SessionRow & { paidNow: boolean }, startedAt: Date): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const locked = await lockSessionById(trx, Number(reserved.id));
      if (!locked) return;
      const patch: Updateable<VerificationSessionsTable> = {};
      if (locked.id_attempts === reserved.id_attempts && locked.id_lookup_started_at?.getTime() === startedAt.getTime()) {
        Object.assign(patch, { id_attempts: locked.id_attempts - 1, id_lookup_started_at: null });
      }
      if (reserved.paidNow && locked.usage_id === reserved.usage_id && !locked.checks.idLookup) {
        await refundSession(trx, locked);
        Object.assign(patch, { usage_id: null, price: 0 });
      }
      if (Object.keys(patch).length > 0) await updateSession(trx, Number(locked.id), patch);
    });
  }

  /**
   * Starts a liveness attempt: 2–3 challenges chosen here, bound to this session and attempt. An
   * attempt still open (a reloaded page) is given again rather than spending another try. After
   * MAX_LIVENESS_ATTEMPTS, 429; a session whose tries are all spent ends failed.
   */
  async startAttempt(token: string): Promise<AttemptAnswer> {
    const row = await this.openForStep(token);
    const now = this.now();
    const outcome = await this.locked(row, async (trx, locked): Promise<{ attempt: AttemptRow } | { exhausted: boolean }> => {
      if (!locked.check_liveness) throw new ApiError('CONFLICT', 'This verification has no liveness check');
      if (lookupInFlight(locked, now)) throw new ApiError('CONFLICT', 'The ID is still being checked; wait for its answer');
      const attempts = await trx.selectFrom('session_liveness_attempts').selectAll().where('session_id', '=', Number(locked.id)).orderBy('number').execute();
      const step = stepOf(locked, attempts, now);
      if (step === 'consent' || step === 'id') throw new ApiError('CONFLICT', step === 'consent' ? 'Accept the consent first' : 'Verify the ID first');
      if (step === 'processing') throw new ApiError('CONFLICT', 'The last attempt is still being checked');
      // A session whose ID was found before sessions paid at their lookup pays before its selfie.
      if (locked.usage_id === null) await updateSession(trx, Number(locked.id), await paySession(trx, locked));
      const open = attempts.find((a) => a.status === 'open' && a.expires_at > now);
      if (open) return { attempt: open };
      if (locked.liveness_attempts >= MAX_LIVENESS_ATTEMPTS) {
        const stillDeciding = attempts.some((a) => a.status === 'processing' && a.submitted_at && now.getTime() - a.submitted_at.getTime() < PROCESSING_TIMEOUT_MS);
        if (!stillDeciding) {
          const last = attempts.at(-1)?.decision?.reasons ?? [];
          await applySessionTransition(trx, locked, {
            to: 'failed',
            reasons: [...last, 'LIVENESS_ATTEMPTS_EXHAUSTED'],
            patch: { checks: JSON.stringify({ ...locked.checks, liveness: { ...(locked.checks.liveness ?? emptyLiveness()), passed: false, attempts: locked.liveness_attempts, reasons: [...last, 'LIVENESS_ATTEMPTS_EXHAUSTED'] } }) },
            now,
          });
        }
        return { exhausted: true };
      }
      const attempt = await trx
        .insertInto('session_liveness_attempts')
        .values({
          id: randomAttemptId(),
          session_id: Number(locked.id),
          number: locked.liveness_attempts + 1,
          challenges: JSON.stringify(chooseChallenges()),
          created_at: now,
          expires_at: new Date(now.getTime() + ATTEMPT_TTL_MS),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await updateSession(trx, Number(locked.id), { liveness_attempts: locked.liveness_attempts + 1 });
      return { attempt };
    });
    if ('exhausted' in outcome) throw new TooManyAttempts(`No selfie tries are left for this verification (${MAX_LIVENESS_ATTEMPTS} per verification)`);
    return answerOf(outcome.attempt);
  }

  /**
   * Whether frames for this attempt may be sent now, asked before a byte of the form is read (a
   * frames form may weigh 7.6 MB): the token opens an open session whose ID has passed, and the
   * attempt is its own, open and not past its time, and the organization (or test mode) does not
   * already hold all the liveness decisions it may. Answers as submitFrames would (404, 409, 503).
   */
  async admitFrames(token: string, attemptId: string): Promise<void> {
    const row = await this.openForStep(token);
    if (!ATTEMPT_ID.test(attemptId)) throw attemptNotFound();
    const attempt = await this.db.selectFrom('session_liveness_attempts').select(['status', 'expires_at']).where('id', '=', attemptId).where('session_id', '=', Number(row.id)).executeTakeFirst();
    assertTakesFrames(attempt, row, this.now());
    decisions.admit(row.org_id, row.mode);
  }

  /** The frames of an attempt: decided by the liveness engine, then the face match; the session completes when they pass. */
  async submitFrames(token: string, attemptId: string, upload: FrameUpload): Promise<EndUserView> {
    const row = await this.openForStep(token);
    const decided = await decideAttempt(this.deps, row, attemptId, upload, this.now());
    return this.viewOf(decided);
  }

  /** The end user stops: the session ends cancelled (no webhook; nothing more charged: a session pays with its first ID lookup). */
  async cancel(token: string): Promise<EndUserView> {
    const row = await this.openForStep(token, { cancelling: true });
    const now = this.now();
    const cancelled = await this.locked(row, (trx, locked) => applySessionTransition(trx, locked, { to: 'cancelled', reasons: ['CANCELLED'], cancelledBy: 'user', now }));
    return this.viewOf(cancelled);
  }

  /** A short link and its QR code that continue this session on another device (a phone with a camera). */
  async handoff(token: string): Promise<{ shortUrl: string; qrSvg: string; expiresAt: string }> {
    const row = await this.openForStep(token);
    const now = this.now();
    const code = randomHandoffCode();
    const expiresAt = new Date(now.getTime() + HANDOFF_TTL_MS);
    await this.locked(row, async (trx, locked) => {
      const live = await trx
        .selectFrom('session_handoffs')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('session_id', '=', Number(locked.id))
        .where('expires_at', '>', now)
        .executeTakeFirstOrThrow();
      if (Number(live.count) >= MAX_LIVE_HANDOFFS) throw new TooManyAttempts(`At most ${MAX_LIVE_HANDOFFS} links to another device at a time; use one of them`);
      await trx.insertInto('session_handoffs').values({ code_hash: hashToken(code), session_id: Number(locked.id), expires_at: expiresAt, created_at: now }).execute();
    });
    const shortUrl = `${this.deps.publicUrl}/v/${code}`;
    const qrSvg = await QRCode.toString(shortUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
    return { shortUrl, qrSvg, expiresAt: expiresAt.toISOString() };
  }

  /**
   * GET /v/:code: the hosted page's address for the other device, with a token of its own (kind
   * `handoff`, stored hashed like the others), or undefined for a code that is unknown, expired,
   * already used or whose session has ended.
   */
  async redeemHandoff(code: string): Promise<string | undefined> {
    if (!isHandoffCode(code)) return undefined;
    const now = this.now();
    // A code works once: taken by the one statement that deletes it, so a link preview, a passer-by
    // who saw the QR code, or a second tap gets nothing (the page asks for a new code).
    const handoff = await this.db.deleteFrom('session_handoffs').where('code_hash', '=', hashToken(code)).where('expires_at', '>', now).returning(['session_id']).executeTakeFirst();
    if (!handoff) return undefined;
    const session = await findSessionById(this.db, Number(handoff.session_id));
    if (!session || !isOpen(session.status) || session.expires_at <= now) return undefined;
    const token = randomUrlToken();
    await this.db.insertInto('session_tokens').values({ token_hash: hashToken(token), session_id: Number(session.id), kind: 'handoff', created_at: now }).execute();
    return hostedUrl(this.deps.publicUrl, token);
  }
}

export function emptyLiveness() {
  return { passed: false, attempts: 0, scores: null, challenges: [], reasons: [], simulated: false };
}

function answerOf(attempt: AttemptRow): AttemptAnswer {
  return {
    attemptId: attempt.id,
    challenges: attempt.challenges,
    expiresAt: attempt.expires_at.toISOString(),
    capture: { ...CAPTURE },
  };
}
