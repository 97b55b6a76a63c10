import { Type } from 'typebox';
import { ApplicantBody, ApplicantRecord, LooseBoolean, Opt, PlaceFields, Str, VisitFields } from '../agents/schemas.js';
import { ConsentBody } from '../consent/consent.js';
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
});

export const CreateBusinessBody = Type.Object({
  reference: Opt(Str('Your unique reference (per account and mode); generated when absent')),
  name: Opt(Str('Registered business name (required; `businessName` is accepted instead)')),
  businessName: Opt(Str('Alias of name (sample request)')),
  type: Opt(Str('Formal or Informal (`businessType` is accepted instead)')),
  businessType: Opt(Str('Alias of type (sample request)')),
  rcNumber: Opt(Str('Registration number')),
  canContactPoc: Opt(LooseBoolean('Whether the agent may contact the person below')),
  street: Str(),
  lga: Str('A local government area of the state'),
  state: Str('One of the 36 states or FCT'),
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
