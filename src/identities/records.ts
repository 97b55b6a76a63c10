import { Type, type Static, type TSchema } from 'typebox';

/**
 * The identity records held by a registry, one schema per type: the fields of the spec's `data`
 * records without `fieldMatches`, plus a few fields a registry holds for matching but never
 * returns (BVN `email`, voters card `birthdate`, `nationality`). These schemas validate
 * `vouch registry import` lines and describe the test identities.
 */

const Str = (description?: string) => Type.String(description ? { description } : {});
const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);
const DMY = Type.String({ pattern: '^\\d{2}[-/]\\d{2}[-/]\\d{4}$', description: 'Day-month-year, e.g. 14-03-1990' });

export const BvnRecord = Type.Object(
  {
    bvn: Type.String({ pattern: '^\\d{11}$' }),
    firstname: Str(),
    lastname: Str(),
    middlename: Opt(Str()),
    gender: Str(),
    phone: Str(),
    birthdate: DMY,
    photo: Opt(Str('Base64-encoded image')),
    email: Opt(Str('Held for BVN match; never returned')),
    nationality: Opt(Str()),
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
  },
  { additionalProperties: false },
);

export const NinRecord = Type.Object(
  {
    nin: Type.String({ pattern: '^\\d{11}$' }),
    firstname: Str(),
    lastname: Str(),
    middlename: Opt(Str()),
    phone: Opt(Str('Also the key of the NIN-by-phone lookup')),
    gender: Str(),
    birthdate: DMY,
    photo: Opt(Str('Base64-encoded image')),
    nationality: Opt(Str()),
  },
  { additionalProperties: false },
);

export const VninRecord = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    vNin: Type.String({ pattern: '^[A-Za-z0-9]{16}$' }),
    firstname: Str(),
    lastname: Str(),
    birthdate: DMY,
    gender: Str(),
    phone: Opt(Str()),
    photo: Opt(Str('URL of an image')),
  },
  { additionalProperties: false },
);

export const DriversLicenseRecord = Type.Object(
  {
    licenseNo: Type.String({ pattern: '^[A-Za-z0-9]{6,20}$' }),
    firstname: Str(),
    lastname: Str(),
    middlename: Opt(Str()),
    issuedDate: DMY,
    expiryDate: DMY,
    stateOfIssue: Str(),
    gender: Str(),
    birthdate: DMY,
    photo: Opt(Str('Base64-encoded image')),
    nationality: Opt(Str()),
  },
  { additionalProperties: false },
);

export const VinRecord = Type.Object(
  {
    vin: Type.String({ pattern: '^[A-Za-z0-9]{9,25}$' }),
    fullname: Str(),
    firstName: Str(),
    lastName: Str(),
    gender: Str(),
    occupation: Opt(Str()),
    pollingUnitCode: Opt(Str()),
    birthdate: Opt(DMY),
  },
  { additionalProperties: false },
);

export const CAC_TYPES = ['limited_company', 'business', 'incorprated_trustee'] as const;
export type CacType = (typeof CAC_TYPES)[number];

export const CacRecord = Type.Object(
  {
    type: Type.Union([Type.Literal('limited_company'), Type.Literal('business'), Type.Literal('incorprated_trustee')]),
    rcNumber: Type.Union([Type.String({ pattern: '^\\s*([A-Za-z]{2}\\s*)?\\d{1,10}\\s*$' }), Type.Integer({ minimum: 1 })]),
    companyName: Str(),
    companyType: Opt(Str()),
    registrationDate: Opt(Str('ISO 8601 timestamp with offset')),
    branchAddress: Opt(Str()),
    headOfficeAddress: Opt(Str()),
    companyEmail: Opt(Str()),
    city: Opt(Str()),
    lga: Opt(Str()),
    state: Opt(Str()),
    classification: Opt(Str()),
    affiliates: Opt(Type.Integer({ minimum: 0 })),
    shareCapital: Opt(Str()),
    shareCapitalInWords: Opt(Str()),
    status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('INACTIVE')]),
  },
  { additionalProperties: false },
);

export const TIN_PATTERN = '^[A-Za-z0-9]{8}-[A-Za-z0-9]{4}$';

export const TinRecord = Type.Object(
  {
    tin: Type.String({ pattern: TIN_PATTERN }),
    taxpayerName: Str(),
    cacRegNo: Opt(Str()),
    entityType: Opt(Str()),
    jittin: Opt(Str()),
    taxOffice: Opt(Str()),
    phone: Opt(Str()),
    email: Opt(Str()),
  },
  { additionalProperties: false },
);

export const RECORD_SCHEMAS = {
  bvn: BvnRecord,
  nin: NinRecord,
  vnin: VninRecord,
  drivers_license: DriversLicenseRecord,
  vin: VinRecord,
  cac: CacRecord,
  tin: TinRecord,
} as const;

export type IdentityType = keyof typeof RECORD_SCHEMAS;
export const IDENTITY_TYPES = Object.keys(RECORD_SCHEMAS) as IdentityType[];

export type BvnRecord = Static<typeof BvnRecord>;
export type NinRecord = Static<typeof NinRecord>;
export type VninRecord = Static<typeof VninRecord>;
export type DriversLicenseRecord = Static<typeof DriversLicenseRecord>;
export type VinRecord = Static<typeof VinRecord>;
export type CacRecord = Static<typeof CacRecord>;
export type TinRecord = Static<typeof TinRecord>;

export interface RecordOf {
  bvn: BvnRecord;
  nin: NinRecord;
  vnin: VninRecord;
  drivers_license: DriversLicenseRecord;
  vin: VinRecord;
  cac: CacRecord;
  tin: TinRecord;
}

/** Normalises a registration number: `RC 1234567`, `rc1234567`, `1234567` and 1234567 are one key. */
export function normalizeRcNumber(value: string | number): string {
  return String(value).replace(/\s+/g, '').replace(/^[A-Za-z]{2}/, '').replace(/^0+(?=\d)/, '');
}

/** The registry key of a record: what its lookup is keyed by. */
export function registryKey<T extends IdentityType>(type: T, record: RecordOf[T]): string {
  switch (type) {
    case 'bvn':
      return (record as BvnRecord).bvn;
    case 'nin':
      return (record as NinRecord).nin;
    case 'vnin':
      return (record as VninRecord).vNin.toUpperCase();
    case 'drivers_license':
      return (record as DriversLicenseRecord).licenseNo.toUpperCase();
    case 'vin':
      return (record as VinRecord).vin.toUpperCase();
    case 'cac': {
      const cac = record as CacRecord;
      return cacKey(cac.type, cac.rcNumber);
    }
    case 'tin':
      return (record as TinRecord).tin.toUpperCase();
    default:
      throw new Error(`unknown identity type ${String(type)}`);
  }
}

export function cacKey(type: CacType, rcNumber: string | number): string {
  return `${type}:${normalizeRcNumber(rcNumber)}`;
}
