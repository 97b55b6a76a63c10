import { sql, type Kysely } from 'kysely';
import type { Static } from 'typebox';
import { maskIdentifier } from '../../identities/lookups.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { pageBySequence, type Page, type Scope } from '../../platform/pagination.js';
import { loadSharp } from '../../platform/sharp.js';
import { sessionWithSteps } from '../../sessions/portal-queries.js';
import { recordShown, shownChecks, shownReasons, subStatusOf } from '../../sessions/render.js';
import { SESSION_SEQUENCE } from '../../sessions/repository.js';
import { isOpen, SESSION_MACHINE } from '../../sessions/states.js';
import type { AttemptRow, SessionApplicant, SessionRow } from '../../sessions/tables.js';
import { SESSION_ID } from '../../sessions/tokens.js';
import { MAX_FILTERED_OFFSET, pageWithCappedCount, type CappedTotal } from './counting.js';
import type { Attempt, SessionDetail, SessionFilterStatus, SessionRow as SessionListRow, SessionStep } from './session-schemas.js';
import { challengeText, ID_TYPE_TEXT, reasonText } from './session-words.js';
import { deliveriesOf } from './detail.js';

/**
 * Verification sessions in the portal's verifications explorer: the list (filters and paging as
 * the other kinds), the detail page's data (steps, attempts and their challenges, scores, the
 * identity found, masked), and the frames, blurred unless revealed (docs/portal-verifications.md).
 */

type ListRow = Static<typeof SessionListRow>;
type Detail = Static<typeof SessionDetail>;
type Step = Static<typeof SessionStep>;
type Fact = { label: string; value: string };

const LIST_COLUMNS = ['id', 'public_id', 'reference', 'status', 'reasons', 'cancelled_by', 'user_consent', 'checks', 'applicant', 'id_type', 'id_number', 'created_at', 'completed_at', 'cancelled_at', 'expired_at', 'unpaid'] as const;
type ListSource = Pick<SessionRow, (typeof LIST_COLUMNS)[number]>;

const FILTER_STATUSES: Record<SessionFilterStatus, readonly SessionRow['status'][]> = {
  in_progress: ['created', 'in_progress'],
  verified: ['verified'],
  failed: ['failed'],
  expired: ['expired'],
  cancelled: ['cancelled'],
};

const iso = (date: Date | string | null | undefined) => (date ? new Date(date).toISOString() : null);
const str = (value: unknown): string => (typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '');
const reasons = (codes: readonly string[] | undefined) => (codes ?? []).map((code) => ({ code, text: reasonText(code) }));
const facts = (...pairs: [string, string][]): Fact[] => pairs.filter(([, value]) => value !== '').map(([label, value]) => ({ label, value }));

function subStatusCode(row: Pick<SessionRow, 'status' | 'reasons' | 'cancelled_by' | 'user_consent' | 'checks' | 'id_type' | 'unpaid'>): string {
  return SESSION_MACHINE.display(row.status, subStatusOf(row as SessionRow)).subStatus;
}

/** Who the session is about, for the list: the ID (masked) and the prefilled name; never the registry record. */
function subjectOf(row: Pick<SessionRow, 'applicant' | 'id_type' | 'id_number'>): string {
  const applicant: SessionApplicant = row.applicant ?? {};
  const idType = row.id_type ?? applicant.idType ?? null;
  const idNumber = row.id_number ?? applicant.idNumber ?? null;
  const id = idType && idNumber ? `${ID_TYPE_TEXT[idType] ?? idType} ${maskIdentifier(idNumber)}` : '';
  const name = [applicant.firstname, applicant.lastname].map(str).filter(Boolean).join(' ');
  return [id, name].filter(Boolean).join(' · ');
}

function toListRow(row: ListSource): ListRow {
  return {
    id: row.public_id,
    reference: row.reference,
    status: row.status,
    subStatus: reasonText(subStatusCode(row)),
    subject: subjectOf(row),
    createdAt: iso(row.created_at)!,
    endedAt: iso(row.completed_at ?? row.cancelled_at ?? row.expired_at),
  };
}

/**
 * The scope's sessions, newest first. Unfiltered, a page is a range of the dense `seq` with an
 * exact total; with a status or a search, the rows come from the 0038 index and the total is
 * counted up to COUNT_CAP, as the other kinds' lists do.
 */
