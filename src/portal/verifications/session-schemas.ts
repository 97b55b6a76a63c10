import { Type } from 'typebox';
import { Nullable } from '../schemas.js';
import { MAX_FILTERED_OFFSET } from './counting.js';
import { DeliveryRow, Finding } from './schemas.js';

/** Schemas of the explorer's verification-session routes (docs/portal-verifications.md, "Sessions"). */

const Literals = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
const DateTime = (description: string) => Type.String({ format: 'date-time', description });

/** The list's status words: in_progress covers a session not opened yet (created) and one under way. */
export const SESSION_FILTER_STATUSES = ['in_progress', 'verified', 'failed', 'expired', 'cancelled'] as const;
export type SessionFilterStatus = (typeof SESSION_FILTER_STATUSES)[number];
export const SessionStatusWord = Literals(['created', 'in_progress', 'verified', 'failed', 'expired', 'cancelled'], 'The session’s state: created (not opened yet), in_progress, verified, failed, expired or cancelled');

export const SessionQuery = Type.Object({
  mode: Type.Optional(Literals(['test', 'live'], 'Whose data: test (default) or live')),
  status: Type.Optional(Literals(SESSION_FILTER_STATUSES, 'Only sessions in this state (in_progress includes those not opened yet)')),
  q: Type.Optional(Type.String({ maxLength: 100, description: 'The start of a reference, or a session id (ses_…)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Rows per page, 1 to 100' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: `Rows to skip; with status or q, at most ${MAX_FILTERED_OFFSET}` })),
});

export const Reason = Type.Object({ code: Type.String({ description: 'The closed code (docs/sessions.md)' }), text: Type.String({ description: 'The code in plain English' }) });

export const SessionRow = Type.Object({
  id: Type.String({ description: 'The session id (ses_…)' }),
  reference: Type.String(),
  status: SessionStatusWord,
  subStatus: Type.String({ description: 'Where it waits or why it ended, in plain English' }),
  subject: Type.String({ description: 'The ID type and masked number found or prefilled, and the prefilled name; empty when none yet' }),
  createdAt: DateTime('When it was created'),
  endedAt: Nullable(DateTime('When it was completed, cancelled or expired; null while open')),
});

export const SessionParams = Type.Object({ orgId: Type.String(), id: Type.String({ maxLength: 40, description: 'The session id (ses_…)' }) });

export const FrameParams = Type.Object({
  orgId: Type.String(),
  id: Type.String({ maxLength: 40, description: 'The session id (ses_…)' }),
  attempt: Type.String({ maxLength: 3, description: 'The attempt’s number (1, 2, 3)' }),
  position: Type.String({ maxLength: 4, description: 'The frame’s position in the attempt, from 0' }),
});

export const FrameQuery = Type.Object({
  mode: Type.Optional(Literals(['test', 'live'], 'Whose data: test (default) or live')),
  view: Type.Optional(
    Literals(['blurred', 'full'], 'blurred (default): a 16-pixel-wide rendering scaled up, in which nobody can be recognised; full: the frame itself (owner, admin or developer; written to the access log)'),
  ),
});

const Scores = Type.Object({ antispoof: Type.Number(), live: Type.Number(), consistency: Type.Number() });

export const Attempt = Type.Object({
  number: Type.Integer(),
  status: Literals(['open', 'processing', 'passed', 'failed']),
  createdAt: DateTime('When the challenges were handed out'),
  submittedAt: Nullable(DateTime('When the frames came in')),
  decidedAt: Nullable(DateTime('When the engine decided')),
  challenges: Type.Array(
    Type.Object({
      challenge: Type.String({ description: 'turn_left, turn_right, look_up or blink' }),
      text: Type.String(),
      passed: Nullable(Type.Boolean({ description: 'null until decided' })),
      atMs: Nullable(Type.Integer({ description: 'When the movement was seen, ms after the first frame' })),
    }),
  ),
  reasons: Type.Array(Reason),
  scores: Nullable(Scores),
  cpuMs: Nullable(Type.Integer({ description: 'Server CPU time the decision took' })),
  frames: Type.Array(
    Type.Object({
      position: Type.Integer(),
      atMs: Type.Integer({ description: 'When it was taken, ms after the first frame' }),
      stored: Type.Boolean({ description: 'False once retention deleted the image (its hash stays)' }),
      frontal: Type.Boolean({ description: 'The frame compared with the registry photo' }),
    }),
  ),
});

