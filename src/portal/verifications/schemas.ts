import { Type, type TSchema } from 'typebox';
import { COUNT_CAP, MAX_FILTERED_OFFSET } from './counting.js';
import { LOOKUP_OUTCOMES, LOOKUP_TYPES } from './lookups.js';
import { Nullable } from '../schemas.js';

/** Schemas of the verifications explorer's routes. */

/** One of fixed strings, as a JSON Schema enum: one clear validation message, a union type in the web app. */
const Literals = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const KIND_VALUES = ['address', 'business', 'guarantor', 'employment'] as const;
export const Kind = Literals(KIND_VALUES, 'Which verifications: address, business, guarantor or employment');
export const EXPLORER_STATUSES = ['in_progress', 'verified', 'not_verified', 'cancelled'] as const;
export const ExplorerStatus = Literals(EXPLORER_STATUSES, 'in_progress until an outcome; then verified, not_verified or cancelled');

const limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Rows per page, 1 to 100' }));

/** A page of a list whose total may stop counting at COUNT_CAP. */
export const CappedPage = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    total: Type.Integer({ description: `How many rows match, counted up to ${COUNT_CAP}` }),
    totalCapped: Type.Boolean({ description: `True when more than ${COUNT_CAP} rows match (total is then ${COUNT_CAP})` }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  });

/** An ISO date or date-time; checked again by the route, which answers 400 for one that is not a real instant. */
const Instant = (description: string) =>
  Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|[+-]\\d{2}:?\\d{2})?)?$', maxLength: 40, description });

export const LookupQuery = Type.Object({
  mode: Type.Optional(Literals(['test', 'live'], 'Whose data: test (default) or live')),
  type: Type.Optional(Literals(LOOKUP_TYPES, 'Only lookups of this type')),
  outcome: Type.Optional(Literals(LOOKUP_OUTCOMES, 'Only lookups with this outcome')),
  q: Type.Optional(
    Type.String({
      maxLength: 40,
      description: 'A lookup type (exact), the whole identity number (matched through its masked form), the masked number as shown, or the start of it',
    }),
  ),
  from: Type.Optional(Instant('Lookups at or after this instant (ISO 8601; a bare date is midnight UTC)')),
  to: Type.Optional(Instant('Lookups before this instant')),
  limit,
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_FILTERED_OFFSET, default: 0, description: `Rows to skip, at most ${MAX_FILTERED_OFFSET}` })),
});

export const Lookup = Type.Object({
  id: Type.Integer(),
  type: Type.String({ description: 'bvn_basic, nin, cac, ... (the price list’s names)' }),
  subject: Type.String({ description: 'The identity number, masked: first three and last two characters' }),
  outcome: Literals(LOOKUP_OUTCOMES),
  price: Type.Integer({ description: 'Kobo charged: 0 in test mode, when nothing was found and when the wallet was short' }),
  createdAt: DateTime('When the lookup was made'),
});

export const VerificationQuery = Type.Object({
  mode: Type.Optional(Literals(['test', 'live'], 'Whose data: test (default) or live')),
  kind: Kind,
  status: Type.Optional(ExplorerStatus),
  q: Type.Optional(Type.String({ maxLength: 100, description: 'The start of a reference, or an id' })),
  limit,
  offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: `Rows to skip; with status or q, at most ${MAX_FILTERED_OFFSET}` }),
  ),
});

export const VerificationRow = Type.Object({
  kind: Kind,
  id: Type.Integer(),
  reference: Type.String(),
  status: ExplorerStatus,
  subject: Type.String({ description: 'The applicant, the business, the guarantor and applicant, or the employee and employer' }),
  createdAt: DateTime('When it was created'),
  completedAt: Nullable(DateTime('When it reached its outcome or was cancelled; null while in progress')),
});

export const TimelineEntry = Type.Object({
  event: Literals(['created', 'assigned', 'visited', 'sent', 'answered', 'completed', 'cancelled']),
  at: DateTime('When it happened'),
  detail: Type.Optional(Type.String({ description: 'What happened, in words (the outcome, the answer)' })),
});

export const Finding = Type.Object({ label: Type.String(), value: Type.String() });

export const DeliveryRow = Type.Object({
  id: Type.Integer(),
  type: Type.String({ description: 'The event type, e.g. address.completed' }),
  status: Literals(['pending', 'delivered', 'failed']),
  attempts: Type.Integer(),
  lastStatusCode: Nullable(Type.Integer()),
  createdAt: DateTime('When the event was queued'),
  deliveredAt: Nullable(DateTime('When the endpoint accepted it')),
});

export const Detail = Type.Object({
  kind: Kind,
  id: Type.Integer(),
  reference: Type.String(),
  status: ExplorerStatus,
  statusText: Type.String({ description: 'The record’s status word (status.status of the API record)' }),
  subStatus: Type.String({ description: 'Why it ended so (status.subStatus), empty when nothing to add' }),
  subject: Type.String(),
  createdAt: DateTime('When it was created'),
  completedAt: Nullable(DateTime('When it reached its outcome or was cancelled')),
  cancellable: Type.Boolean({ description: 'Still in progress, so POST .../cancel may stop it' }),
  facts: Type.Array(Finding, { description: 'What was asked: applicant, place, contacts (identity numbers masked)' }),
  findings: Type.Array(Finding, { description: 'What the field agent or respondent reported; empty until then' }),
  photos: Type.Array(Type.String(), { description: 'Signed photo URLs, valid for a day' }),
  gps: Nullable(Type.Object({ latitude: Type.Number(), longitude: Type.Number() }, { description: 'Where the agent reported from' })),
  flaggedForReview: Nullable(Type.String({ description: 'Why the visit is flagged for review, or null' })),
  related: Type.Array(Type.Object({ kind: Kind, id: Type.Integer(), label: Type.String() })),
  timeline: Type.Array(TimelineEntry),
  deliveries: Type.Array(DeliveryRow, { description: 'The webhook events this verification caused, newest first (up to 50)' }),
  record: Type.Record(Type.String(), Type.Unknown(), {
    description: 'The record exactly as GET /v1/verifications/{kind}s/{id} returns it, identity numbers masked',
  }),
});

export const DetailParams = Type.Object({ orgId: Type.String(), kind: Kind, id: Type.String({ maxLength: 20, description: 'The verification’s id' }) });

export const Created = Type.Object({
  id: Type.Integer(),
  reference: Type.String(),
  record: Type.Record(Type.String(), Type.Unknown(), { description: 'The created record as the API returns it, identity numbers masked' }),
});
