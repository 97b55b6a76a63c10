import { Type, type Static } from 'typebox';
import { ConsentBody } from '../consent/consent.js';
import { StatusObject } from '../respondents/schemas.js';

const Str = (description?: string) => Type.String(description ? { description } : {});
const Opt = Type.Optional;
const Strings = (description: string) => Type.Array(Type.String(), { description });

export const ScreeningSubjectBody = Type.Object(
  {
    type: Type.String({ description: 'person or organization' }),
    name: Opt(Str('The full name; for a person, firstname, middlename and lastname may be sent instead')),
    firstname: Opt(Str('Person only')),
    middlename: Opt(Str('Person only')),
    lastname: Opt(Str('Person only')),
    dob: Opt(Str('Person only: YYYY-MM-DD or YYYY')),
    gender: Opt(Str('Person only: male or female')),
    nationality: Opt(Str('ISO 3166-1 alpha-2 (NG); for an organization, its country')),
    aliases: Opt(Type.Array(Type.String(), { description: 'Other names the subject is known by (at most 20)' })),
  },
  { description: 'Who is screened' },
);

export const CreateScreeningBody = Type.Object({
  subject: ScreeningSubjectBody,
  reference: Opt(Str('Your reference; generated when absent. A monitored screening with the reference of a monitored one replaces it (docs/screening.md)')),
  lists: Opt(Strings('Source names to screen against (`vouch lists list`); every loaded list when absent')),
  threshold: Opt(Type.Number({ description: 'Lowest score reported as a hit, 0 to 1; the matcher\'s documented default when absent' })),
  monitor: Opt(Type.Boolean({ description: 'Screen again whenever a list it was screened against changes (webhook screening.match)' })),
  metadata: Opt(Type.Record(Type.String(), Type.Unknown(), { description: 'Up to 20 string values, returned as sent' })),
  consent: Opt(ConsentBody),
});
export type CreateScreeningBody = Static<typeof CreateScreeningBody>;

export const HitReviewRecord = Type.Object({
  decision: Type.Union([Type.Literal('true_match'), Type.Literal('false_positive')]),
  note: Str(),
  by: Str('Who reviewed'),
  at: Str('UTC, without offset'),
});

export const ScreeningHitRecord = Type.Object({
  id: Type.Integer(),
  entityId: Str("The list's own identifier of the entry (UN reference number, OFAC uid, ...)"),
  source: Str(),
  listVersion: Type.Integer({ description: 'The version of the list the entry was found in; the fields below are as they were in it' }),
  schema: Str('Person or Organization'),
  name: Str("The entity's primary name"),
  matchedName: Str('The name or alias that matched'),
  score: Type.Number({ description: '0 to 1' }),
  aliases: Strings('The entity\'s other names'),
  topics: Strings('sanction, pep, crime, ...'),
  birthDates: Strings('YYYY, YYYY-MM or YYYY-MM-DD'),
  nationalities: Strings('ISO 3166-1 alpha-2'),
  programs: Strings('Sanctions programmes'),
  explanation: Str('What matched, and what raised or lowered the score'),
  foundBy: Str('screening (when it was made) or monitoring (a later list change)'),
  createdAt: Str('UTC, without offset'),
  review: Opt(HitReviewRecord),
});

export const ScreeningRecord = Type.Object({
  id: Type.Integer(),
  reference: Str(),
  subject: Type.Object({
    type: Str(),
    name: Str(),
    firstname: Str(),
    middlename: Str(),
    lastname: Str(),
    dob: Str(),
    gender: Str(),
    nationality: Str(),
    aliases: Type.Array(Type.String()),
  }),
  status: StatusObject,
  hits: Type.Array(ScreeningHitRecord),
  lists: Type.Array(Type.Object({ source: Str(), version: Type.Integer() }), { description: 'Each list and version screened against' }),
  threshold: Type.Number(),
  monitored: Type.Boolean({ description: 'Screened again when a list changes' }),
  monitoringEndedAt: Str('UTC, without offset; empty unless monitoring was ended'),
  monitoringEndReason: Str('deleted, replaced (a newer screening under the same reference) or unpaid; empty while monitored'),
  metadata: Type.Record(Type.String(), Type.String()),
  createdAt: Str('UTC, without offset'),
});
export type ScreeningRecordData = Static<typeof ScreeningRecord>;
export type ScreeningHitData = Static<typeof ScreeningHitRecord>;
