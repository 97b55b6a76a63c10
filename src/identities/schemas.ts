import { Type, type TSchema } from 'typebox';
import { ErrorStyleA, requestIdProperty } from '../platform/error-schemas.js';
import { LookupScreening } from './screening.js';
import { ConsentBody } from '../consent/consent.js';

/** Request and response schemas of the identity routes: validation, types and OpenAPI from one place. */

const Str = (description?: string) => Type.String(description ? { description } : {});
const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);

export const Applicant = Type.Object(
  {
    firstname: Opt(Str('Applicant first name, compared with the record')),
    lastname: Opt(Str('Applicant last name, compared with the record')),
    dob: Opt(Str('Date of birth: DD-MM-YYYY, DD/MM/YYYY or YYYY-MM-DD')),
    consent: Opt(ConsentBody),
  },
  { description: 'Applicant details to verify. Which are required depends on the account risk level.' },
);

export const BvnQuery = Type.Object({
  type: Opt(
    Type.Union([Type.Literal('premium'), Type.Literal('basic')], {
      description: 'Payload: basic (default) or premium',
    }),
  ),
});

export const BvnMatchBody = Type.Object({
  firstname: Opt(Str()),
  lastname: Opt(Str()),
  dob: Opt(Str()),
  gender: Opt(Str('M, F, Male or Female')),
  phoneNumber: Opt(Str('Also accepted as `phone`')),
  emailAddress: Opt(Str('Also accepted as `email`')),
  phone: Opt(Str('Alias of phoneNumber (sample request)')),
  email: Opt(Str('Alias of emailAddress (sample request)')),
  consent: Opt(ConsentBody),
});

export const VninBody = Type.Object({
  firstname: Opt(Str()),
  lastname: Opt(Str()),
  dob: Opt(Str()),
  gender: Opt(Str()),
  phone: Opt(Str()),
  consent: Opt(ConsentBody),
});

export const DriversLicenseBody = Type.Object({
  firstname: Opt(Str()),
  lastname: Opt(Str()),
  dob: Opt(Str()),
  phone: Opt(Str('Accepted (sample request) and ignored')),
  consent: Opt(ConsentBody),
});

export const CacBody = Type.Object({
  type: Opt(Str('limited_company, business or incorprated_trustee (spelled so)')),
  rcNumber: Opt(Type.Union([Type.String(), Type.Integer()], { description: 'Registration number, e.g. 1284395 or RC1284395' })),
  consent: Opt(ConsentBody),
});

export const RefParam = Type.Object({ ref: Str('The identity number') });
export const VninParam = Type.Object({ vNin: Str('The virtual NIN') });

const FieldMatches3 = Type.Object(
  { firstname: Type.Boolean(), lastname: Type.Boolean(), dob: Type.Boolean() },
  { description: 'One boolean per compared field' },
);
const FieldMatchesBvn = Type.Object({
  firstname: Type.Boolean(),
  lastname: Type.Boolean(),
  dob: Opt(Type.Boolean({ description: 'Premium payload only' })),
});

export const BvnData = Type.Object({
  bvn: Str(),
  firstname: Str(),
  lastname: Str(),
  middlename: Str(),
  gender: Str(),
  phone: Str(),
  birthdate: Str('DD-MM-YYYY'),
  photo: Str('Base64-encoded image'),
  fieldMatches: FieldMatchesBvn,
  maritalStatus: Opt(Str()),
  lgaOfResidence: Opt(Str()),
  lgaOfOrigin: Opt(Str()),
  residentialAddress: Opt(Str()),
  stateOfOrigin: Opt(Str()),
  enrollmentBank: Opt(Str()),
  enrollmentBranch: Opt(Str()),
  nameOnCard: Opt(Str()),
  title: Opt(Str()),
  levelOfAccount: Opt(Str()),
  screening: Opt(LookupScreening),
});

export const BvnMatchData = Type.Object({
  bvn: Str(),
  fieldMatches: Type.Object({
    firstname: Type.Boolean(),
    lastname: Type.Boolean(),
    dob: Type.Boolean(),
    gender: Type.Boolean(),
    phoneNumber: Type.Boolean(),
    emailAddress: Type.Boolean(),
  }),
});

