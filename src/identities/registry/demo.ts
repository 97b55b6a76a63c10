import lgaRows from 'ng-states/seed.json' with { type: 'json' };
import { CAC_TYPES, IDENTITY_TYPES, cacKey, type CacType, type IdentityType, type RecordOf } from '../records.js';
import { portraitDataUrl, portraitJpegBase64 } from './photos.js';
import { TEST_IDENTITY_KEYS } from './test-identities.js';

/**
 * A synthetic but plausible registry for live-mode demos: fictional Nigerians and businesses.
 * Each demo person holds a BVN, NIN, vNIN, drivers license and voters card, so one person can be
 * verified across types; each company has a CAC record and a TIN. The same options always give
 * deep-equal records, and no key is a test identity's.
 */

export type DemoRecord = { [T in IdentityType]: { type: T; record: RecordOf[T] } }[IdentityType];

export interface DemoOptions {
  /** Records per identity type; 50 by default. */
  perType?: number;
  seed?: number;
}

interface Group {
  weight: number;
  states: string[];
  male: string[];
  female: string[];
  surnames: string[];
  hausa?: boolean;
}

const w = (names: string) => names.split(' ');

const GROUPS: Group[] = [
  {
    weight: 30, states: w('Lagos Oyo Ogun Osun Ondo Ekiti Kwara'),
    male: w('Babatunde Oluwaseun Adebayo Olumide Tunde Kayode Femi Segun Ayodele Olawale Gbenga Damilola Oluwafemi Adewale Kunle Tobiloba'),
    female: w('Folake Funmilayo Adunni Titilayo Yetunde Bukola Omolara Morenike Abimbola Temitope Oluwakemi Ayomide Bolanle Modupe Oluwatoyin'),
    surnames: w('Adeyemi Ogunleye Balogun Adebayo Oladipo Akinwale Ogunbanjo Adeleke Olawale Bankole Fashola Ajayi Oyelaran Akande Ogundipe Adewale Olatunji Afolabi Ilori Oyebanji'),
  },
  {
    weight: 25, states: w('Anambra Imo Enugu Abia Ebonyi'),
    male: w('Chinedu Emeka Obinna Ikechukwu Chukwuemeka Nnamdi Uchenna Kelechi Chidi Ifeanyi Tochukwu Chibuzor Somtochukwu'),
    female: w('Adaeze Chiamaka Ngozi Nneka Amarachi Chioma Ifeoma Uchechi Obiageli Nkechi Ebere Chinyere Onyinyechi'),
    surnames: w('Okonkwo Eze Nwosu Okafor Obi Nwachukwu Okeke Onyekachi Ugwu Nwankwo Chukwu Ibe Anyanwu Okoro Ezeh Nnadi Agu Onwuka Mbah Udeh'),
  },
  {
    weight: 25, hausa: true, states: w('Kano Kaduna Katsina Sokoto Jigawa Bauchi Kebbi Zamfara Gombe'),
    male: w('Ibrahim Musa Abubakar Aliyu Sani Yusuf Usman Bashir Aminu Umar Nasiru Shehu Mustapha'),
    female: w('Aisha Fatima Hauwa Zainab Amina Hadiza Maryam Halima Rukayya Khadija Safiya Bilkisu Jamila'),
    surnames: w('Bello Abdullahi Mohammed Yakubu Danjuma Garba Suleiman Lawal Sani Aminu Idris Balarabe Tanko Haruna Umar Gambo Dankwambo Shehu'),
  },
  {
    weight: 5, states: w('Bayelsa Rivers Delta'),
    male: w('Ebiowei Timipre Perekeme Tonye Diepreye'),
    female: w('Tarila Ebiere Ayebaemi Preye Tamara'),
    surnames: w('Tamuno Dikibo Koripamo Brisibe Ayakoroma Okorotie'),
  },
  {
    weight: 6, states: ['Edo'],
    male: w('Osagie Osaze Efosa Eghosa Osaro'),
    female: w('Osarugue Eghe Izevbuwa Ivie Omosede'),
    surnames: w('Igbinedion Omoregie Ehigiator Aigbogun Osaghae Iyamu Obaseki Osayande'),
  },
  {
    weight: 6, states: ['Cross River', 'Akwa Ibom'],
    male: w('Etim Effiong Bassey Ekpenyong Udo'),
    female: w('Eno Imaobong Arit Uduak Ekaette'),
    surnames: w('Akpan Udoh Etuk Okon Ekanem Inyang Essien Archibong'),
  },
  {
    weight: 3, states: ['Benue'],
    male: w('Terver Msughter Aondona Tersoo'),
    female: w('Mwuese Doosuur Nguveren Iveren'),
    surnames: w('Iorfa Tarka Agber Akaa Gbenda Orshi'),
  },
];