export async function listSessions(
  db: Kysely<DB>,
  scope: Scope,
  filters: { status?: SessionFilterStatus | undefined; q?: string | undefined },
  page: Page,
): Promise<CappedTotal & { rows: ListRow[] }> {
  const q = filters.q?.trim();
  if (!filters.status && !q) {
    const { rows, total } = await pageBySequence<ListSource>(db, { table: 'verification_sessions', kind: SESSION_SEQUENCE, columns: LIST_COLUMNS }, scope, page);
    return { rows: rows.map(toListRow), total, totalCapped: false };
  }
  if (page.offset > MAX_FILTERED_OFFSET) {
    throw new ApiError('VALIDATION_ERROR', `offset can be at most ${MAX_FILTERED_OFFSET} with a status or a search; narrow them to reach older sessions`);
  }
  let query = db.selectFrom('verification_sessions').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode);
  if (filters.status) query = query.where('status', 'in', [...FILTER_STATUSES[filters.status]]);
  if (q) {
    const prefix = `${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = SESSION_ID.test(q) ? query.where((eb) => eb.or([eb('public_id', '=', q), eb('reference', 'like', prefix)])) : query.where('reference', 'like', prefix);
  }
  const { rows, ...count } = await pageWithCappedCount(db, query, query.select([...LIST_COLUMNS, 'seq']).orderBy('seq', 'desc').limit(page.limit).offset(page.offset), sql`order by page.seq desc`);
  return { rows: rows.map((row) => toListRow(row as unknown as ListSource)), ...count };
}

/** A session id from the path: 404 for anything that is not one (the same answer as an unknown one). */
export function parseSessionId(raw: string): string {
  if (!SESSION_ID.test(raw)) throw new ApiError('NOT_FOUND_ERROR', 'No such session');
  return raw;
}

/** The registry record's person fields, as facts; never its photo, address or phone. */
function identityFacts(identity: Record<string, unknown> | null): Fact[] {
  if (!identity) return [];
  const pick = (...names: string[]) => names.map((name) => str(identity[name])).find((value) => value !== '') ?? '';
  const name = [pick('firstname', 'firstName', 'first_name'), pick('middlename', 'middleName', 'middle_name'), pick('lastname', 'lastName', 'surname', 'last_name')].filter(Boolean).join(' ');
  return facts(['Name', name], ['Date of birth', pick('birthdate', 'dateOfBirth', 'dob')], ['Gender', pick('gender')]);
}

function prefilledFacts(applicant: SessionApplicant): Fact[] {
  return facts(
    ['Name', [applicant.firstname, applicant.lastname].map(str).filter(Boolean).join(' ')],
    ['Date of birth', str(applicant.dob)],
    ['ID', applicant.idType && applicant.idNumber ? `${ID_TYPE_TEXT[applicant.idType] ?? applicant.idType} ${maskIdentifier(applicant.idNumber)}` : ''],
  );
}

const pass = (passed: boolean) => (passed ? 'passed' : 'failed');
const codes = (list: readonly string[]) => (list.length > 0 ? `: ${list.map(reasonText).join('; ')}` : '');

function stepsOf(row: SessionRow, attempts: readonly AttemptRow[]): Step[] {
  const steps: (Step & { order: number })[] = [];
  const add = (step: Step) => steps.push({ ...step, order: steps.length });
  add({ step: 'created', at: iso(row.created_at), title: 'Created', detail: 'Through the API; its link was ready to send' });
  if (row.started_at) add({ step: 'opened', at: iso(row.started_at), title: 'Opened', detail: 'The person started the flow' });
  if (row.user_consent) add({ step: 'consent', at: iso(row.user_consent.acceptedAt), title: 'Consent recorded', detail: `The person accepted the consent text, version ${row.user_consent.textVersion}` });
  const idCheck = shownChecks(row).idLookup;
  if (idCheck) {
    const tries = `${idCheck.attempts} ${idCheck.attempts === 1 ? 'try' : 'tries'}`;
    add({ step: 'id', at: null, title: `ID check ${pass(idCheck.passed)}`, detail: `${idCheck.idType ? `${ID_TYPE_TEXT[idCheck.idType] ?? idCheck.idType}, ` : ''}${tries}${codes(idCheck.reasons)}` });
  }
  for (const attempt of attempts) {
    const decision = attempt.decision;
    const sequence = attempt.challenges.map(challengeText).join(', then ');
    if (!decision) {
      add({ step: 'liveness', at: iso(attempt.created_at), title: `Liveness attempt ${attempt.number} ${attempt.status === 'processing' ? 'being decided' : 'started'}`, detail: `Asked: ${sequence}` });
      continue;
    }
    add({ step: 'liveness', at: iso(attempt.decided_at ?? attempt.submitted_at ?? attempt.created_at), title: `Liveness attempt ${attempt.number} ${pass(decision.passed)}`, detail: `Asked: ${sequence}${codes(decision.reasons)}` });
  }
  const face = row.checks.faceMatch;
  if (face) {
    const score = face.matchScore === null ? 'no score' : `score ${face.matchScore} of ${face.maxScore} (${face.matchingThreshold} needed)`;
    add({ step: 'face_match', at: null, title: `Face match ${pass(face.passed)}`, detail: `${score}${face.simulated ? ', decided by the test helper' : ''}${codes(face.reasons)}` });
  }
  const ended = row.completed_at ?? row.cancelled_at ?? row.expired_at;
  if (ended && (row.status === 'verified' || row.status === 'failed' || row.status === 'expired' || row.status === 'cancelled')) {
    const title = { verified: 'Verified', failed: 'Not verified', expired: 'Expired', cancelled: 'Cancelled' }[row.status];
    add({ step: row.status, at: iso(ended), title, detail: reasonText(subStatusCode(row)) });
  }
  // Steps without a time of their own (the ID check, the face match) stay where the flow puts them.
  return steps.map(({ order: _order, ...step }) => step);
}

function attemptsOf(attempts: readonly AttemptRow[], frames: NonNullable<Awaited<ReturnType<typeof sessionWithSteps>>>['frames']): Static<typeof Attempt>[] {
  return attempts.map((attempt) => {
    const decision = attempt.decision;
    const outcomes = decision?.challenges ?? [];
    return {
      number: attempt.number,
      status: attempt.status,
      createdAt: attempt.created_at.toISOString(),
      submittedAt: iso(attempt.submitted_at),
      decidedAt: iso(attempt.decided_at),
      challenges: attempt.challenges.map((challenge, index) => {
        const outcome = outcomes[index]?.challenge === challenge ? outcomes[index] : outcomes.find((o) => o.challenge === challenge);
        return { challenge, text: challengeText(challenge), passed: outcome ? outcome.passed : null, atMs: outcome?.atMs ?? null };
      }),
      reasons: reasons(decision?.reasons),
      scores: decision?.scores ?? null,
      cpuMs: decision ? Math.round(decision.cpuMs) : null,
      frames: frames
        .filter((frame) => frame.attemptId === attempt.id)
        .map((frame) => ({ position: frame.position, atMs: frame.atMs, stored: frame.stored, frontal: decision?.frontalFrame === frame.position })),
    };
  });
}

/** Everything the session page shows; 404 when the session is not the scope's. */
export async function sessionDetail(db: Kysely<DB>, scope: Scope, publicId: string, canRevealFrames: boolean): Promise<Detail & { internalId: number }> {
  const found = await sessionWithSteps(db, scope, publicId);
  if (!found) throw new ApiError('NOT_FOUND_ERROR', 'No such session');
  const { row, attempts, frames } = found;
  const display = SESSION_MACHINE.display(row.status, subStatusOf(row));
  // The registry's answer as the API shows it: its record only once the session's price is settled.
  const { idLookup: idCheck, liveness, faceMatch: face } = shownChecks(row);
  return {
    internalId: Number(row.id),
    id: row.public_id,
    reference: row.reference,
    status: row.status,
    statusText: display.status,
    subStatus: display.subStatus,
    subStatusText: reasonText(display.subStatus),
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    endedAt: iso(row.completed_at ?? row.cancelled_at ?? row.expired_at),
    anonymised: row.anonymised_at !== null,
    requestedChecks: { liveness: row.check_liveness, faceMatch: row.check_face_match },
    idTypes: row.id_types,
    price: Number(row.price),
    identity:
      row.id_type && row.id_number
        ? { idType: row.id_type, idTypeText: ID_TYPE_TEXT[row.id_type] ?? row.id_type, idNumber: maskIdentifier(row.id_number), facts: identityFacts(recordShown(row) ? row.identity : null) }
        : null,
    prefilled: prefilledFacts(row.applicant ?? {}),
    consent: row.user_consent ? { acceptedAt: row.user_consent.acceptedAt, textVersion: row.user_consent.textVersion } : null,
    idCheck: idCheck ? { passed: idCheck.passed, tries: idCheck.attempts, fieldMatches: idCheck.fieldMatches, reasons: reasons(idCheck.reasons) } : null,
    liveness: liveness ? { passed: liveness.passed, attempts: liveness.attempts, scores: liveness.scores, reasons: reasons(liveness.reasons), simulated: liveness.simulated } : null,
    faceMatch: face
      ? { passed: face.passed, matchScore: face.matchScore, matchingThreshold: face.matchingThreshold, maxScore: face.maxScore, reasons: reasons(face.reasons), simulated: face.simulated }
      : null,
    reasons: reasons(shownReasons(row)),
    steps: stepsOf(row, attempts),
    attempts: attemptsOf(attempts, frames),
    canRevealFrames,
    cancellable: isOpen(row.status),
    unpaid: row.unpaid,
    deliveries: await deliveriesOf(db, 'session', scope, Number(row.id)),
  };
}

/** How wide the blurred rendering's source is: at 16 pixels across, no face can be recognised. */
export const BLUR_SOURCE_WIDTH = 16;

/**
 * A frame as the page shows it before anyone reveals it: shrunk to 16 pixels wide, then scaled up
 * smooth. Frames are kept as the device sent them (replay detection hashes those bytes), and one
 * that does not decode gets a 422: the engine counted it as a frame without a picture.
 */
export async function blurredFrame(jpeg: Buffer): Promise<Buffer> {
  const sharp = await loadSharp();
  const tiny = await sharp(jpeg)
    .rotate()
    .resize({ width: BLUR_SOURCE_WIDTH })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch(() => {
      throw new ApiError('UNPROCESSABLE', 'This frame does not decode as a picture: the device sent bytes that are not a whole JPEG, so it has nothing to blur');
    });
  return sharp(tiny.data, { raw: { width: tiny.info.width, height: tiny.info.height, channels: tiny.info.channels } })
    .resize({ width: 160, kernel: 'cubic' })
    .blur(4)
    .jpeg({ quality: 70 })
    .toBuffer();
}