export const NinData = Type.Object({
  fieldMatches: FieldMatches3,
  nin: Str(),
  firstname: Str(),
  lastname: Str(),
  middlename: Str(),
  phone: Opt(Str('FULL payload only')),
  gender: Str(),
  birthdate: Str('DD-MM-YYYY'),
  photo: Opt(Str('Base64-encoded image; FULL payload only')),
  screening: Opt(LookupScreening),
});

export const VninData = Type.Object({
  id: Type.Integer(),
  firstname: Str(),
  lastname: Str(),
  birthdate: Str(),
  gender: Str(),
  phone: Opt(Str('FULL payload only')),
  vNin: Str(),
  photo: Opt(Str('URL of an image; FULL payload only')),
  fieldMatches: Type.Object(
    { firstname: Type.Boolean(), lastname: Type.Boolean(), dob: Type.Boolean() },
    { description: 'Addition to the spec: the supplied details compared with the record' },
  ),
  screening: Opt(LookupScreening),
});

export const DriversLicenseData = Type.Object({
  fieldMatches: FieldMatches3,
  licenseNo: Str(),
  firstname: Str(),
  lastname: Str(),
  issuedDate: Str('DD-MM-YYYY'),
  expiryDate: Str('DD-MM-YYYY'),
  stateOfIssue: Str(),
  gender: Str(),
  birthdate: Str('DD-MM-YYYY'),
  photo: Str('Base64-encoded image'),
  screening: Opt(LookupScreening),
});

export const VinData = Type.Object({
  fullname: Str(),
  vin: Str(),
  gender: Str(),
  occupation: Str(),
  pollingUnitCode: Str(),
  firstName: Str(),
  lastName: Str(),
  screening: Opt(LookupScreening),
});

export const CacData = Type.Object({
  rcNumber: Str(),
  companyName: Str(),
  companyType: Str(),
  registrationDate: Str('ISO 8601 timestamp with offset'),
  branchAddress: Str(),
  headOfficeAddress: Str(),
  companyEmail: Str(),
  city: Str(),
  lga: Str(),
  state: Str(),
  classification: Str(),
  affiliates: Type.Integer(),
  shareCapital: Str(),
  shareCapitalInWords: Str(),
  status: Str('ACTIVE or INACTIVE'),
  screening: Opt(LookupScreening),
});

export const TinData = Type.Object({
  tin: Str(),
  taxpayerName: Str(),
  cacRegNo: Str(),
  entityType: Str(),
  jittin: Str(),
  taxOffice: Str(),
  phone: Str(),
  email: Str(),
  screening: Opt(LookupScreening),
});

export const success = <T extends TSchema>(data: T) =>
  Type.Object({ status: Type.Literal('success'), data });

const Violation = Type.Object({
  target: Type.Object({}, { additionalProperties: true }),
  value: Type.Optional(Type.Unknown()),
  property: Str(),
  children: Type.Array(Type.Unknown()),
  constraints: Type.Record(Type.String(), Type.String()),
});

export { ErrorStyleA };
export const ErrorStyleB = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Str(),
    message: Type.Union([Str(), Type.Array(Violation)], {
      description: 'A sentence, or (invalid corporate registry request) an array of constraint violations',
    }),
    requestId: requestIdProperty(),
  },
  { description: 'Error, style B' },
);
export const ErrorStyleC = Type.Object({ code: Str(), message: Str(), requestId: requestIdProperty() }, { description: 'Error, style C' });

/** The error responses of an identity route; `notFound` is the style of its 404 (spec: C or B). */
export function identityErrors(notFound: 'B' | 'C') {
  return {
    400: ErrorStyleB,
    401: ErrorStyleB,
    402: ErrorStyleB,
    403: ErrorStyleB,
    404: notFound === 'C' ? ErrorStyleC : ErrorStyleB,
    500: ErrorStyleA,
  };
}
