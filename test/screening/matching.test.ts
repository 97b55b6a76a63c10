import { describe, expect, it } from 'vitest';
import type { IndexedEntity, ScreeningSubject } from '../../src/screening/entity.js';
import { compareNames, DEFAULT_THRESHOLD, ScreeningIndex } from '../../src/screening/matching/index.js';

const T = DEFAULT_THRESHOLD;
const person = (a: string, b: string): number => compareNames(a, b, 'Person');
const org = (a: string, b: string): number => compareNames(a, b, 'Organization');

function entity(id: string, name: string, extra: Partial<IndexedEntity> = {}): IndexedEntity {
  return {
    id,
    schema: 'Person',
    name,
    aliases: [],
    birthDates: [],
    nationalities: [],
    topics: ['sanction'],
    programs: [],
    identifiers: [],
    source: 'un',
    listVersion: 1,
    ...extra,
  };
}

function subject(name: string, extra: Partial<ScreeningSubject> = {}): ScreeningSubject {
  return { type: 'person', names: [name], ...extra };
}

describe('compareNames: Nigerian naming conventions', () => {
  it('drops titles and honorifics', () => {
    expect(person('Alhaji Mohammed Yusuf', 'Mohammed Yusuf')).toBe(1);
    expect(person('Chief Dr. Olusegun Obasanjo', 'Olusegun Obasanjo')).toBe(1);
    expect(person('Engr. Hon. Aminu Tambuwal', 'Aminu Waziri Tambuwal')).toBeGreaterThanOrEqual(T);
    expect(person('Hajiya Hadiza Bala', 'Hadiza Bala')).toBe(1);
    expect(person('Otunba Gbenga Daniel', 'Gbenga Daniel')).toBe(1);
    expect(person('Gen. (Rtd) Muhammadu Buhari', 'Muhammadu Buhari')).toBe(1);
  });

  it('keeps a title word that is the person’s name', () => {
    // "Justice" is a first name in Nigeria: dropping it would leave one word.
    expect(person('Justice Okoro', 'Okoro')).toBeLessThan(T);
  });

  it.each([
    ['Muhammad', ['Mohammed', 'Mohammad', 'Muhammadu', 'Mohamed', 'Mamman']],
    ['Abubakar', ['Abu Bakr', 'Abu-Bakr', 'Abubakr']],
    ['Abdullahi', ['Abdallah', 'Abdullah']],
    ['Yusuf', ['Yusuph', 'Yusufu', 'Yousef']],
    ['Aisha', ['Aishat', 'Aishatu', "A'isha", 'Ayesha']],
    ['Ibrahim', ['Ibrahima', 'Ibrahimu', 'Brahim']],
    ['Usman', ['Uthman', 'Othman', 'Osman']],
    ['Umar', ['Omar', 'Umaru']],
    ['Sulaiman', ['Suleiman', 'Sulaimon']],
    ['Abdulrahman', ['Abdurrahman', 'Abdul Rahman', 'Abd al-Rahman', 'Abdel Rahman']],
    ['Fatima', ['Fatimah', 'Fatimat', 'Fatsuma']],
    ['Hauwa', ['Hawa']],
    ['Aliyu', ['Ali']],
    ['Ismail', ['Ismaila']],
    ['Yakubu', ['Yaqub']],
    ['Haruna', ['Harun']],
    ['Idris', ['Idrisu']],
    ['Adamu', ['Adam']],
  ])('knows %s = %j', (name, variants) => {
    for (const variant of variants) {
      expect(person(`${name} Garba Danladi`, `${variant} Garba Danladi`), variant).toBeGreaterThanOrEqual(0.95);
    }
  });

  it('holds Arabic and English forms of a scriptural name a weak match, not a hit on their own', () => {
    for (const [arabic, english] of [['Musa', 'Moses'], ['Yusuf', 'Joseph'], ['Sulaiman', 'Solomon'], ['Yakubu', 'Jacob'], ['Haruna', 'Aaron'], ['Hauwa', 'Eve']]) {
      const score = person(`${arabic} Okafor`, `${english} Okafor`);
      expect(score, `${arabic}/${english}`).toBeLessThan(T);
      expect(score, `${arabic}/${english}`).toBeGreaterThan(person(`${arabic} Okafor`, `Peter Okafor`));
    }
  });

  it('knows Yoruba short forms as a rule, not only a table', () => {
    for (const [short, long] of [
      ['Bunmi', 'Oluwabunmi'],
      ['Bunmi', 'Olubunmi'],
      ['Tunde', 'Babatunde'],
      ['Femi', 'Oluwafemi'],
      ['Seun', 'Oluwaseun'],
      ['Tosin', 'Oluwatosin'],
      ['Dayo', 'Adedayo'],
      ['Kunle', 'Akinkunle'],
      ['Segun', 'Olusegun'],
      ['Wale', 'Adewale'],
      ['Bayo', 'Adebayo'],
      ['Funmi', 'Oluwafunmilayo'],
      ['Tayo', 'Omotayo'],
      ['Gbenga', 'Oluwagbenga'],
      ['Lanre', 'Olanrewaju'],
      ['Jide', 'Babajide'],
      ['Bisi', 'Olabisi'],
      ['Niyi', 'Olaniyi'],
      ['Tobi', 'Oluwatobi'],
      ['Dami', 'Oluwadamilare'],
      // In no table: the rule (prefix Ayo-, Ope-, Oye-) finds them.
      ['Dele', 'Ayodele'],
      ['Yemisi', 'Opeyemisi'],
      ['Tomiwa', 'Oyetomiwa'],
    ]) {
      expect(person(`${short} Adeleke`, `${long} Adeleke`), `${short}/${long}`).toBeGreaterThanOrEqual(0.9);
    }
    expect(person('Oluwabunmi Adeleke', 'Olubunmi Adeleke')).toBeGreaterThanOrEqual(0.95);
  });

  it('does not take two long Yoruba names with different prefixes for one', () => {
    expect(person('Adeyemi Bakare', 'Oluyemi Bakare')).toBeLessThan(T);
  });

  it('knows Igbo Chukwu-/Chi- forms', () => {
    expect(person('Emeka Okonkwo', 'Chukwuemeka Okonkwo')).toBeGreaterThanOrEqual(0.9);
    expect(person('Nedu Okonkwo', 'Chinedu Okonkwo')).toBeGreaterThanOrEqual(0.9);
    expect(person('Chidi Okonkwo', 'Chukwudi Okonkwo')).toBeGreaterThanOrEqual(0.9);
    expect(person('Ifeanyi Okonkwo', 'Ifeanyichukwu Okonkwo')).toBeGreaterThanOrEqual(0.9);
    expect(person('Kelechi Okonkwo', 'Kelechukwu Okonkwo')).toBeGreaterThanOrEqual(0.9);
  });

  it('ignores order, case, accents, punctuation and hyphens', () => {
    expect(person('Yusuf Muhammad', 'MUHAMMAD yusuf')).toBe(1);
    expect(person('Ngozi Okonjo-Iweala', 'Ngozi Okonjo Iweala')).toBe(1);
    expect(person('Ọláolúwa Ṣẹ́gun Adébáyọ̀', 'Olaoluwa Segun Adebayo')).toBe(1);
    expect(person("Ahmad O'Neil", 'Ahmad ONeil')).toBe(1);
  });

  it('reads "LAST, First"', () => {
    expect(person('BELLO, Ahmed Musa', 'Ahmed Musa Bello')).toBe(1);
  });

  it('tolerates typos in long names, fewer in short ones', () => {
    expect(person('Nnamdi Azikiwe', 'Nnamdi Azikwe')).toBeGreaterThanOrEqual(T);
    expect(person('Obinna Nwachukwu', 'Obina Nwachukwu')).toBeGreaterThanOrEqual(T);
    expect(person('Abdulkadir Salihu', 'Abdulkadri Salihu')).toBeGreaterThanOrEqual(T);
    // Bala and Bola are two names, not a typo.
    expect(person('Bala Usman', 'Bola Usman')).toBeLessThan(person('Obinna Usman', 'Obina Usman'));
  });

  it('treats an initial as an initial: weakly, and only the same letter', () => {
    const initial = person('Ahmed B. Tinubu', 'Ahmed Bola Tinubu');
    expect(initial).toBeGreaterThanOrEqual(T);
    expect(initial).toBeLessThan(person('Ahmed Bola Tinubu', 'Ahmed Bola Tinubu'));
    expect(person('Ahmed K. Tinubu', 'Ahmed Bola Tinubu')).toBeLessThan(initial);
  });

  it('matches a missing middle name strongly, an extra subject word less', () => {
    const missing = person('Ahmed Bello', 'Ahmed Musa Bello');
    const extra = person('Ahmed Musa Bello', 'Ahmed Bello');
    expect(missing).toBeGreaterThanOrEqual(0.85);
    expect(extra).toBeLessThan(missing);
  });

  it('does not match a single word strongly to a longer name', () => {
    expect(person('Bello', 'Ahmed Bello')).toBeLessThan(T);
    expect(person('Bello', 'Bello')).toBe(1);
  });

  it('normalizes organization forms, which weigh little', () => {
    expect(org('Dangote Cement PLC', 'DANGOTE CEMENT PUBLIC LIMITED COMPANY')).toBeGreaterThanOrEqual(0.95);
    expect(org('Zenith Ventures Nig. Ltd', 'Zenith Ventures Nigeria Limited')).toBeGreaterThanOrEqual(0.95);
    expect(org('Acme Trading Enterprises', 'ACME TRADING ENT.')).toBeGreaterThanOrEqual(0.95);
    expect(org('The Bank of Industry Ltd', 'Bank of Industry Limited')).toBeGreaterThanOrEqual(0.95);
    expect(org('Smith & Sons Co', 'Smith and Sons Company')).toBeGreaterThanOrEqual(0.95);
    // Clearly below the threshold: a shared first word does not make two businesses one.
    expect(org('Zenith Bank', 'Zenith Ventures')).toBeLessThan(T - 0.15);
    expect(org('Zenith Bank PLC', 'Access Bank PLC')).toBeLessThan(T - 0.15);
  });

  it('transliterates names in other scripts', () => {
    expect(person('محمد علي', 'Mohamed Ali')).toBeGreaterThanOrEqual(T);
    expect(person('Владимир Путин', 'Vladimir Putin')).toBeGreaterThanOrEqual(0.95);
    expect(person('习近平', 'Xi Jinping')).toBeGreaterThanOrEqual(T);
    expect(person('Mukhammad Yusupov', 'Muhammad Yusupov')).toBeGreaterThanOrEqual(T);
  });

  it('keeps clear non-matches below the threshold', () => {
    for (const [a, b] of [
      ['Aliyu Bello', 'Aliko Dangote'],
      ['Chinedu Okafor', 'Chukwuma Okoro'],
      ['Fatima Bello', 'Aisha Bello'],
      ['Mahmoud Abbas', 'Muhammad Abbas'],
      ['Tunde Bakare', 'Kunle Bakare'],
      ['John Smith', 'Jane Smythe'],
    ]) {
      expect(person(a!, b!), `${a} / ${b}`).toBeLessThan(T);
    }
  });
});

