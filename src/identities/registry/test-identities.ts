import { IDENTITY_TYPES, registryKey, type IdentityType, type RecordOf } from '../records.js';
import { samplePortraitBase64, TEST_IDENTITY_FACES } from '../biometrics/samples.js';
import { portraitDataUrl } from './photos.js';

/**
 * The sandbox registry: one fixed, fictional identity per type. A test-mode lookup of any other
 * number answers the type's not-found error; a lookup of these numbers with other details answers
 * with false field matches. docs/test-mode.md lists them for integrators, so a change here is a
 * change to the public sandbox.
 */

export type TestIdentities = { [T in IdentityType]: RecordOf[T] };

const WITHOUT_PHOTOS: TestIdentities = {
  bvn: {
    bvn: '22345678901',
    firstname: 'Adaeze',
    middlename: 'Chiamaka',
    lastname: 'Okonkwo',
    gender: 'Female',
    phone: '08031234567',
    birthdate: '14-03-1990',
    email: 'adaeze.okonkwo@example.com',
    nationality: 'Nigerian',
    maritalStatus: 'Single',
    lgaOfResidence: 'Ikeja',
    lgaOfOrigin: 'Nnewi North',
    residentialAddress: '27 Allen Avenue, Ikeja, Lagos',
    stateOfOrigin: 'Anambra',
    enrollmentBank: 'Guaranty Trust Bank',
    enrollmentBranch: 'Allen Avenue, Ikeja',
    nameOnCard: 'ADAEZE C OKONKWO',
    title: 'Miss',
    levelOfAccount: 'Level 2 - Medium Level Accounts',
  },
  nin: {
    nin: '70412358961',
    firstname: 'Babatunde',
    middlename: 'Oluwaseun',
    lastname: 'Adeyemi',
    gender: 'Male',
    phone: '08051234567',
    birthdate: '02-11-1985',
    nationality: 'Nigerian',
  },
  vnin: {
    id: 1001,
    vNin: 'TV738291046518QK',
    firstname: 'Ngozi',
    lastname: 'Eze',
    birthdate: '21-07-1993',
    gender: 'F',
    phone: '08061234567',
  },
  drivers_license: {
    licenseNo: 'KJA83927AA02',
    firstname: 'Ibrahim',
    middlename: 'Musa',
    lastname: 'Bello',
    gender: 'Male',
    birthdate: '09-05-1988',
    issuedDate: '15-01-2021',
    expiryDate: '14-01-2029',
    stateOfIssue: 'Kaduna',
    nationality: 'Nigerian',
  },
  vin: {
    vin: '90F5B1234C567890123',
    fullname: 'CHINEDU NWOSU',
    firstName: 'Chinedu',
    lastName: 'Nwosu',
    gender: 'Male',
    occupation: 'Trader',
    pollingUnitCode: '24/09/05/012',
    birthdate: '30-08-1979',
  },
  cac: {
    type: 'limited_company',
    rcNumber: '1284395',
    companyName: 'Kolanut Technologies Limited',
    companyType: 'PRIVATE_COMPANY_LIMITED_BY_SHARES',
    registrationDate: '2015-06-18T00:00:00.000+00:00',
    branchAddress: '3 Ologun Agbaje Street, Victoria Island, Lagos',
    headOfficeAddress: '12B Admiralty Way, Lekki Phase 1, Lagos',
    companyEmail: 'info@kolanut.example.com',
    city: 'Lagos',
    lga: 'Eti-Osa',
    state: 'Lagos',
    classification: 'Company',
    affiliates: 3,
    shareCapital: '10000000',
    shareCapitalInWords: 'Ten Million Naira',
    status: 'ACTIVE',
  },
  tin: {
    tin: '23456789-0001',
    taxpayerName: 'KOLANUT TECHNOLOGIES LIMITED',
    cacRegNo: 'RC12****5',
    entityType: 'Limited Liability Company',
    jittin: '',
    taxOffice: 'MSTO Lagos Island',
    phone: '0803****567',
    email: 'accounts@kolanut.example.com',
  },
};

function keyOf<T extends IdentityType>(type: T): string {
  return registryKey(type, WITHOUT_PHOTOS[type]);
}

/** The registry key of each test identity: what a test-mode lookup must ask for. */
export const TEST_IDENTITY_KEYS = Object.freeze(
  Object.fromEntries(IDENTITY_TYPES.map((type) => [type, keyOf(type)])) as Record<IdentityType, string>,
);

let loading: Promise<TestIdentities> | undefined;

/** The test identities with their photos. Built once; the records are frozen because every caller shares them. */
export function loadTestIdentities(): Promise<TestIdentities> {
  loading ??= build().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function build(): Promise<TestIdentities> {
  const { bvn, nin, vnin, drivers_license } = WITHOUT_PHOTOS;
  // Real faces (the face-api package's demo photos, docs/biometrics.md) where biometrics compares
  // against the photo; vNIN records are not compared and keep a placeholder.
  const [bvnPhoto, ninPhoto, vninPhoto, licensePhoto] = await Promise.all([
    samplePortraitBase64(TEST_IDENTITY_FACES.bvn),
    samplePortraitBase64(TEST_IDENTITY_FACES.nin),
    portraitDataUrl(TEST_IDENTITY_KEYS.vnin, initials(vnin.firstname, vnin.lastname)),
    samplePortraitBase64(TEST_IDENTITY_FACES.drivers_license),
  ]);
  const identities: TestIdentities = {
    ...WITHOUT_PHOTOS,
    bvn: { ...bvn, photo: bvnPhoto },
    nin: { ...nin, photo: ninPhoto },
    vnin: { ...vnin, photo: vninPhoto },
    drivers_license: { ...drivers_license, photo: licensePhoto },
  };
  for (const type of IDENTITY_TYPES) Object.freeze(identities[type]);
  return Object.freeze(identities);
}

function initials(firstname: string, lastname: string): string {
  return `${firstname.charAt(0)}${lastname.charAt(0)}`;
}
