import { Type } from 'typebox';
import { ApplicantBody, ApplicantRecord, Enum, Opt, PlaceFields, Str, VisitFields } from '../agents/schemas.js';
import { ConsentBody } from '../consent/consent.js';
import { ADDRESS_ID_TYPES } from './service.js';

export const AddressRecord = Type.Object({
  id: Type.Integer(),
  reference: Str("The caller's reference, or the generated one"),
  applicant: ApplicantRecord,
  ...VisitFields,
  photos: Type.Array(Str(), { description: 'Signed photo URLs, valid for at least 24 hours; fetch the record again for fresh ones' }),
  ...PlaceFields,
});

/** The address-by-identity answer: the record without `reference` (and without another organization's personal data). */
export const MarketplaceRecord = Type.Omit(AddressRecord, ['reference']);

export const CreateAddressBody = Type.Object({
  reference: Opt(Str('Your unique reference (per account and mode); generated when absent')),
  street: Str(),
  lga: Str('A local government area of the state; case, spacing and common spellings are accepted'),
  state: Str('One of the 36 states or FCT (also "Abuja", "Federal Capital Territory")'),
  city: Opt(Str()),
  landmark: Opt(Str()),
  country: Opt(Str('Nigeria (the only country served)')),
  applicant: ApplicantBody(
    'The person who should live at the address. firstname and lastname are required; dob too at risk level HIGH.',
    ADDRESS_ID_TYPES,
    true,
  ),
  consent: Opt(ConsentBody),
});

export const MarketplaceBody = Type.Object({
  maxAddressAge: Str('How recent the verification must be, in months: 1M to 999M, e.g. 6M'),
  firstname: Str(),
  lastname: Str(),
  idType: Enum(['FRSC', 'NIN'], 'FRSC (drivers licence) or NIN'),
  idNumber: Str(),
  consent: Opt(ConsentBody),
});

export const OutcomeBody = Type.Object({
  outcome: Enum(['verified', 'failed']),
  reason: Opt(Str('For a failed outcome: the subStatus; one of the documented reasons (default: address/business not found)')),
});
