import { Type, type TSchema } from 'typebox';
import { ModeQuery, Nullable, OrgParams } from '../schemas.js';
import { MAX_FUNDING, MIN_FUNDING } from './service.js';

const Kobo = (description: string) => Type.Integer({ description: `${description}, in kobo (₦1 = 100 kobo)` });
const DateTime = (description: string) => Type.String({ format: 'date-time', description });
const Day = (description: string) => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: `${description} (YYYY-MM-DD, a day in Lagos time)` });

export const LedgerKind = Type.Union([Type.Literal('credit'), Type.Literal('charge'), Type.Literal('refund'), Type.Literal('debit')], {
  description:
    'credit: a funding (a confirmed transfer, or a credit by the operator); charge: a live check; refund: a charge given back (a cancelled verification); debit: money taken off by the operator (a correction), with the reason',
});
export const FundingStatus = Type.Union([Type.Literal('pending'), Type.Literal('confirmed'), Type.Literal('rejected'), Type.Literal('withdrawn')]);

export const BankInstructions = Type.Object(
  {
    bankName: Type.String(),
    accountName: Type.String(),
    accountNumber: Type.String({ description: '10-digit NUBAN' }),
    note: Nullable(Type.String({ description: "The operator's own words about paying in (VOUCH_FUNDING_NOTE)" })),
  },
  { description: 'The account to transfer to; null until the operator configures it' },
);

export const BillingSummary = Type.Object({
  balance: Kobo('What the wallet holds for live checks'),
  currency: Type.Literal('NGN'),
  enabled: Type.Boolean({ description: 'Whether the organization may make live calls at all (API access approved)' }),
  pendingFunding: Kobo('Transfers announced and not yet confirmed'),
  bank: Nullable(BankInstructions),
});

export const LedgerEntry = Type.Object({
  id: Type.Integer(),
  kind: LedgerKind,
  amount: Kobo('Signed: credits and refunds positive, charges and debits negative'),
  balanceAfter: Kobo('The balance right after this entry'),
  description: Type.String(),
  createdAt: DateTime('When'),
});

export const LedgerQuery = Type.Object({
  kind: Type.Optional(LedgerKind),
  from: Type.Optional(Day('First day')),
  to: Type.Optional(Day('Last day, inclusive')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});

export const LedgerCsvQuery = Type.Object({
  kind: Type.Optional(LedgerKind),
  from: Type.Optional(Day('First day')),
  to: Type.Optional(Day('Last day, inclusive')),
});

export const Price = Type.Object({
  type: Type.String({ description: "The check's type, as usage and the ledger name it" }),
  label: Type.String(),
  amount: Kobo('Price of one check in live mode'),
  custom: Type.Boolean({ description: 'Set by the operator for this installation rather than the built-in default' }),
});

const Tally = { count: Type.Integer(), amount: Kobo('Charged') };

export const UsageQuery = Type.Object({
  mode: ModeQuery.properties.mode,
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30, description: 'How many days back, today included' })),
});

export const UsageReport = Type.Object({
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  from: Day('First day shown'),
  to: Day('Last day shown (today)'),
  days: Type.Array(
    Type.Object({
      date: Day('The day'),
      ...Tally,
      byType: Type.Record(Type.String(), Type.Object(Tally), { description: 'Per check type; types without checks that day are absent' }),
    }),
    { description: 'Every day of the range, oldest first; days without checks are zeros' },
  ),
  types: Type.Array(Type.Object({ type: Type.String(), label: Type.String(), ...Tally }), { description: 'Types with checks in the range, most used first' }),
  total: Type.Object(Tally),
});

export const FundingRequest = Type.Object({
  id: Type.String(),
  amount: Kobo('Announced'),
  reference: Type.String({ description: 'Put this in the transfer narration' }),
  status: FundingStatus,
  reason: Nullable(Type.String({ description: 'Why it was rejected' })),
  requestedBy: Nullable(Type.String({ description: 'Who announced it' })),
  createdAt: DateTime('Announced at'),
  decidedAt: Nullable(DateTime('Confirmed, rejected or withdrawn at')),
});

export const FundingRequestBody = Type.Object(
  {
    amount: Type.Integer({ minimum: MIN_FUNDING, maximum: MAX_FUNDING, description: 'Kobo: at least 100000 (₦1,000), at most 10000000000 (₦100,000,000)' }),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 60, description: 'Your own narration (3 to 30 letters, digits, spaces, / . _ -); Vouch makes one like VCH-7KQ2MZ when absent' })),
  },
  { additionalProperties: false },
);

export const FundingCreated = Type.Object({
  request: FundingRequest,
  instructions: Type.Object({
    amount: Kobo('Send exactly this'),
    reference: Type.String({ description: 'Put this in the transfer narration' }),
    bank: BankInstructions,
  }),
});

export const FundingListQuery = Type.Object({
  status: Type.Optional(FundingStatus),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});

export const FundingParams = Type.Object({ ...OrgParams.properties, id: Type.String({ description: 'Funding request id' }) });
