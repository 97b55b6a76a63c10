import { describe, it, expect } from 'vitest';
import {
  datesMatch,
  editDistance,
  emailsMatch,
  formatDmy,
  gendersMatch,
  namesMatch,
  normalizeGender,
  normalizeName,
  normalizePhone,
  parseDate,
  phonesMatch,
} from '../../src/identities/matching.js';

// Callers hand over parsed JSON, so the functions are also exercised with values the types forbid.
const untyped = (value: unknown) => value as string;

describe('normalizeName', () => {
  it.each(['Ade-Yemi', 'ade yemi', 'Adéyemi', 'ADEYEMI', '  Ade  Yemi ', 'Ade\tYemi', "Ade'yemi", 'A.de.yemi'])(
    'reduces %j to "adeyemi"',
    (value) => {
      expect(normalizeName(value)).toBe('adeyemi');
    },
  );

  it('strips diacritics of Yoruba and other Latin names', () => {
    expect(normalizeName('Ọlọ́run')).toBe('olorun');
    expect(normalizeName('Ṣẹ̀gun')).toBe('segun');
    expect(normalizeName('Chloë Müller')).toBe('chloemuller');
    expect(normalizeName('İbrahim')).toBe('ibrahim');
  });

  it('treats typographic apostrophes and dashes like their ASCII forms', () => {
    expect(normalizeName('O’Brien')).toBe('obrien');
    expect(normalizeName('Ade–Yemi')).toBe('adeyemi');
  });

  it('reduces a name of separators only to the empty string', () => {
    expect(normalizeName(' - . ')).toBe('');
  });
});

describe('editDistance', () => {
  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('chiamaka', 'chiamaka')).toBe(0);
    expect(editDistance('chiamaka', 'chiamka')).toBe(1);
    expect(editDistance('chiamaka', 'chiamakaa')).toBe(1);
    expect(editDistance('chiamaka', 'chiamoka')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
  });

  it('counts an adjacent transposition as one edit', () => {
    expect(editDistance('ngozi', 'ngzoi')).toBe(1);
  });

  it('is the optimal string alignment variant, which edits no substring twice', () => {
    expect(editDistance('ca', 'abc')).toBe(3);
  });
});

