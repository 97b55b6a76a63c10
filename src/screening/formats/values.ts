import countries from 'i18n-iso-countries';

/**
 * The small values every format writes its own way: country names, dates of birth, genders.
 * Each answers undefined (or nothing) for what it cannot read; a strict format (Vouch csv) turns
 * that into an error, the official formats drop it, because one odd cell must not refuse a list.
 */

const SPACES = /\s+/g;
/** Whether a value needs cleaning: most do not, and testing allocates nothing (a million-entity list). */
const UNCLEAN = /^\s|\s$|\s\s|[^\S ]/;

/** Trimmed, inner whitespace collapsed to one space; '' for nothing. */
export function clean(value: string | undefined | null): string {
  if (!value) return '';
  if (!UNCLEAN.test(value)) return value;
  return value.replace(SPACES, ' ').trim();
}

// Names the lists use that i18n-iso-countries' English names do not hold (UN and OFAC style,
// historic names, and "Korea, North" inversions). Keys lower case.
const COUNTRY_ALIASES: Record<string, string> = {
  'iran (islamic republic of)': 'IR',
  "democratic people's republic of korea": 'KP',
  'korea, north': 'KP',
  'korea, democratic people’s republic of': 'KP',
  "korea, democratic people's republic of": 'KP',
  'republic of korea': 'KR',
  'korea, south': 'KR',
  'korea, republic of': 'KR',
  'viet nam': 'VN',
  syria: 'SY',
  'syrian arab republic': 'SY',
  burma: 'MM',
  'united kingdom': 'GB',
  'united kingdom of great britain and northern ireland': 'GB',
  uk: 'GB',
  'libyan arab jamahiriya': 'LY',
  'bolivia (plurinational state of)': 'BO',
  'venezuela (bolivarian republic of)': 'VE',
  'state of palestine': 'PS',
  'palestinian territories': 'PS',
  'occupied palestinian territory': 'PS',
  'west bank': 'PS',
  gaza: 'PS',
  'gaza strip': 'PS',
  macedonia: 'MK',
  'the former yugoslav republic of macedonia': 'MK',
  'republic of moldova': 'MD',
  'holy see': 'VA',
  'cabo verde': 'CV',
  swaziland: 'SZ',
  'cote d ivoire': 'CI',
  "cote d'ivoire": 'CI',
  'ivory coast': 'CI',
  'congo, democratic republic of the': 'CD',
  'democratic republic of congo': 'CD',
  'congo (democratic republic)': 'CD',
  'republic of the congo': 'CG',
  'congo, republic of the': 'CG',
  'the gambia': 'GM',
  'the bahamas': 'BS',
  'east timor': 'TL',
  'micronesia, federated states of': 'FM',
  'united states of america': 'US',
  'russian federation': 'RU',
  'united republic of tanzania': 'TZ',
  "lao people's democratic republic": 'LA',
  laos: 'LA',
  'turkiye': 'TR',
  'netherlands antilles': 'CW',
  'kyrgyz republic': 'KG',
  'slovak republic': 'SK',
  'czech republic': 'CZ',
  'bosnia-herzegovina': 'BA',
  'st kitts and nevis': 'KN',
  'st. kitts and nevis': 'KN',
  'saint kitts and nevis': 'KN',
  'st vincent and the grenadines': 'VC',
  'st. vincent and the grenadines': 'VC',
  'st lucia': 'LC',
  'st. lucia': 'LC',
  'sao tome and principe': 'ST',
  'china, hong kong special administrative region': 'HK',
  'hong kong sar': 'HK',
  'china, macao special administrative region': 'MO',
  'british virgin islands': 'VG',
  palestinian: 'PS',
  nigerian: 'NG',
};

const countryCache = new Map<string, string | undefined>();
const ALPHA2 = /^[A-Za-z]{2}$/;
const LEADING_THE = /^the\s+/;
const REGION_PREFIX = /^region:\s*/;
const TRAILING_DOT = /\.$/;

/** ISO 3166-1 alpha-2 (upper case) for a country name or code as a list writes it; undefined when unknown. */
export function countryCode(value: string | undefined | null): string | undefined {
  const name = clean(value);
  if (name === '') return undefined;
  if (countryCache.has(name)) return countryCache.get(name);
  const code = lookUpCountry(name);
  // Lists repeat a few hundred names; the cache stays that small.
  if (countryCache.size < 10_000) countryCache.set(name, code);
  return code;
}

function lookUpCountry(name: string): string | undefined {
  if (ALPHA2.test(name)) {
    const upper = name.toUpperCase();
    return countries.isValid(upper) || upper === 'XK' ? upper : undefined;
  }
  const key = name.toLowerCase().replace(TRAILING_DOT, '').replace(REGION_PREFIX, '');
  const known = COUNTRY_ALIASES[key] ?? COUNTRY_ALIASES[key.replace(LEADING_THE, '')];
  if (known) return known;
  return countries.getAlpha2Code(name, 'en') ?? countries.getAlpha2Code(name.replace(LEADING_THE, ''), 'en') ?? undefined;
}

