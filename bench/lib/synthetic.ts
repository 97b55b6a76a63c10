import { randomBytes } from 'node:crypto';

const FIRST = ['Adaeze', 'Babatunde', 'Chinedu', 'Fatima', 'Ibrahim', 'Ngozi', 'Oluwaseun', 'Zainab'];
const LAST = ['Okonkwo', 'Adeyemi', 'Bello', 'Eze', 'Musa', 'Okafor', 'Ogunleye', 'Yusuf'];
const PREFIXES = ['0803', '0805', '0806', '0807', '0810', '0813', '0816', '0903'];
/** 2,304 random bytes are 3,072 base64 characters: the size of a small passport photo thumbnail. */
const PHOTO_BYTES = 2_304;

/** A BVN registry record with every premium field and a ~3 KB base64 photo; `i` makes it unique. */
export function syntheticBvn(i: number) {
  const firstname = FIRST[i % FIRST.length]!;
  const lastname = LAST[(i >> 3) % LAST.length]!;
  return {
    bvn: String(22_100_000_000 + i),
    firstname,
    lastname,
    middlename: 'Chioma',
    gender: i % 2 === 0 ? 'Female' : 'Male',
    phone: `${PREFIXES[i % PREFIXES.length]}${String(i).padStart(7, '0')}`,
    birthdate: `${String((i % 28) + 1).padStart(2, '0')}-${String((i % 12) + 1).padStart(2, '0')}-${1950 + (i % 55)}`,
    photo: randomBytes(PHOTO_BYTES).toString('base64'),
    email: `${firstname.toLowerCase()}.${lastname.toLowerCase()}${i}@example.com`,
    nationality: 'Nigerian',
    maritalStatus: i % 3 === 0 ? 'Single' : 'Married',
    lgaOfResidence: 'Ikeja',
    lgaOfOrigin: 'Onitsha North',
    residentialAddress: `${(i % 200) + 1} Allen Avenue, Ikeja, Lagos`,
    stateOfOrigin: 'Anambra',
    enrollmentBank: 'Guaranty Trust Bank',
    enrollmentBranch: 'Allen Avenue',
    nameOnCard: `${firstname} ${lastname}`,
    title: i % 2 === 0 ? 'Mrs' : 'Mr',
    levelOfAccount: 'Level 3 - High Level Accounts',
  };
}

/** Registry import lines (`vouch registry import`) for `count` synthetic BVN records plus `extra`. */
export function bvnImportLines(count: number, extra: ReturnType<typeof syntheticBvn>[] = []): string {
  const records = [...Array.from({ length: count }, (_, i) => syntheticBvn(i)), ...extra];
  return `${records.map((record) => JSON.stringify({ type: 'bvn', record })).join('\n')}\n`;
}