describe('ScreeningIndex', () => {
  const listed = [
    entity('QDi.1', 'Muhammad YUSUF', { birthDates: ['1962'], nationalities: ['NG'], gender: 'male', identifiers: ['A01234567'] }),
    entity('QDi.2', 'Muhammad Yusuf', { birthDates: ['1952-03-04'], nationalities: ['NG'] }),
    entity('QDi.3', 'Abubakar SHEKAU', { aliases: ['Abu Bakr Shekau', 'أبو بكر شيكاو'] }),
    entity('NSL.1', 'Oluwabunmi Adeyemi', { source: 'nsl', gender: 'female' }),
    entity('OFAC.9', 'Zenith Ventures Nigeria Limited', { schema: 'Organization', source: 'ofac' }),
    entity('OFAC.10', 'Aliko Dangote', { source: 'ofac' }),
  ];
  const index = new ScreeningIndex(listed);

  it('finds the listed person behind titles and spellings, and explains it', () => {
    const hits = index.screen(subject('Alhaji Mohammed Yusuf', { birthDate: '1962', nationality: 'NG' }));
    expect(hits[0]!.entity.id).toBe('QDi.1');
    expect(hits[0]!.score).toBeGreaterThanOrEqual(0.99);
    expect(hits[0]!.matchedName).toBe('Muhammad YUSUF');
    const explanation = hits[0]!.explanation;
    expect(explanation).toContain('"Alhaji" ignored');
    expect(explanation).toContain('Mohammed = Muhammad (name variant)');
    expect(explanation).toContain('Birth year 1962 matches (+0.02)');
    expect(explanation).toContain('Nationality NG matches');
    expect(explanation.length).toBeLessThanOrEqual(400);
  });

  it('lowers a hit a lot for a birth year far from the listed one, and says so', () => {
    const hits = index.screen(subject('Muhammad Yusuf', { birthDate: '1990' }));
    expect(hits.map((hit) => hit.entity.id)).toEqual([]);
    const low = index.screen(subject('Muhammad Yusuf', { birthDate: '1990' }), { threshold: 0.3 });
    expect(low[0]!.explanation).toMatch(/Birth year 1990 is \d+ years from 19\d\d \(−0\.30\)/);
    const exact = index.screen(subject('Muhammad Yusuf', { birthDate: '1952-03-04' }));
    expect(exact[0]!.entity.id).toBe('QDi.2');
    expect(exact[0]!.explanation).toContain('Born 1952-03-04 as listed (+0.03)');
  });

  it('lowers a hit for a different nationality or gender, and says so', () => {
    const base = index.screen(subject('Oluwabunmi Adeyemi'))[0]!;
    const male = index.screen(subject('Oluwabunmi Adeyemi', { gender: 'male' }), { threshold: 0.5 })[0]!;
    expect(male.score).toBeLessThan(base.score);
    expect(male.explanation).toContain('Gender male, listed female');
    const foreign = index.screen(subject('Muhammad Yusuf', { nationality: 'GH' }), { threshold: 0.5 });
    expect(foreign[0]!.explanation).toContain('Nationality GH, listed NG (−0.05)');
    expect(foreign[0]!.score).toBeLessThan(index.screen(subject('Muhammad Yusuf', { nationality: 'NG' }))[0]!.score);
  });

  it('raises an identical identifier to near-certain', () => {
    const hits = index.screen(subject('M. Yusuf', { identifiers: ['a0123-4567'] }));
    expect(hits[0]!.entity.id).toBe('QDi.1');
    expect(hits[0]!.score).toBeGreaterThanOrEqual(0.99);
    expect(hits[0]!.explanation).toContain('Identifier ending 4567 is the listed one');
  });

  it('finds short forms, aliases and other scripts', () => {
    expect(index.screen(subject('Bunmi Adeyemi'))[0]!.entity.id).toBe('NSL.1');
    expect(index.screen(subject('Abu-Bakr Shekau'))[0]!.entity.id).toBe('QDi.3');
    expect(index.screen(subject('أبو بكر شيكاو'))[0]!.entity.id).toBe('QDi.3');
  });

  it('screens organizations against organizations only', () => {
    const hits = index.screen({ type: 'organization', names: ['Zenith Ventures Nig. Ltd'] });
    expect(hits.map((hit) => hit.entity.id)).toEqual(['OFAC.9']);
    expect(index.screen({ type: 'organization', names: ['Zenith Bank'] })).toEqual([]);
    expect(index.screen(subject('Zenith Ventures Nigeria Limited'))).toEqual([]);
  });

  it('keeps clear non-matches out', () => {
    expect(index.screen(subject('Aliyu Bello'))).toEqual([]);
    expect(index.screen(subject('Yusuf'))).toEqual([]);
  });

  it('restricts to the sources asked for and caps the hits', () => {
    expect(index.screen(subject('Oluwabunmi Adeyemi'), { sources: new Set(['un']) })).toEqual([]);
    expect(index.screen(subject('Oluwabunmi Adeyemi'), { sources: new Set(['nsl']) })).toHaveLength(1);
    expect(index.screen(subject('Muhammad Yusuf'))).toHaveLength(2);
    expect(index.screen(subject('Muhammad Yusuf'), { limit: 1 })).toHaveLength(1);
    expect(index.screen(subject('Muhammad Yusuf'), { sources: new Set() })).toEqual([]);
  });

  it('is cheap to build small and to screen', () => {
    expect(index.size).toBe(listed.length);
    const empty = new ScreeningIndex([]);
    expect(empty.size).toBe(0);
    expect(empty.screen(subject('Muhammad Yusuf'))).toEqual([]);
    expect(index.screen(subject(''))).toEqual([]);
    expect(index.screen({ type: 'person', names: [] })).toEqual([]);
  });
});