/** Whether an upper-case two-letter code is an ISO 3166-1 alpha-2 code (XK, Kosovo, included). */
export function isCountryCode(code: string): boolean {
  return ALPHA2.test(code) && code === code.toUpperCase() && (countries.isValid(code) || code === 'XK');
}

const MONTHS: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, sept: 9, oct: 10, nov: 11, dec: 12,
  january: 1, february: 2, march: 3, april: 4, june: 6, july: 7, august: 8, september: 9, october: 10, november: 11, december: 12,
};

const ISO_DATE = /^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$/;
const DAY_MONTH_NAME_YEAR = /^(?:(\d{1,2})\s+)?([A-Za-z]{3,9})\.?\s+(\d{4})$/;
const SLASHED = /^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$/;
const YEAR_RANGE = /^(\d{4})\s*(?:to|-|–|and)\s*(\d{4})$/i;
const DATE_RANGE = /^(.+?)\s+(?:to|–|and)\s+(.+)$/i;
const APPROXIMATE = /^(?:circa|ca\.?|c\.|approximately|approx\.?|about|between)\s+/i;
/** A list's range of birth years is written as its years; a wider one is an error in the list, kept to its ends. */
const MAX_RANGE_YEARS = 15;

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in a month of a year (Gregorian). */
function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : MONTH_DAYS[month - 1]!;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** 'YYYY', 'YYYY-MM' or 'YYYY-MM-DD' from parts; a zero or missing month/day widens the precision. */
export function datePrecision(year: number, month?: number, day?: number): string | undefined {
  if (!Number.isInteger(year) || year < 1800 || year > 2100) return undefined;
  if (!month) return String(year);
  if (month < 1 || month > 12) return undefined;
  if (!day) return `${year}-${pad(month)}`;
  if (day < 1 || day > daysIn(year, month)) return undefined;
  return `${year}-${pad(month)}-${pad(day)}`;
}

/**
 * A date of birth as lists write it, normalized: '1960-01-12', '12 Jan 1960', 'Jan 1960', '1960',
 * 'circa 1960', '1960 to 1962' (each year), '12/01/1960' (day first, as UK and EU write it;
 * '00/00/1960' is a year). Nothing for what is not a date.
 */
export function normalizeDate(value: string | undefined | null): string[] {
  let text = clean(value);
  if (text === '') return [];
  text = text.replace(APPROXIMATE, '');
  const iso = ISO_DATE.exec(text);
  if (iso) return one(datePrecision(Number(iso[1]), iso[2] ? Number(iso[2]) : undefined, iso[3] ? Number(iso[3]) : undefined));
  const range = YEAR_RANGE.exec(text);
  if (range) return yearRange(Number(range[1]), Number(range[2]));
  const dateRange = DATE_RANGE.exec(text);
  if (dateRange) {
    const from = normalizeDate(dateRange[1]);
    const to = normalizeDate(dateRange[2]);
    if (from.length === 1 && to.length === 1) return yearRange(Number(from[0]!.slice(0, 4)), Number(to[0]!.slice(0, 4)));
    return [];
  }
  const named = DAY_MONTH_NAME_YEAR.exec(text);
  if (named) {
    const month = MONTHS[named[2]!.toLowerCase()];
    if (!month) return [];
    return one(datePrecision(Number(named[3]), month, named[1] ? Number(named[1]) : undefined));
  }
  const slashed = SLASHED.exec(text);
  if (slashed) {
    const month = Number(slashed[2]);
    return one(datePrecision(Number(slashed[3]), month, month ? Number(slashed[1]) : undefined));
  }
  return [];
}

/** Each year from `from` to `to`; a range wider than MAX_RANGE_YEARS keeps its two ends only. */
export function yearRange(from: number, to: number): string[] {
  const low = Math.min(from, to);
  const high = Math.max(from, to);
  if (!datePrecision(low) || !datePrecision(high)) return [];
  if (high - low > MAX_RANGE_YEARS) return [String(low), String(high)];
  const years: string[] = [];
  for (let year = low; year <= high; year++) years.push(String(year));
  return years;
}

function one(value: string | undefined): string[] {
  return value ? [value] : [];
}

/** 'male' | 'female' from Male, M, female, F, ... (any case); undefined otherwise. */
export function normalizeGender(value: string | undefined | null): 'male' | 'female' | undefined {
  const text = clean(value).toLowerCase();
  if (text === 'male' || text === 'm') return 'male';
  if (text === 'female' || text === 'f') return 'female';
  return undefined;
}

/** The list's remarks kept to 1,000 characters (the contract's limit), whitespace collapsed. */
export function shortNotes(value: string | undefined | null): string | undefined {
  const text = clean(value);
  if (text === '') return undefined;
  return text.length <= 1000 ? text : `${text.slice(0, 999)}…`;
}
