import { Type } from 'typebox';
import { Enum, Opt, Str } from '../agents/schemas.js';
import { ConsentBody } from '../consent/consent.js';
import { CHALLENGES } from '../identities/liveness/engine.js';
import { requestIdProperty } from '../platform/error-schemas.js';
import { DEFAULT_EXPIRES_IN_MINUTES, MAX_EXPIRES_IN_MINUTES, MAX_METADATA_KEYS, MIN_EXPIRES_IN_MINUTES } from './input.js';
import { SESSION_REASONS } from './states.js';
import { SESSION_ID_TYPES } from './tables.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Reasons = Type.Array(Str(), { description: `Closed reason codes, empty when passed: ${SESSION_REASONS.join(', ')}` });
const FieldMatches = Type.Object({ firstname: Type.Boolean(), lastname: Type.Boolean(), dob: Type.Boolean() });
const Scores = Type.Object({
  antispoof: Type.Number({ description: 'Passive anti-spoofing: the median real-face probability of the described frames (fr_liveness), 0 (spoof) to 1 (real); under 0.3 fails the attempt SPOOF_SUSPECTED' }),
  live: Type.Number({ description: "Human's liveness score, 0 to 1: reported, not used to decide (it did not separate spoofs on the samples measured; docs/liveness.md)" }),
  consistency: Type.Number({ description: 'Similarity of the face across the frames (1: the same face throughout)' }),
});
const ChallengeOutcome = Type.Object({ challenge: Str(), passed: Type.Boolean(), atMs: Nullable(Type.Number()) });

export const SessionApplicantRecord = Type.Object(
  { firstname: Opt(Str()), lastname: Opt(Str()), dob: Opt(Str('DD-MM-YYYY')), idType: Opt(Str()), idNumber: Opt(Str()) },
  { description: 'What the customer prefilled, as sent (normalised)' },
);

export const SessionRecord = Type.Object({
  id: Str('The session id (ses_...)'),
  reference: Str("The caller's reference, or the generated one (vsr_...)"),
  url: Nullable(Str('The hosted page for the end user; only in the create answer (the link is stored hashed)')),
  clientSecret: Nullable(Str('For the web SDK (Vouch.open); only in the create answer')),
  status: Type.Object(
    { status: Str(), subStatus: Str(), state: Str() },
    { description: 'state: CREATED, IN_PROGRESS, COMPLETED, FAILED, EXPIRED or CANCELLED; subStatus: the step awaited, or the first reason (docs/sessions.md)' },
  ),
  idTypes: Type.Array(Str()),
  applicant: SessionApplicantRecord,
  requestedChecks: Type.Object({ idLookup: Type.Literal(true), liveness: Type.Boolean(), faceMatch: Type.Boolean(), screening: Type.Boolean() }),
  idType: Nullable(Str('The ID type the lookup found')),
  identity: Nullable(
    Type.Record(Type.String(), Type.Unknown(), {
      description: "The record found, as the type's identity lookup returns it for the account's payload type; shown once the session has paid its price (with its first ID lookup); null for good for a session that ended unpaid",
    }),
  ),
  checks: Type.Object({
    idLookup: Nullable(
      Type.Object(
        { passed: Type.Boolean(), idType: Nullable(Str()), attempts: Type.Integer(), fieldMatches: Nullable(FieldMatches), reasons: Reasons },
        { description: 'fieldMatches and a failed try\'s reasons come from the record found: null and empty until the session has paid (with its first ID lookup), and for good when it ended unpaid, like identity' },
      ),
    ),
    liveness: Nullable(
      Type.Object({
        passed: Type.Boolean(),
        attempts: Type.Integer(),
        scores: Nullable(Scores),
        challenges: Type.Array(ChallengeOutcome),
        reasons: Reasons,
        simulated: Type.Boolean({ description: 'True when the sandbox test helper decided it' }),
      }),
    ),
    faceMatch: Nullable(
      Type.Object({
        passed: Type.Boolean(),
        matchScore: Nullable(Type.Number()),
        matchingThreshold: Type.Number(),
        maxScore: Type.Number(),
        reasons: Reasons,
        simulated: Type.Boolean(),
        engine: Type.String({
          description: "`local`, this service's face model, or the upstream provider the operator routes the organization's live face matches to; then the scores are on its scale",
        }),
      }),
    ),
    screening: Nullable(
      Type.Object(
        {
          passed: Type.Boolean({ description: 'No watchlist entry scored at or above the threshold when the session screened' }),
          screeningId: Type.Integer({ description: 'The screening (GET /v1/verifications/screenings/:id): its hits, their review and its monitoring' }),
          status: Str("The screening's status when the session screened: CLEAR or PENDING_REVIEW"),
          hits: Type.Integer(),
          reasons: Type.Array(Str(), { description: 'SCREENING_MATCH when there are hits to review; empty when passed' }),
        },
        { description: "With checks.screening, once the ID lookup has found the person; a hit does not change the session's outcome" },
      ),
    ),
  }),
  reasons: Reasons,
  userConsent: Nullable(Type.Object({ acceptedAt: Str(), ip: Str(), textVersion: Str() }, { description: "The end user's consent on the page" })),
  redirectUrl: Nullable(Str()),
  metadata: Type.Record(Type.String(), Type.String()),
  createdAt: Str('ISO 8601, UTC'),
  startedAt: Nullable(Str('When the end user accepted the consent')),
  completedAt: Nullable(Str('When it ended verified or failed')),
  expiresAt: Str(),
  endedAt: Nullable(Str('When it ended, however it ended')),
});