describe('namesMatch', () => {
  it('matches names equal after normalisation', () => {
    expect(namesMatch('Ade-Yemi', 'ADEYEMI')).toBe(true);
    expect(namesMatch('Adéyemi', 'ade yemi')).toBe(true);
    expect(namesMatch('Obi', 'obi')).toBe(true);
  });

  it('tolerates one typo from five letters', () => {
    expect(namesMatch('Chiamka', 'Chiamaka')).toBe(true);
    expect(namesMatch('Chiamaka', 'Chiamka')).toBe(true);
    expect(namesMatch('Emeka', 'Emeke')).toBe(true);
    expect(namesMatch('Ngzoi', 'Ngozi')).toBe(true);
  });

  it('refuses two typos below nine letters', () => {
    expect(namesMatch('Chimka', 'Chiamaka')).toBe(false);
    expect(namesMatch('Emuke', 'Emeka')).toBe(false);
  });

  it('tolerates two typos from nine letters', () => {
    expect(namesMatch('Oluwasegun', 'Oluwasegun')).toBe(true);
    expect(namesMatch('Oluwasgn', 'Oluwasegun')).toBe(false);
    expect(namesMatch('Olowaseun', 'Oluwaseun')).toBe(true);
    expect(namesMatch('Olowasaun', 'Oluwaseun')).toBe(true);
    expect(namesMatch('Oluwaseun', 'Olowasaun')).toBe(true);
  });

  it('refuses three typos even for long names', () => {
    expect(namesMatch('Olowasaan', 'Oluwaseun')).toBe(false);
    expect(namesMatch('Oluwafemi', 'Oluwaseun')).toBe(false);
  });

  it('never tolerates a typo in a name shorter than five letters', () => {
    expect(namesMatch('Ada', 'Ado')).toBe(false);
    expect(namesMatch('Obi', 'Obe')).toBe(false);
    expect(namesMatch('Uche', 'Uchi')).toBe(false);
    expect(namesMatch('Tobi', 'Tobii')).toBe(false);
    expect(namesMatch('Tobii', 'Tobi')).toBe(false);
  });

  it('matches the same tokens in another order', () => {
    expect(namesMatch('Oluwaseun Ade', 'Ade Oluwaseun')).toBe(true);
    expect(namesMatch('Bello Musa Ibrahim', 'Ibrahim Bello Musa')).toBe(true);
    expect(namesMatch('Ngozi Okonjo-Iweala', 'Okonjo-Iweala Ngozi')).toBe(true);
    expect(namesMatch('Ngozi Okonjo-Iweala', 'okonjo iweala  NGOZI')).toBe(true);
  });

  it('does not match a reordering that drops, adds or repeats a token', () => {
    expect(namesMatch('Oluwaseun Ade', 'Ade Oluwaseun Bello')).toBe(false);
    expect(namesMatch('Ade Ade', 'Ade')).toBe(false);
    expect(namesMatch('Ade Oluwaseun', 'Oluwaseun')).toBe(false);
  });

  it('does not match different names', () => {
    expect(namesMatch('Chiamaka', 'Chinonso')).toBe(false);
    expect(namesMatch('Adeyemi', 'Adebayo')).toBe(false);
    expect(namesMatch('Musa', 'Bello')).toBe(false);
  });

  it('is symmetric', () => {
    const pairs: Array<[string, string]> = [
      ['Chiamka', 'Chiamaka'],
      ['Chika', 'Chka'],
      ['Olowasaun', 'Oluwaseun'],
      ['Oluwaseun Ade', 'Ade Oluwaseun'],
      ['Ada', 'Ado'],
      ['Adeyemi', 'Adebayo'],
    ];
    for (const [a, b] of pairs) expect(namesMatch(a, b)).toBe(namesMatch(b, a));
  });

  it('sizes the tolerance on the shorter name, so a missing letter in a five-letter name fails', () => {
    expect(namesMatch('Chka', 'Chika')).toBe(false);
    expect(namesMatch('Chika', 'Chka')).toBe(false);
  });

  it('answers false when either side is missing or blank', () => {
    expect(namesMatch(undefined, 'Ade')).toBe(false);
    expect(namesMatch('Ade', undefined)).toBe(false);
    expect(namesMatch(null, null)).toBe(false);
    expect(namesMatch('', '')).toBe(false);
    expect(namesMatch('   ', 'Ade')).toBe(false);
    expect(namesMatch('-', '.')).toBe(false);
    expect(namesMatch(untyped(42), 'Ade')).toBe(false);
  });
});