const HUB_STATES = w('Lagos Lagos Lagos FCT FCT Rivers Oyo Kano Kaduna Enugu Edo Delta Ogun Anambra Abia');
/** Where companies register their offices: state, LGA (as tidied below) and the city people call it. */
const BUSINESS_DISTRICTS: ReadonlyArray<readonly [state: string, lga: string, city: string]> = [
  ['Lagos', 'Ikeja', 'Lagos'], ['Lagos', 'Eti-Osa', 'Lagos'], ['Lagos', 'Lagos Island', 'Lagos'], ['Lagos', 'Apapa', 'Lagos'],
  ['Lagos', 'Surulere', 'Lagos'], ['FCT', 'Abuja Municipal', 'Abuja'], ['FCT', 'Bwari', 'Abuja'], ['Rivers', 'Port Harcourt', 'Port Harcourt'],
  ['Rivers', 'Obio/Akpor', 'Port Harcourt'], ['Oyo', 'Ibadan North', 'Ibadan'], ['Kano', 'Nasarawa', 'Kano'], ['Kano', 'Fagge', 'Kano'],
  ['Kaduna', 'Kaduna North', 'Kaduna'], ['Enugu', 'Enugu North', 'Enugu'], ['Edo', 'Oredo', 'Benin City'], ['Delta', 'Uvwie', 'Warri'],
  ['Ogun', 'Abeokuta South', 'Abeokuta'], ['Anambra', 'Onitsha North', 'Onitsha'], ['Anambra', 'Awka South', 'Awka'], ['Abia', 'Aba North', 'Aba'],
];
const STREETS = [
  'Ahmadu Bello Way', 'Nnamdi Azikiwe Street', 'Obafemi Awolowo Road', 'Tafawa Balewa Crescent', 'Herbert Macaulay Street',
  'Murtala Mohammed Way', 'Independence Avenue', 'Market Road', 'Station Road', 'Hospital Road', 'Church Street',
  'Mosque Road', 'School Road', 'Stadium Road', 'Aminu Kano Crescent', 'Ladoke Akintola Street', 'Okpara Avenue',
  'Zik Avenue', 'Airport Road', 'Unity Close', 'Palm Avenue', 'Sultan Road', 'Bank Road', 'Old Secretariat Road',
];
const MOBILE_PREFIXES = w('0803 0806 0813 0816 0703 0706 0903 0905 0802 0808 0812 0701 0708 0902 0907 0809 0817 0818 0909 0908');
const BANKS = [
  'Access Bank', 'Guaranty Trust Bank', 'Zenith Bank', 'First Bank of Nigeria', 'United Bank for Africa', 'Fidelity Bank',
  'First City Monument Bank', 'Union Bank of Nigeria', 'Stanbic IBTC Bank', 'Sterling Bank', 'Wema Bank', 'Ecobank Nigeria',
  'Polaris Bank', 'Keystone Bank', 'Unity Bank', 'Jaiz Bank', 'Providus Bank', 'Globus Bank', 'Titan Trust Bank',
];
const ACCOUNT_LEVELS = [
  { weight: 1, label: 'Level 1 - Low Level Accounts' }, { weight: 2, label: 'Level 2 - Medium Level Accounts' },
  { weight: 3, label: 'Level 3 - High Level Accounts' },
];
const VIN_CHARACTERS = [...'0123456789ABCDEF'];
const OCCUPATIONS = w('Trader Farmer Teacher Student Artisan Driver Tailor Nurse Engineer Banker Housewife Businessman Accountant Mechanic');
const COMPANY_WORDS = w('Iroko Baobab Harmattan Sahel Zuma Olumo Gurara Kainji Obudu Yankari Idanre Ikogosi Eko Arewa Oduduwa Ogbunike Sapele Oguta Kwara Benue Jos Calabar Niger Bight');
const SECTORS = [
  'Technologies', 'Logistics', 'Agro Allied', 'Foods', 'Energy', 'Properties', 'Pharmaceuticals', 'Construction',
  'Textiles', 'Holdings', 'Integrated Services', 'Farms', 'Oil and Gas', 'Communications', 'Hospitality', 'Industries',
];
const TRADES = w('Enterprises Ventures Stores Kitchen Autos Prints Concepts Fabrics Bakery Pharmacy');
const CAUSES = [
  'Foundation', 'Community Development Association', 'Evangelical Church', 'Youth Empowerment Initiative',
  'Old Students Association', 'Market Women Association', 'Islamic Centre', 'Widows Support Initiative',
];
const SHARE_CAPITALS: Array<[string, string]> = [
  ['100000', 'One Hundred Thousand Naira'], ['1000000', 'One Million Naira'], ['2500000', 'Two Million Five Hundred Thousand Naira'],
  ['5000000', 'Five Million Naira'], ['10000000', 'Ten Million Naira'], ['50000000', 'Fifty Million Naira'],
];
const CAC_STYLE: Record<CacType, { companyType: string; classification: string; prefix: string; entityType: string }> = {
  limited_company: { companyType: 'PRIVATE_COMPANY_LIMITED_BY_SHARES', classification: 'Company', prefix: 'RC', entityType: 'Limited Liability Company' },
  business: { companyType: 'BUSINESS_NAME', classification: 'Business', prefix: 'BN', entityType: 'Business Name' },
  incorprated_trustee: { companyType: 'INCORPORATED_TRUSTEES', classification: 'Trustee', prefix: 'IT', entityType: 'Incorporated Trustees' },
};
const TEST_PHONES = new Set(['08031234567', '08051234567', '08061234567']);

