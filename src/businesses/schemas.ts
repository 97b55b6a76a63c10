import { Type } from 'typebox';
import { ApplicantBody, ApplicantRecord, LooseBoolean, Opt, PlaceFields, Str, VisitFields } from '../agents/schemas.js';
import { ConsentBody } from '../consent/consent.js';
import { LookupScreening } from '../identities/screening.js';
import { BUSINESS_ID_TYPES } from './service.js';

export const BusinessRecord = Type.Object({
  id: Type.Integer(),
  reference: Str(),
  applicant: Type.Object({ ...ApplicantRecord.properties, email: Str() }, { description: 'The contact person' }),
  business: Type.Object({
    name: Str(),
    type: Str('Formal, Informal or empty'),
    rcNumber: Str(),
    isBusinessKnown: Opt(Type.Boolean({ description: 'Once visited' })),
    isBusinessOwnerKnown: Opt(Type.Boolean({ description: 'Once visited' })),
    ownerVisitsFrequently: Opt(Type.Boolean({ description: 'Once visited' })),
  }),
  canContactPoc: Type.Boolean(),
  isCorrectBusinessName: Opt(Type.Boolean({ description: 'Once visited' })),
  businessNameFound: Str('The name the agent found on site; empty until visited'),
  businessArea: Str('e.g. commercial or residential; empty until visited'),
  businessPhotos: Type.Array(Str(), { description: 'Signed photo URLs, valid for at least 24 hours' }),
  photos: Type.Array(Str(), { description: 'The same URLs as businessPhotos' }),
  ...VisitFields,
  ...PlaceFields,
  addressSource: Type.Union([Type.Literal('applicant'), Type.Literal('corporate_registry')], {
    description:
      'Where street, city, lga and state came from: `applicant` (the request) or `corporate_registry` (the company\'s registered head office, found by rcNumber when the request sent no address)',
  }),
  screeningId: Opt(Type.Integer({ description: 'The screening of the company made at creation (GET /v1/verifications/screenings/:id), for organizations that screen every business verification (addition to the spec)' })),
  screening: Opt(
    Type.Object(LookupScreening.properties, {
      description: 'Only in the create answer, for organizations that screen every business verification: the screening of the company, or NOT_SCREENED and why (addition to the spec)',
    }),
  ),
});

export const CreateBusinessBody = Type.Object({
  reference: Opt(Str('Your unique reference (per account and mode); generated when absent')),
  name: Opt(Str('Registered business name (required, or `businessName`, unless the company is found by rcNumber)')),
  businessName: Opt(Str('Alias of name (sample request)')),
  type: Opt(Str('Formal or Informal (`businessType` is accepted instead)')),
  businessType: Opt(Str('Alias of type (sample request)')),
  rcNumber: Opt(Str('Registration number')),
  canContactPoc: Opt(LooseBoolean('Whether the agent may contact the person below')),
  street: Opt(Str('Required, with lga and state, unless all three are left out with an rcNumber: the registered head office is then visited')),
  lga: Opt(Str('A local government area of the state')),
  state: Opt(Str('One of the 36 states or FCT')),
  city: Opt(Str()),
  landmark: Opt(Str()),
  country: Opt(Str('Nigeria')),
  applicant: Opt(
    ApplicantBody(
      "The contact person or business official. The account's risk level decides which names (and dob) are required.",
      BUSINESS_ID_TYPES,
      false,
    ),
  ),
  consent: Opt(ConsentBody),
});