describe('parseDate', () => {
  it.each([
    ['14-03-1990', { year: 1990, month: 3, day: 14 }],
    ['14/03/1990', { year: 1990, month: 3, day: 14 }],
    ['1990-03-14', { year: 1990, month: 3, day: 14 }],
    ['1990/03/14', { year: 1990, month: 3, day: 14 }],
    ['4-3-1990', { year: 1990, month: 3, day: 4 }],
    ['1990-3-4', { year: 1990, month: 3, day: 4 }],
    ['  14-03-1990 ', { year: 1990, month: 3, day: 14 }],
    ['1990-03-14T00:00:00Z', { year: 1990, month: 3, day: 14 }],
    ['1990-03-14T23:30:00.000+01:00', { year: 1990, month: 3, day: 14 }],
    ['1990-03-14T23:30:00-05:00', { year: 1990, month: 3, day: 14 }],
    ['1990-03-14 00:00:00+00', { year: 1990, month: 3, day: 14 }],
    ['29-02-2000', { year: 2000, month: 2, day: 29 }],
    ['29-02-1992', { year: 1992, month: 2, day: 29 }],
    ['01-01-1900', { year: 1900, month: 1, day: 1 }],
    ['31-12-2100', { year: 2100, month: 12, day: 31 }],
  ])('reads %j', (value, expected) => {
    expect(parseDate(value)).toEqual(expected);
  });

  it.each([
    '31-02-1990',
    '29-02-1990',
    '29-02-1900',
    '31-04-1990',
    '14-13-1990',
    '00-03-1990',
    '14-00-1990',
    '1990-02-30',
    '31-12-1899',
    '01-01-2101',
    '14-03/1990',
    '14.03.1990',
    '14-03-90',
    '140-3-1990',
    '1990-03-14T',
    '1990-03-14Tnoon',
    '1990-3-14T00:00:00Z',
    '14 March 1990',
    '14031990',
    '14-03-1990x',
    '',
    '   ',
  ])('rejects %j', (value) => {
    expect(parseDate(value)).toBeUndefined();
  });

  it('answers undefined for missing values', () => {
    expect(parseDate(undefined)).toBeUndefined();
    expect(parseDate(null)).toBeUndefined();
    expect(parseDate(untyped(19900314))).toBeUndefined();
  });
});

describe('datesMatch', () => {
  it('matches the same calendar date written differently', () => {
    expect(datesMatch('14-03-1990', '1990-03-14')).toBe(true);
    expect(datesMatch('14/03/1990', '14-03-1990')).toBe(true);
    expect(datesMatch('4-3-1990', '04-03-1990')).toBe(true);
    expect(datesMatch('1990-03-04T10:00:00Z', '04/03/1990')).toBe(true);
  });

  it('does not match swapped day and month', () => {
    expect(datesMatch('03-04-1990', '1990-03-04')).toBe(false);
    expect(datesMatch('1990-03-04', '03-04-1990')).toBe(false);
  });

  it('does not match different dates', () => {
    expect(datesMatch('14-03-1990', '15-03-1990')).toBe(false);
    expect(datesMatch('14-03-1990', '14-03-1991')).toBe(false);
  });

  it('answers false when either side is missing or invalid', () => {
    expect(datesMatch('31-02-1990', '31-02-1990')).toBe(false);
    expect(datesMatch('14-03-1990', undefined)).toBe(false);
    expect(datesMatch(null, '14-03-1990')).toBe(false);
    expect(datesMatch('', '')).toBe(false);
    expect(datesMatch('yesterday', 'yesterday')).toBe(false);
  });
});

describe('formatDmy', () => {
  it('zero-pads day and month', () => {
    expect(formatDmy({ year: 1990, month: 3, day: 4 })).toBe('04-03-1990');
    expect(formatDmy({ year: 1990, month: 12, day: 14 })).toBe('14-12-1990');
  });

  it('takes another separator', () => {
    expect(formatDmy({ year: 1990, month: 3, day: 14 }, '/')).toBe('14/03/1990');
  });

  it('round-trips with parseDate', () => {
    const date = parseDate('1990-03-14T00:00:00Z');
    expect(date && formatDmy(date)).toBe('14-03-1990');
  });
});

describe('normalizePhone', () => {
  it.each(['08031234567', '+2348031234567', '2348031234567', '0803 123 4567', ' 0803-123-4567 ', '+234 (0) 803 123 4567'])(
    'reads %j as +2348031234567',
    (value) => {
      expect(normalizePhone(value)).toBe('+2348031234567');
    },
  );

  const prefixes = ['0803', '0806', '0813', '0816', '0703', '0706', '0903', '0905', '0701', '0802'];
  const more = ['0808', '0812', '0708', '0902', '0907', '0809', '0817', '0818', '0909', '0908'];
  it.each([...prefixes, ...more])('accepts the Nigerian mobile prefix %s', (prefix) => {
    expect(normalizePhone(`${prefix}7654321`)).toBe(`+234${prefix.slice(1)}7654321`);
  });

  it('keeps a valid foreign number in E.164', () => {
    expect(normalizePhone('+447911123456')).toBe('+447911123456');
  });

  it.each([
    '0803123456',
    '080312345678',
    '+23480312345678',
    '0803123456a',
    '12345',
    '0000000000',
    '+447911',
    'not a phone',
    '',
    '   ',
  ])('rejects %j', (value) => {
    expect(normalizePhone(value)).toBeUndefined();
  });

  it('answers undefined for missing values', () => {
    expect(normalizePhone(undefined)).toBeUndefined();
    expect(normalizePhone(null)).toBeUndefined();
    expect(normalizePhone(untyped(8031234567))).toBeUndefined();
  });
});

