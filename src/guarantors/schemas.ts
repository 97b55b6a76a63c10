import { Type, type Static } from 'typebox';
import { ConsentBody } from '../consent/consent.js';
import { StatusObject } from '../respondents/schemas.js';

const Str = (description?: string) => Type.String(description ? { description } : {});
const Opt = Type.Optional;

const IdTypeList = (description: string) =>
  Type.Array(Type.String(), {
    description: `${description} Values: \`BVN\`, \`NIN\`, \`Drivers license\` (also the record codes \`FRSC\` and \`VIN\`). Default: BVN, NIN and Drivers license.`,
  });

export const CreateGuarantorBody = Type.Object({
  reference: Opt(Str('Your unique reference (addition); generated when absent')),
  firstname: Type.String({ minLength: 1, description: 'The guarantor' }),
  lastname: Type.String({ minLength: 1, description: 'The guarantor' }),
  email: Type.String({ minLength: 1, description: 'The guarantor: the request link is sent here' }),
  phone: Opt(Str('The guarantor: a Nigerian phone number')),
  street: Opt(Str("The guarantor's address; required with verifyAddress")),
  city: Opt(Str()),
  lga: Opt(Str('One of the state\'s 774 LGAs; required with verifyAddress')),
  state: Opt(Str('One of the 36 states or FCT; required with verifyAddress')),
  landmark: Opt(Str()),
  acceptableIdType: Opt(IdTypeList('IDs the guarantor may give.')),
  acceptableIdTypes: Opt(IdTypeList('Alias of acceptableIdType (sample request).')),
  verifyAddress: Opt(Type.Boolean({ description: 'Default false; "true"/"false" strings are accepted' })),
  applicant: Opt(
    Type.Object(
      {
        firstname: Opt(Str()),
        lastname: Opt(Str()),
        middlename: Opt(Str()),
        dob: Opt(Str('DD-MM-YYYY')),
        phone: Opt(Str()),
        gender: Opt(Str()),
        idType: Opt(Str('BVN, NIN or KYC')),
        idNumber: Opt(Str('BVN, NIN or, for KYC, a phone number')),
      },
      { description: "Which fields are required depends on the account's risk level" },
    ),
  ),
  consent: Opt(ConsentBody),
});
export type CreateGuarantorBody = Static<typeof CreateGuarantorBody>;

export const GuarantorRecord = Type.Object({
  id: Type.Integer(),
  reference: Str('Addition: your reference, or the one generated'),
  applicant: Type.Object({
    idType: Str(),
    idNumber: Str(),
    firstname: Str(),
    middlename: Str(),
    lastname: Str(),
    phone: Str(),
    gender: Str(),
    birthdate: Str('DD-MM-YYYY'),
    photo: Str(),
  }),
  firstname: Str(),
  lastname: Str(),
  phone: Str(),
  email: Str(),
  acceptableIdType: Type.Array(Str(), { description: 'Record codes: NIN, BVN, FRSC (drivers license), VIN (voters card)' }),
  address: Type.Object({
    formattedAddress: Str(),
    state: Str(),
    lga: Str(),
    street: Str(),
    city: Str(),
    country: Str(),
  }),
  verifyAddress: Type.Boolean(),
  addressVerificationId: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Addition: the address verification of the guarantor (verifyAddress), or null',
  }),
  status: StatusObject,
  createdAt: Str('UTC, without offset: 2024-05-14T09:30:12'),
  completedAt: Str('Addition: when it completed or was cancelled; empty until then'),
});