export const SessionStep = Type.Object({
  step: Literals(['created', 'opened', 'consent', 'id', 'liveness', 'face_match', 'verified', 'failed', 'expired', 'cancelled']),
  at: Nullable(DateTime('When it happened; null when only its order is known')),
  title: Type.String(),
  detail: Type.String(),
});

export const SessionDetail = Type.Object({
  id: Type.String(),
  reference: Type.String(),
  status: SessionStatusWord,
  statusText: Type.String({ description: 'status.status of the API record' }),
  subStatus: Type.String({ description: 'status.subStatus of the API record' }),
  subStatusText: Type.String({ description: 'subStatus in plain English' }),
  createdAt: DateTime('When it was created'),
  expiresAt: DateTime('When its link stops working'),
  endedAt: Nullable(DateTime('When it ended')),
  anonymised: Type.Boolean({ description: 'Personal data removed by retention or an erasure' }),
  requestedChecks: Type.Object({ liveness: Type.Boolean(), faceMatch: Type.Boolean() }),
  idTypes: Type.Array(Type.String()),
  price: Type.Integer({ description: 'Kobo charged, with the first ID lookup (0 in test mode, before any lookup, and when no registry answered it)' }),
  identity: Nullable(
    Type.Object(
      {
        idType: Type.String(),
        idTypeText: Type.String(),
        idNumber: Type.String({ description: 'Masked: first three and last two characters' }),
        facts: Type.Array(Finding, { description: 'Name, date of birth and gender the registry holds; no photo' }),
      },
      { description: 'The ID the person gave and what the registry holds for it; null until found' },
    ),
  ),
  prefilled: Type.Array(Finding, { description: 'What your backend prefilled (number masked)' }),
  consent: Nullable(Type.Object({ acceptedAt: Type.String(), textVersion: Type.String() }, { description: 'The person’s consent on the page' })),
  idCheck: Nullable(
    Type.Object({
      passed: Type.Boolean(),
      tries: Type.Integer(),
      fieldMatches: Nullable(Type.Object({ firstname: Type.Boolean(), lastname: Type.Boolean(), dob: Type.Boolean() })),
      reasons: Type.Array(Reason),
    }),
  ),
  liveness: Nullable(Type.Object({ passed: Type.Boolean(), attempts: Type.Integer(), scores: Nullable(Scores), reasons: Type.Array(Reason), simulated: Type.Boolean() })),
  faceMatch: Nullable(
    Type.Object({ passed: Type.Boolean(), matchScore: Nullable(Type.Number()), matchingThreshold: Type.Number(), maxScore: Type.Number(), reasons: Type.Array(Reason), simulated: Type.Boolean() }),
  ),
  reasons: Type.Array(Reason, { description: 'Why the session failed, expired or was cancelled' }),
  steps: Type.Array(SessionStep),
  attempts: Type.Array(Attempt),
  canRevealFrames: Type.Boolean({ description: 'The caller’s role may open frames unblurred' }),
  cancellable: Type.Boolean({ description: 'The session has not ended, so it can still be cancelled (by a role that acts on verifications)' }),
  unpaid: Type.Boolean({ description: 'It ended when the wallet could not pay its price: the outcome stands, the registry’s details are not shown' }),
  deliveries: Type.Array(DeliveryRow, { description: 'The webhook events this session caused, newest first (up to 50)' }),
});