export const CreateSessionBody = Type.Object({
  reference: Opt(Str('Your unique reference (per account and mode); generated when absent')),
  idTypes: Opt(Type.Array(Str(), { description: `IDs the end user may give: ${SESSION_ID_TYPES.join(', ')} (default all)` })),
  applicant: Opt(
    Type.Object(
      {
        firstname: Opt(Str()),
        lastname: Opt(Str()),
        dob: Opt(Str('DD-MM-YYYY')),
        idType: Opt(Str(SESSION_ID_TYPES.join(', '))),
        idNumber: Opt(Str()),
      },
      { description: "Prefilled details, matched against the record found like a lookup's; the risk level's fields are required. With idType and idNumber the ID step is skipped." },
    ),
  ),
  checks: Opt(
    Type.Object(
      {
        liveness: Opt(Type.Boolean({ description: 'Default true' })),
        faceMatch: Opt(Type.Boolean({ description: 'Default true; needs liveness' })),
        screening: Opt(
          Type.Boolean({
            description:
              "Screen the person the ID lookup finds (the registry's name and date of birth) against the watchlists, as POST /v1/verifications/screenings does, at the screening price; default: the organization's setting (off unless turned on). A hit does not change the session's outcome: checks.screening names the screening to review (docs/sessions.md, \"Screening\")",
          }),
        ),
      },
      { description: 'The ID lookup always runs' },
    ),
  ),
  redirectUrl: Opt(Str('Where the page sends the end user at the end (http or https)')),
  expiresInMinutes: Opt(Type.Integer({ description: `${MIN_EXPIRES_IN_MINUTES} to ${MAX_EXPIRES_IN_MINUTES} (default ${DEFAULT_EXPIRES_IN_MINUTES})` })),
  metadata: Opt(Type.Record(Type.String(), Type.Unknown(), { description: `Up to ${MAX_METADATA_KEYS} string values, returned as sent` })),
  consent: Opt(ConsentBody),
});

export const SessionParams = Type.Object({ id: Str('The session id (ses_...)') });

export const SessionOutcomeBody = Type.Object({
  outcome: Enum(['verified', 'failed']),
  reason: Opt(Str('For a failed outcome: one closed reason code (default FACE_MISMATCH)')),
});

// ------------------------------------------------------------------------------------------
// The end-user API (under /verify/api/:token)

export const TokenParams = Type.Object({ token: Str('The url token or the client secret (vcs_...)') });
export const AttemptParams = Type.Object({ token: Str(), attemptId: Str() });
export const HandoffParams = Type.Object({ code: Str('The short code') });

export const EndUserView = Type.Object({
  sessionId: Str(),
  status: Str(),
  step: Enum(['consent', 'id', 'liveness', 'processing', 'done']),
  organization: Type.Object({ name: Str(), logoUrl: Nullable(Str()), colour: Nullable(Str()) }),
  testMode: Type.Boolean(),
  idTypes: Type.Array(Str()),
  idTypeDetails: Type.Array(Type.Object({ type: Str(), label: Str(), hint: Str() })),
  prefilled: Type.Object({ idType: Nullable(Str()), idNumberMasked: Nullable(Str()) }),
  checks: Type.Object({ liveness: Type.Boolean(), faceMatch: Type.Boolean() }),
  consent: Type.Object({ purpose: Str(), collected: Type.Array(Str()), retentionDays: Type.Integer(), recipients: Type.Array(Str()), version: Str() }),
  attemptsLeft: Type.Object({ id: Type.Integer(), liveness: Type.Integer() }),
  redirectUrl: Nullable(Str()),
  expiresAt: Str(),
  result: Nullable(Type.Object({ outcome: Enum(['verified', 'failed']), reasons: Type.Array(Str()) })),
  lastAttempt: Nullable(
    Type.Object({
      passed: Type.Boolean(),
      reasons: Type.Array(Str()),
      quality: Type.Array(Str(), {
        description:
          'With POOR_QUALITY from the face match: what kept the frames from being compared with the ID photo, most frequent first (no_face, too_small, too_dark, too_bright, blurred, eyes_closed); empty otherwise',
      }),
    }),
  ),
});

export const ConsentAnswer = Type.Object({ accepted: Type.Literal(true, { description: 'true: the end user accepts the text shown' }) });
export const IdAnswer = Type.Object({
  idType: Opt(Str(SESSION_ID_TYPES.join(', '))),
  idNumber: Opt(Str()),
});
export const EmptyBody = Type.Object({});

export const AttemptAnswer = Type.Object({
  attemptId: Str(),
  challenges: Type.Array(Enum(CHALLENGES)),
  expiresAt: Str(),
  capture: Type.Object({ maxFrames: Type.Integer(), frameIntervalMs: Type.Integer(), maxWidth: Type.Integer() }),
});

export const HandoffAnswer = Type.Object({
  shortUrl: Str(),
  qrSvg: Str('An SVG image of the QR code of shortUrl'),
  expiresAt: Str(),
});

export const IdNotVerifiedError = Type.Object(
  { status: Type.Literal('error'), code: Type.Literal('ID_NOT_VERIFIED'), message: Str(), attemptsLeft: Type.Integer(), requestId: requestIdProperty() },
  { description: 'The ID was not found, or does not match the details given (not told apart)' },
);
