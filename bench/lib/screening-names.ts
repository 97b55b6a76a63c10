import type { IndexedEntity, ScreeningSubject } from '../../src/screening/entity.js';

/**
 * Synthetic watchlist entities and screening subjects from realistic name parts (Nigerian —
 * Yoruba, Igbo, Hausa —, Arabic, Western, Chinese and Russian), for the speed bench: names, not
 * people. A seeded generator, so every run screens the same names.
 */

const POOLS = {
  yoruba: {
    first: 'Oluwaseun Babatunde Adebayo Olusegun Folake Temitope Oluwafemi Adewale Olanrewaju Bukola Funmilayo Ayodele Omotayo Kehinde Taiwo Damilola Oluwatobi Adeola Yetunde Gbenga Kunle Tunde Bisi Niyi Sola Wale Femi Seun Tosin Bunmi',
    last: 'Adeyemi Ogunleye Adebayo Okonkwo Afolabi Ogundipe Adeleke Bakare Oyelaran Olawale Adesanya Ajayi Akinola Balogun Fashola Ogunbiyi Oyebanji Adeniyi Alabi Olaniyan',
  },
  igbo: {
    first: 'Chukwuemeka Chinedu Ngozi Obinna Nnamdi Chidi Ifeanyi Kelechi Adaeze Chiamaka Uchenna Ikenna Emeka Nneka Chinonso Somtochukwu Amarachi Ebuka Tochukwu Ugochukwu',
    last: 'Okafor Okeke Nwosu Eze Obi Okoro Nwachukwu Onyekachi Uzo Igwe Ibe Ezeani Chukwu Okonjo Anyanwu Nwankwo Obiora Umeh Onuoha Ekwueme',
  },
  hausa: {
    first: 'Muhammadu Abubakar Aliyu Yusuf Ibrahim Usman Umaru Sani Bello Garba Musa Haruna Idris Yakubu Aisha Hauwa Fatima Zainab Hadiza Amina Kabiru Nasiru Bashir Lawal Danjuma',
    last: 'Bello Abdullahi Suleiman Danladi Mohammed Yusuf Lawal Adamu Shehu Umar Aminu Tambuwal Dangote Buhari Atiku Sambo Dikko Gumi Kano Ringim',
  },
  arabic: {
    first: 'Muhammad Ahmad Ali Hassan Hussein Omar Khalid Abdullah Abdulrahman Mahmoud Mustafa Youssef Ibrahim Ismail Tariq Walid Faisal Saad Karim Samir Fatima Aisha Maryam Layla Huda',
    last: 'Al-Rashid Al-Masri Haddad Khalil Nasser Saleh Hamdan Al-Tikriti Qureshi Al-Baghdadi Mansour Darwish Hamad Jaber Al-Harbi Al-Zahrani Shaikh Farouk Aziz Barakat',
  },
  western: {
    first: 'John Michael David James Robert William Mary Elizabeth Sarah Jennifer Peter Thomas Daniel Anna Laura Mark Paul Susan Karen George',
    last: 'Smith Johnson Williams Brown Jones Miller Davis Wilson Anderson Taylor Thomas Moore Martin Jackson Thompson White Harris Clark Lewis Walker',
  },
  chinese: {
    first: 'Wei Fang Min Jing Lei Jun Yan Hui Ping Tao Ming Li Hong Xiaoming Jianguo Zhiwei Yufei Haoran Xinyi Zihan',
    last: 'Wang Li Zhang Liu Chen Yang Huang Zhao Wu Zhou Xu Sun Ma Zhu Hu Guo He Lin Gao Luo',
  },
  russian: {
    first: 'Vladimir Sergey Alexander Dmitry Andrei Mikhail Nikolai Ivan Olga Tatiana Elena Natalia Igor Yuri Pavel Oleg Viktor Boris Anna Svetlana',
    last: 'Ivanov Petrov Smirnov Kuznetsov Popov Sokolov Lebedev Kozlov Novikov Morozov Volkov Solovyov Vasiliev Zaitsev Pavlov Semenov Golubev Vinogradov Bogdanov Vorobyov',
  },
} as const;

