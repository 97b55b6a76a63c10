import { Type, type TSchema } from 'typebox';
import { ErrorStyleA } from '../platform/error-schemas.js';

/** Schemas both field-verification families (address, business) and the agent API share. */

export const Str = (description?: string) => Type.String(description ? { description } : {});
export const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);

export const ErrorA = ErrorStyleA;

/** The error responses of a workflow route (style A everywhere). */
export function errorsA(...codes: (400 | 401 | 402 | 403 | 404 | 409 | 413 | 415)[]) {
  const out: Record<number, typeof ErrorA> = { 500: ErrorA };
  for (const code of codes) out[code] = ErrorA;
  return out;
}

export const success = <T extends TSchema>(data: T) => Type.Object({ status: Type.Literal('success'), data });

export const listOf = <T extends TSchema>(item: T) =>
  Type.Object({
    status: Type.Literal('success'),
    _pagination: Type.Object({ limit: Type.Integer(), offset: Type.Integer(), total: Type.Integer() }),
    data: Type.Array(item),
  });

export const Ok = success(Type.Literal('ok'));

/** One of fixed strings, as a JSON Schema `enum` (one clear validation message, values in the OpenAPI document). */
export const Enum = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

export const IdParam = Type.Object({ id: Str('The verification id (a number)') });

export const StatusObject = Type.Object(
  { status: Str(), subStatus: Str(), state: Str() },
  { description: 'In Progress ×3 while open; Verified / verified / complete; Not Verified / <reason> / complete; Cancelled / cancelled / cancelled' },
);

export const ApplicantRecord = Type.Object({
  firstname: Str(),
  lastname: Str(),
  middlename: Str(),
  phone: Str('E.164, e.g. +2348031234567'),
  idType: Str(),
  idNumber: Str(),
  gender: Str('M or F'),
  birthdate: Str('DD-MM-YYYY'),
  photo: Str('URL'),
});

export const NeighborRecord = Type.Object({ name: Str(), comment: Str(), phone: Str() });

/** Fields of the location, shared by both records. */
export const PlaceFields = {
  city: Str(),
  street: Str(),
  landmark: Str(),
  lga: Str('Canonical LGA name'),
  state: Str('Canonical state name (FCT for the Federal Capital Territory)'),
  country: Str('Always Nigeria'),
};

/** Visit fields, shared by both records. */
export const VisitFields = {
  createdAt: Str('ISO 8601, UTC'),
  completedAt: Str('ISO 8601, UTC; empty until completed'),
  lattitude: Str('Spelled so (spec). Latitude where the agent reported from; empty until visited'),
  longitude: Str('Empty until visited'),
  neighbor: NeighborRecord,
  status: StatusObject,
  flaggedForReview: Type.Boolean({ description: "True when the visit's GPS position was far from the state (docs/field-agents.md)" }),
  reviewReason: Str('Why the record is flagged; empty otherwise'),
};

export const ApplicantBody = (description: string, idTypes: readonly string[], namesRequired: boolean) =>
  Type.Object(
    {
      firstname: namesRequired ? Str() : Opt(Str()),
      lastname: namesRequired ? Str() : Opt(Str()),
      middlename: Opt(Str()),
      dob: Opt(Str('DD-MM-YYYY')),
      phone: Opt(Str('Nigerian phone number')),
      email: Opt(Str()),
      idType: Opt(Str(idTypes.join(', '))),
      idNumber: Opt(Str('BVN, NIN, phone or licence number according to idType')),
      gender: Opt(Str('M, F, Male or Female')),
      photo: Opt(Str('http(s) URL of a photo')),
    },
    { description },
  );

/** A boolean also accepted as the strings "true" and "false" (sample requests). */
export const LooseBoolean = (description: string) => Type.Boolean({ description: `${description}; "true"/"false" strings are accepted` });