describe('phonesMatch', () => {
  it('matches the same number written differently', () => {
    expect(phonesMatch('08031234567', '+2348031234567')).toBe(true);
    expect(phonesMatch('2348031234567', '0803 123 4567')).toBe(true);
  });

  it('does not match different numbers', () => {
    expect(phonesMatch('08031234567', '08031234568')).toBe(false);
    expect(phonesMatch('08031234567', '07031234567')).toBe(false);
  });

  it('answers false when either side is missing or invalid', () => {
    expect(phonesMatch('08031234567', undefined)).toBe(false);
    expect(phonesMatch(null, '08031234567')).toBe(false);
    expect(phonesMatch('12345', '12345')).toBe(false);
    expect(phonesMatch(undefined, undefined)).toBe(false);
  });
});

describe('normalizeGender', () => {
  it.each([
    ['M', 'M'],
    ['m', 'M'],
    ['Male', 'M'],
    [' MALE ', 'M'],
    ['F', 'F'],
    ['f', 'F'],
    ['Female', 'F'],
    ['female\n', 'F'],
  ])('reads %j as %s', (value, expected) => {
    expect(normalizeGender(value)).toBe(expected);
  });

  it.each(['', ' ', 'X', 'man', 'woman', 'Mal', 'fem', 'constructor', 'toString'])('rejects %j', (value) => {
    expect(normalizeGender(value)).toBeUndefined();
  });

  it('answers undefined for missing values', () => {
    expect(normalizeGender(undefined)).toBeUndefined();
    expect(normalizeGender(null)).toBeUndefined();
  });
});

describe('gendersMatch', () => {
  it('matches the same gender written differently', () => {
    expect(gendersMatch('M', 'male')).toBe(true);
    expect(gendersMatch('Female', ' f ')).toBe(true);
  });

  it('does not match different genders', () => {
    expect(gendersMatch('M', 'F')).toBe(false);
    expect(gendersMatch('Female', 'Male')).toBe(false);
  });

  it('answers false when either side is missing or unknown', () => {
    expect(gendersMatch('M', undefined)).toBe(false);
    expect(gendersMatch(null, 'F')).toBe(false);
    expect(gendersMatch('X', 'X')).toBe(false);
    expect(gendersMatch('', '')).toBe(false);
  });
});

describe('emailsMatch', () => {
  it('matches ignoring case and surrounding whitespace', () => {
    expect(emailsMatch('Ada.Obi@Example.com', 'ada.obi@example.com')).toBe(true);
    expect(emailsMatch('  ada@example.com ', 'ADA@EXAMPLE.COM')).toBe(true);
  });

  it('does not match different addresses', () => {
    expect(emailsMatch('ada@example.com', 'ada@example.org')).toBe(false);
    expect(emailsMatch('ada.obi@example.com', 'adaobi@example.com')).toBe(false);
  });

  it('answers false when either side is missing or blank', () => {
    expect(emailsMatch('ada@example.com', undefined)).toBe(false);
    expect(emailsMatch(null, 'ada@example.com')).toBe(false);
    expect(emailsMatch('', '')).toBe(false);
    expect(emailsMatch('  ', '  ')).toBe(false);
    expect(emailsMatch(null, null)).toBe(false);
  });
});