const COUNTRIES = ['NG', 'NG', 'NG', 'GH', 'SA', 'EG', 'IQ', 'SY', 'US', 'GB', 'CN', 'RU', 'AE', 'PK', 'AF'];
const ORG_WORDS = 'Zenith Atlantic Sahel Niger Delta Crescent Golden Eagle Harbour Unity Premier Apex Sterling Kano Lagos Benue Northern Global Allied Continental Royal Prime'.split(' ');
const ORG_KINDS = 'Trading Petroleum Logistics Holdings Investments Shipping Oil Gas Energy Bank Finance Construction Agro Mining Textiles Foods Pharmaceuticals Motors Steel Cement'.split(' ');
const ORG_FORMS = ['Ltd', 'Limited', 'Nigeria Limited', 'PLC', 'Enterprises', 'Ventures', 'LLC', 'Co.', 'Inc.', 'Corporation', 'FZE', 'GmbH'];

const pools = Object.values(POOLS).map((pool) => ({ first: pool.first.split(' '), last: pool.last.split(' ') }));

/** Mulberry32: small, seeded, good enough to pick names. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** One letter changed, as lists and clerks misspell: makes the word dictionary as large as a real list's. */
function misspell(random: () => number, word: string): string {
  const at = 1 + Math.floor(random() * (word.length - 1));
  const letter = String.fromCharCode(97 + Math.floor(random() * 26));
  return word.slice(0, at) + letter + word.slice(at + 1);
}

function personName(random: () => number): string {
  const pool = pick(random, pools);
  const parts = [pick(random, pool.first)];
  if (random() < 0.5) parts.push(pick(random, pool.first));
  parts.push(pick(random, pool.last));
  return parts.map((part) => (random() < 0.08 ? misspell(random, part) : part)).join(' ');
}

function orgName(random: () => number): string {
  return `${pick(random, ORG_WORDS)} ${pick(random, ORG_WORDS)} ${pick(random, ORG_KINDS)} ${pick(random, ORG_FORMS)}`;
}

function birthDate(random: () => number): string {
  const year = 1940 + Math.floor(random() * 60);
  if (random() < 0.4) return String(year);
  return `${year}-${String(1 + Math.floor(random() * 12)).padStart(2, '0')}-${String(1 + Math.floor(random() * 28)).padStart(2, '0')}`;
}

/** `count` entities: nine persons in ten (a third with an alias), organizations the rest. */
export function* syntheticEntities(count: number, seed = 51, source = 'synthetic'): Generator<IndexedEntity> {
  const random = seededRandom(seed);
  for (let i = 0; i < count; i++) {
    const person = random() < 0.9;
    yield {
      id: `S${i}`,
      schema: person ? 'Person' : 'Organization',
      name: person ? personName(random) : orgName(random),
      aliases: random() < 0.33 ? [person ? personName(random) : orgName(random)] : [],
      birthDates: person && random() < 0.7 ? [birthDate(random)] : [],
      nationalities: random() < 0.8 ? [pick(random, COUNTRIES)] : [],
      topics: ['sanction'],
      programs: [],
      identifiers: [],
      source,
      listVersion: 1,
    };
  }
}

/** A customer as an institution screens one: a person's name, often a birth date and nationality. */
export function syntheticSubject(random: () => number): ScreeningSubject {
  if (random() < 0.1) return { type: 'organization', names: [orgName(random)] };
  return {
    type: 'person',
    names: [personName(random)],
    birthDate: random() < 0.8 ? birthDate(random) : undefined,
    nationality: random() < 0.8 ? pick(random, COUNTRIES) : undefined,
  };
}

/** Vouch's own list format (`--format csv`), from synthetic entities. */
export function listCsv(entities: Iterable<IndexedEntity>): Buffer {
  const cell = (value: string) => (/[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  const lines = ['id,schema,name,aliases,birthDate,nationality,topics,program,notes'];
  for (const entity of entities) {
    lines.push([entity.id, entity.schema, entity.name, entity.aliases.join(';'), entity.birthDates.join(';'), entity.nationalities.join(';'), 'sanction', 'BENCH', ''].map(cell).join(','));
  }
  return Buffer.from(lines.join('\n'));
}