/** State -> its LGAs, from ng-states with its spelling tidied ("Eti-osa" -> "Eti-Osa", "Fct" -> "FCT"). */
const LGAS: ReadonlyMap<string, readonly string[]> = (() => {
  const byState = new Map<string, string[]>();
  for (const row of lgaRows) {
    const state = row.STATE === 'Fct' ? 'FCT' : row.STATE;
    const lga = state === 'FCT' && row.LGA === 'Municipal' ? 'Abuja Municipal' : tidyLga(row.LGA);
    byState.set(state, [...(byState.get(state) ?? []), lga]);
  }
  return byState;
})();

/** INEC numbers the states alphabetically and puts the FCT last. */
const INEC_STATE_CODES = new Map(
  [...[...LGAS.keys()].filter((s) => s !== 'FCT').sort(), 'FCT'].map((state, i) => [state, i + 1] as const),
);

function tidyLga(raw: string): string {
  return raw
    .replace(/\s*\(.*?\)\s*/g, ' ')
    .replace(/\s+-\s*/g, '-')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
    .replace(/(^|[\s/-])([a-z])/g, (_, sep: string, letter: string) => sep + letter.toUpperCase())
    .replace(/-(North|South|East|West)\b/g, ' $1');
}

type Random = ReturnType<typeof randomSource>;

/** mulberry32: small, fast and good enough for fake data; every draw goes through it. */
function randomSource(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => {
    const item = items[int(0, items.length - 1)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  };
  return {
    int,
    pick,
    chance: (probability: number) => next() < probability,
    digits: (count: number) => Array.from({ length: count }, () => String(int(0, 9))).join(''),
    letters: (count: number) => Array.from({ length: count }, () => String.fromCharCode(65 + int(0, 25))).join(''),
    weighted: <T extends { weight: number }>(items: readonly T[]): T => {
      let roll = next() * items.reduce((sum, item) => sum + item.weight, 0);
      for (const item of items) if ((roll -= item.weight) < 0) return item;
      return pick(items);
    },
  };
}

/** Draws until `make` gives a value whose key is not yet in `taken`, then takes the key. */
function fresh(taken: Set<string>, make: () => string, keyOf = (value: string) => value): string {
  for (;;) {
    const value = make();
    const key = keyOf(value);
    if (!taken.has(key)) {
      taken.add(key);
      return value;
    }
  }
}

interface Person {
  gender: 'Male' | 'Female';
  firstname: string;
  middlename?: string;
  lastname: string;
  birth: { day: number; month: number; year: number };
  phone: string;
  hausa: boolean;
  stateOfOrigin: string;
  lgaOfOrigin: string;
  state: string;
  lga: string;
  address: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const dmy = (d: { day: number; month: number; year: number }) => `${pad(d.day)}-${pad(d.month)}-${d.year}`;
const daysIn = (month: number, year: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
const lgasOf = (state: string): readonly string[] => LGAS.get(state) ?? [];

function date(rng: Random, fromYear: number, toYear: number) {
  const year = rng.int(fromYear, toYear);
  const month = rng.int(1, 12);
  return { day: rng.int(1, daysIn(month, year)), month, year };
}

function person(rng: Random, phones: Set<string>): Person {
  const group = rng.weighted(GROUPS);
  const gender = rng.chance(0.5) ? 'Male' : 'Female';
  const names = gender === 'Male' ? group.male : group.female;
  const firstname = rng.pick(names);
  const middlename = rng.chance(0.85) ? rng.pick(names.filter((n) => n !== firstname)) : undefined;
  const stateOfOrigin = rng.pick(group.states);
  const state = rng.chance(0.5) ? stateOfOrigin : rng.pick(HUB_STATES);
  const lga = rng.pick(lgasOf(state));
  return {
    gender,
    firstname,
    ...(middlename ? { middlename } : {}),
    lastname: rng.pick(group.surnames),
    birth: date(rng, 1960, 2004),
    phone: fresh(phones, () => rng.pick(MOBILE_PREFIXES) + rng.digits(7)),
    hausa: group.hausa === true,
    stateOfOrigin,
    lgaOfOrigin: rng.pick(lgasOf(stateOfOrigin)),
    state,
    lga,
    address: `${rng.int(1, 120)} ${rng.pick(STREETS)}, ${lga}, ${state}`,
  };
}

function bvnRecord(rng: Random, p: Person, bvn: string): RecordOf['bvn'] {
  const older = p.birth.year < 1985;
  const maritalStatus = rng.chance(older ? 0.75 : 0.35) ? 'Married' : older && rng.chance(0.4) ? rng.pick(['Divorced', 'Widowed']) : 'Single';
  return {
    bvn,
    firstname: p.firstname,
    ...(p.middlename ? { middlename: p.middlename } : {}),
    lastname: p.lastname,
    gender: p.gender,
    phone: p.phone,
    birthdate: dmy(p.birth),
    email: `${p.firstname}.${p.lastname}${rng.chance(0.5) ? rng.int(1, 99) : ''}@example.com`.toLowerCase(),
    nationality: 'Nigerian',
    maritalStatus,
    lgaOfResidence: p.lga,
    lgaOfOrigin: p.lgaOfOrigin,
    residentialAddress: p.address,
    stateOfOrigin: p.stateOfOrigin,
    enrollmentBank: rng.pick(BANKS),
    enrollmentBranch: p.lga,
    nameOnCard: [p.firstname, p.middlename?.charAt(0), p.lastname].filter(Boolean).join(' ').toUpperCase(),
    title: title(rng, p, older, maritalStatus),
    levelOfAccount: rng.weighted(ACCOUNT_LEVELS).label,
  };
}

function title(rng: Random, p: Person, older: boolean, maritalStatus: string): string {
  if (rng.chance(0.05)) return 'Dr';
  if (p.gender === 'Male') return p.hausa && older && rng.chance(0.4) ? 'Alhaji' : 'Mr';
  return maritalStatus === 'Single' ? 'Miss' : 'Mrs';
}

function licenseRecord(rng: Random, p: Person, licenseNo: string): RecordOf['drivers_license'] {
  const issued = date(rng, Math.max(2022, p.birth.year + 18), 2025);
  const expiry = new Date(Date.UTC(issued.year + 5, issued.month - 1, issued.day - 1));
  return {
    licenseNo,
    firstname: p.firstname,
    ...(p.middlename ? { middlename: p.middlename } : {}),
    lastname: p.lastname,
    issuedDate: dmy(issued),
    expiryDate: dmy({ day: expiry.getUTCDate(), month: expiry.getUTCMonth() + 1, year: expiry.getUTCFullYear() }),
    stateOfIssue: p.state,
    gender: p.gender,
    birthdate: dmy(p.birth),
    nationality: 'Nigerian',
  };
}

function voterRecord(rng: Random, p: Person, vin: string): RecordOf['vin'] {
  const lgaCode = lgasOf(p.state).indexOf(p.lga) + 1;
  return {
    vin,
    fullname: [p.firstname, p.middlename, p.lastname].filter(Boolean).join(' ').toUpperCase(),
    firstName: p.firstname,
    lastName: p.lastname,
    gender: p.gender,
    occupation: rng.pick(OCCUPATIONS),
    pollingUnitCode: `${pad(INEC_STATE_CODES.get(p.state) ?? 0)}/${pad(lgaCode)}/${pad(rng.int(1, 12))}/${pad(rng.int(1, 40), 3)}`,
    birthdate: dmy(p.birth),
  };
}

function companyName(rng: Random, type: CacType): string {
  const word = rng.pick(COMPANY_WORDS);
  if (type === 'limited_company') return `${word} ${rng.pick(SECTORS)} Limited`;
  if (type === 'business') return `${rng.pick(rng.weighted(GROUPS).surnames)} ${rng.chance(0.3) ? '& Sons ' : ''}${rng.pick(TRADES)}`;
  return `Incorporated Trustees of ${word} ${rng.pick(CAUSES)}`;
}

function companyRecords(rng: Random, type: CacType, rcNumber: string, tin: string): [RecordOf['cac'], RecordOf['tin']] {
  const style = CAC_STYLE[type];
  const name = companyName(rng, type);
  const slug = name.toLowerCase().replace(/^incorporated trustees of /, '').replace(/[^a-z0-9]+/g, '');
  const [state, lga, city] = rng.pick(BUSINESS_DISTRICTS);
  const street = () => `${rng.int(1, 80)} ${rng.pick(STREETS)}, ${lga}, ${state}`;
  const registered = date(rng, type === 'limited_company' ? 1995 : 2005, 2025);
  const headOfficeAddress = street();
  const [shareCapital, shareCapitalInWords] = rng.pick(SHARE_CAPITALS);
  const phone = rng.pick(MOBILE_PREFIXES) + rng.digits(7);
  const cac: RecordOf['cac'] = {
    type,
    rcNumber,
    companyName: name,
    companyType: style.companyType,
    registrationDate: `${registered.year}-${pad(registered.month)}-${pad(registered.day)}T00:00:00.000+00:00`,
    branchAddress: rng.chance(0.6) ? headOfficeAddress : street(),
    headOfficeAddress,
    companyEmail: `info@${slug}.example.com`,
    city,
    lga,
    state,
    classification: style.classification,
    affiliates: type === 'limited_company' ? rng.int(2, 7) : type === 'business' ? rng.int(1, 3) : rng.int(3, 9),
    ...(type === 'limited_company' ? { shareCapital, shareCapitalInWords } : {}),
    status: rng.chance(0.9) ? 'ACTIVE' : 'INACTIVE',
  };
  const taxOffice = state === 'Lagos' ? rng.pick(['MSTO Lagos Island', 'MSTO Ikeja', 'MSTO Apapa']) : `MSTO ${city}`;
  const tinRecord: RecordOf['tin'] = {
    tin,
    taxpayerName: name.toUpperCase(),
    cacRegNo: `${style.prefix}${rcNumber.slice(0, 2)}${'*'.repeat(rcNumber.length - 3)}${rcNumber.slice(-1)}`,
    entityType: style.entityType,
    jittin: rng.chance(0.7) ? '' : rng.digits(10),
    taxOffice,
    phone: `${phone.slice(0, 4)}****${phone.slice(-3)}`,
    email: `accounts@${slug}.example.com`,
  };
  return [cac, tinRecord];
}

export async function generateDemoRegistry(options: DemoOptions = {}): Promise<DemoRecord[]> {
  const perType = options.perType ?? 50;
  if (!Number.isInteger(perType) || perType < 0) throw new RangeError(`perType must be a whole number, not ${perType}`);
  const rng = randomSource(options.seed ?? 1);
  const taken = new Map(IDENTITY_TYPES.map((type) => [type, new Set<string>([TEST_IDENTITY_KEYS[type]])]));
  const keys = (type: IdentityType) => taken.get(type) ?? new Set<string>();
  const phones = new Set(TEST_PHONES);
  const byType: { [T in IdentityType]: Array<RecordOf[T]> } = { bvn: [], nin: [], vnin: [], drivers_license: [], vin: [], cac: [], tin: [] };
  const portraits: Array<Promise<void>> = [];

  for (let i = 0; i < perType; i += 1) {
    const p = person(rng, phones);
    const initials = `${p.firstname.charAt(0)}${p.lastname.charAt(0)}`;
    const bvn = bvnRecord(rng, p, fresh(keys('bvn'), () => `22${rng.digits(9)}`));
    const nin: RecordOf['nin'] = {
      nin: fresh(keys('nin'), () => `${rng.int(1, 9)}${rng.digits(10)}`),
      firstname: p.firstname,
      ...(p.middlename ? { middlename: p.middlename } : {}),
      lastname: p.lastname,
      phone: p.phone,
      gender: p.gender,
      birthdate: dmy(p.birth),
      nationality: 'Nigerian',
    };
    const vnin: RecordOf['vnin'] = {
      id: 2001 + i,
      vNin: fresh(keys('vnin'), () => rng.letters(2) + rng.digits(12) + rng.letters(2)),
      firstname: p.firstname,
      lastname: p.lastname,
      birthdate: dmy(p.birth),
      gender: p.gender.charAt(0),
      phone: p.phone,
    };
    const licensePrefix = p.lga.replace(/[^A-Za-z]/g, '').slice(0, 3).toUpperCase().padEnd(3, 'X');
    const license = licenseRecord(rng, p, fresh(keys('drivers_license'), () => licensePrefix + rng.digits(5) + rng.letters(2) + rng.digits(2)));
    const voter = voterRecord(rng, p, fresh(keys('vin'), () => Array.from({ length: 19 }, () => rng.pick(VIN_CHARACTERS)).join('')));
    byType.bvn.push(bvn);
    byType.nin.push(nin);
    byType.vnin.push(vnin);
    byType.drivers_license.push(license);
    byType.vin.push(voter);
    // One face per person, seeded by the NIN, so a person's registries agree on what they look like.
    portraits.push(
      Promise.all([portraitJpegBase64(nin.nin, initials), portraitDataUrl(nin.nin, initials)]).then(([photo, url]) => {
        bvn.photo = photo;
        nin.photo = photo;
        license.photo = photo;
        vnin.photo = url;
      }),
    );

    const cacType = CAC_TYPES[i % CAC_TYPES.length] ?? 'limited_company';
    const [low, high] = cacType === 'incorprated_trustee' ? [100000, 199999] : [1000000, 1999999];
    const rcNumber = fresh(keys('cac'), () => String(rng.int(low, high)), (rc) => cacKey(cacType, rc));
    const [cac, tin] = companyRecords(rng, cacType, rcNumber, fresh(keys('tin'), () => `${rng.int(1, 9)}${rng.digits(7)}-0001`));
    byType.cac.push(cac);
    byType.tin.push(tin);
  }

  await Promise.all(portraits);
  return IDENTITY_TYPES.flatMap((type) => entries(type, byType[type]));
}

function entries<T extends IdentityType>(type: T, records: Array<RecordOf[T]>): DemoRecord[] {
  return records.map((record) => ({ type, record }) as DemoRecord);
}

/** The first demo record of each type: the README quotes them in its live-mode examples. */
export function demoExamples(records: readonly DemoRecord[]): Partial<{ [T in IdentityType]: RecordOf[T] }> {
  const examples: Partial<Record<IdentityType, RecordOf[IdentityType]>> = {};
  for (const { type, record } of records) examples[type] ??= record;
  return examples as Partial<{ [T in IdentityType]: RecordOf[T] }>;
}
