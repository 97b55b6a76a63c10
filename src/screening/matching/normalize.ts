import anyAscii from 'any-ascii';
import type { EntitySchema } from '../entity.js';

/**
 * A name as words the matcher compares: transliterated to ASCII (any-ascii), lower case, without
 * accents or punctuation; leading titles and honorifics dropped from a person's name; legal forms
 * of an organization written one way (Limited → ltd, Public Limited Company → plc, Nig. → nigeria).
 */

/** What a word is worth in a name: a legal form or "the" says little about who an entity is. */
export type TokenKind = 'name' | 'initial' | 'particle' | 'generic' | 'legal' | 'stop';

export interface NameToken {
  /** Normalized: lower case ASCII letters and digits. */
  norm: string;
  /** The word as written, for the explanation. */
  display: string;
  kind: TokenKind;
  /** One syllable of a Chinese, Japanese or Korean name: the same syllable or another name. */
  syllable?: boolean;
  /** The word after bin/ibn/ould: the father's name, not the person's own. */
  patronym?: boolean;
}

export interface PreparedName {
  tokens: NameToken[];
  /** Titles and honorifics dropped, as written. */
  titles: string[];
  /** Written in Arabic or Hebrew script: transliteration gives consonants only (محمد → mhmd). */
  abjad: boolean;
}

/** Dropped wherever they lead a person's name (Alhaji Chief Dr. ...). */
const TITLES = new Set(
  `alhaji alh alhaja alhaja hajia hajiya haji hajj chief dr doctor engr eng hon honourable honorable
  mallam malam prof professor barr barrister pastor rev revd reverend mr mrs ms miss mister madam
  sheikh sheik shaykh imam emir sen senator gen general col colonel maj major capt captain lt
  brig brigadier justice arc archt pharm hrh otunba oloye comrade sir dame lady lord oba igwe his her excellency royal highness rtd retd bishop evang evangelist apostle prophet deacon
  deaconess elder mrs dcn amb ambassador gov governor cmdr commodore adm admiral air marshal insp
  supt cp aig dig igp sgt cpl pte princess prince queen king sultan sarki`.split(/\s+/),
);
/** Also names: only dropped when two other words remain (Justice Okoro is a man called Justice). */
const AMBIGUOUS_TITLES = new Set(['justice', 'imam', 'emir', 'oba', 'igwe', 'sen', 'prince', 'king', 'sarki', 'sultan', 'lady', 'major', 'general']);

/** Low-weight words of person names: Arabic and European particles, generational suffixes. */
const PARTICLES = new Set(
  'al el ul ad ar as an at az bin ibn bint binti ben bte ould wuld de da di du del della der den van von la le dos das y jr jnr sr snr ii iii iv so do'.split(' '),
);

/** The same in Arabic or Hebrew script, transliterated without vowels (بن → bn). */
const ABJAD_PARTICLES = new Set(['l', 'al', 'bn', 'bnt', 'abn', 'bin', 'ibn']);

/** Son of, daughter of: the next word is the father's name. */
const PATRONYMIC = new Set(['bin', 'ibn', 'bint', 'binti', 'ben', 'bte', 'ould', 'wuld', 'bn', 'abn', 'bnt']);

/** Organization legal forms, each written one way. */
const LEGAL_FORMS = new Map<string, string>(
  Object.entries({
    ltd: 'ltd', limited: 'ltd', plc: 'plc', inc: 'inc', incorporated: 'inc', corp: 'corp', corporation: 'corp',
    co: 'co', company: 'co', cos: 'co', llc: 'llc', llp: 'llp', lp: 'lp', gmbh: 'gmbh', ag: 'ag', sa: 'sa', sas: 'sas',
    sarl: 'sarl', srl: 'srl', spa: 'spa', bv: 'bv', nv: 'nv', pty: 'pty', pvt: 'pvt', jsc: 'jsc', ojsc: 'jsc', pjsc: 'jsc',
    cjsc: 'jsc', ooo: 'ooo', oao: 'jsc', zao: 'jsc', ao: 'jsc', fze: 'fze', fzco: 'fze', fzc: 'fze', fzllc: 'fze', kg: 'kg',
    as: 'as', ab: 'ab', oy: 'oy', sdn: 'sdn', bhd: 'bhd', spzoo: 'spzoo', tbk: 'tbk', pte: 'pte', kft: 'kft', sro: 'sro', doo: 'doo',
    ent: 'enterprises', enterprise: 'enterprises', enterprises: 'enterprises', ventures: 'ventures', venture: 'ventures',
    nig: 'nigeria', nigeria: 'nigeria', intl: 'international', international: 'international',
  }),
);
/** Of the legal forms, the ones that still say something of the business (ventures, international). */
const GENERIC = new Set(['enterprises', 'ventures', 'nigeria', 'international', 'group', 'holding', 'holdings', 'global', 'trading', 'services', 'industries', 'resources', 'investments', 'investment', 'solutions', 'technologies', 'associates', 'partners']);
const STOP = new Set(['the', 'and', 'of', 'for', 'a', 'an', 'et', 'und', 'y']);
/** Phrases of legal forms, written as one form first (Public Limited Company → plc). */
const LEGAL_PHRASES: readonly [readonly string[], string][] = [
  [['public', 'limited', 'company'], 'plc'],
  [['public', 'liability', 'company'], 'plc'],
  [['limited', 'liability', 'company'], 'llc'],
  [['limited', 'liability', 'partnership'], 'llp'],
  [['public', 'joint', 'stock', 'company'], 'jsc'],
  [['joint', 'stock', 'company'], 'jsc'],
  [['closed', 'joint', 'stock', 'company'], 'jsc'],
  [['private', 'limited'], 'ltd'],
  [['open', 'joint', 'stock', 'company'], 'jsc'],
  [['aktiengesellschaft'], 'ag'],
  [['gesellschaft', 'mit', 'beschrankter', 'haftung'], 'gmbh'],
  [['societatea', 'cu', 'raspundere', 'limitata'], 'srl'],
  [['societe', 'anonyme'], 'sa'],
  [['sociedad', 'anonima'], 'sa'],
  [['societe', 'a', 'responsabilite', 'limitee'], 'sarl'],
  [['sp', 'z', 'o', 'o'], 'spzoo'],
  [['sp', 'z', 'oo'], 'spzoo'],
  [['l', 'p'], 'lp'],
  [['limited', 'partnership'], 'lp'],
  [['obshchestvo', 's', 'ogranichennoy', 'otvetstvennostyu'], 'ooo'],
  [['aktsionernoe', 'obshchestvo'], 'jsc'],
];

const SCRIPT_ABJAD = /[\u0590-\u05FF\u0600-\u06FF\u0750-\u077F\u08A0-\u08FF\uFB50-\uFDFF\uFE70-\uFEFF]/u;
/** Han, Hiragana, Katakana and Hangul: one syllable per character, transliterated one by one. */
const SCRIPT_SYLLABIC = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;
const SYLLABLE_PAIR = /(?<![\p{L}\p{Pd}])(\p{L}{2,4})\p{Pd}(\p{L}{2,4})(?![\p{L}\p{Pd}])/gu;
const APOSTROPHES = /['’‘ʼ`´ʻ]/g;
const DOTTED_ACRONYM = /\b(?:\p{L}\.){2,}/gu;
const NOT_ALNUM = /[^a-z0-9]+/;

/** "BELLO, Ahmed" → "Ahmed BELLO": the list convention of a surname first, for titles and display. */
function uncomma(name: string, schema: EntitySchema): string {
  if (schema !== 'Person') return name;
  const parts = name.split(',');
  if (parts.length !== 2 || parts[0]!.trim() === '' || parts[1]!.trim() === '') return name;
  return `${parts[1]!.trim()} ${parts[0]!.trim()}`;
}

/** Words as written, transliterated: "Abu-Bakr" gives two, "U.S.A." one. */
function words(name: string, schema: EntitySchema): { display: string; ascii: string; syllable: boolean }[] {
  let spaced = name.replace(SCRIPT_SYLLABIC, (char) => ` ${char} `).replace(/&/g, ' and ');
  // A person's "A.B." is two initials; an organization's "U.S.A." one word.
  if (schema === 'Organization') spaced = spaced.replace(DOTTED_ACRONYM, (acronym) => acronym.replaceAll('.', ''));
  // A given name of two short syllables joined by a hyphen (Jong-un, Yu-ro, Kai-shek) is one word.
  spaced = spaced.replace(SYLLABLE_PAIR, (pair, first: string) => (PARTICLES.has(first.toLowerCase()) ? pair : pair.replace(/\p{Pd}/u, '')));
  const out: { display: string; ascii: string; syllable: boolean }[] = [];
  for (const word of spaced.split(/[\s\p{Pd},;:/\\()[\]{}|"+*.・·]+/u)) {
    if (word === '') continue;
    const syllable = SCRIPT_SYLLABIC.test(word);
    SCRIPT_SYLLABIC.lastIndex = 0;
    // In Arabic script a hamza or ain (أحمد → 'hmd, علي → `ly) stands where Latin writes a vowel.
    const transliterated = anyAscii(word.replace(APOSTROPHES, '')).toLowerCase();
    const ascii = SCRIPT_ABJAD.test(word) ? transliterated.replace(APOSTROPHES, 'a') : transliterated.replace(APOSTROPHES, '');
    for (const piece of ascii.split(NOT_ALNUM)) if (piece !== '') out.push({ display: word, ascii: piece, syllable });
  }
  return out;
}

/** Abd al-Rahman, Abdel Rahman, Abdurrahman → abdulrahman; Abu Bakr → abubakr. */
function joinArabicPrefixes(tokens: NameToken[]): NameToken[] {
  const out: NameToken[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (/^(abd|abdu|abdul|abdel|abdal|abdoul|abdol|abdur|abdus)$/.test(token.norm) && i + 1 < tokens.length) {
      let j = i + 1;
      if (/^(al|el|ul|ar|ur|as|us|an|un|ad|at|az)$/.test(tokens[j]!.norm) && j + 1 < tokens.length) j++;
      const rest = tokens[j]!;
      if (rest.kind === 'name' && !/^(allah|ullah|ullahi|allahi)$/.test(rest.norm)) {
        out.push({ norm: `abdul${rest.norm}`, display: tokens.slice(i, j + 1).map((t) => t.display).join(' '), kind: 'name' });
        i = j;
        continue;
      }
    }
    if (token.norm === 'abu' && /^bak(a|e|i)?r$/.test(tokens[i + 1]?.norm ?? '')) {
      out.push({ norm: `abu${tokens[i + 1]!.norm}`, display: `${token.display} ${tokens[i + 1]!.display}`, kind: 'name' });
      i++;
      continue;
    }
    out.push({ ...token, norm: abdulForm(token.norm) });
  }
  return out;
}

/** One spelling of the joined Abd- names: abdurrahman, abdelrahman, abdrahman → abdulrahman. */
export function abdulForm(norm: string): string {
  const match = /^abd(?:oul|ul|el|al|ol|ou|u|e|a|o)?(.*)$/.exec(norm);
  if (!match || norm.length < 7) return norm;
  let rest = match[1]!;
  if (/^[aiu]?llahi?$/.test(rest) || /^(ullah|allah)/.test(norm.slice(3))) return norm;
  if (rest.length >= 2 && rest[0] === rest[1]) rest = rest.slice(1);
  if (rest.length < 3) return norm;
  return `abdul${rest}`;
}

function replacePhrases(tokens: NameToken[]): NameToken[] {
  const out: NameToken[] = [];
  outer: for (let i = 0; i < tokens.length; i++) {
    for (const [phrase, form] of LEGAL_PHRASES) {
      if (phrase.every((word, k) => tokens[i + k]?.norm === word)) {
        out.push({ norm: form, display: tokens.slice(i, i + phrase.length).map((t) => t.display).join(' '), kind: 'legal' });
        i += phrase.length - 1;
        continue outer;
      }
    }
    out.push(tokens[i]!);
  }
  return out;
}

function stripTitles(tokens: NameToken[], titles: string[]): NameToken[] {
  let start = 0;
  while (start < tokens.length - 1 && TITLES.has(tokens[start]!.norm)) {
    const remaining = tokens.length - start - 1;
    if (AMBIGUOUS_TITLES.has(tokens[start]!.norm) && remaining < 2) break;
    start++;
  }
  for (let i = 0; i < start; i++) {
    if (!titles.includes(tokens[i]!.display)) titles.push(tokens[i]!.display);
  }
  return tokens.slice(start);
}

/** A name as the tokens the matcher compares. */
export function prepareName(name: string, schema: EntitySchema): PreparedName {
  const abjad = SCRIPT_ABJAD.test(name);
  let tokens: NameToken[] = words(uncomma(name, schema), schema).map(({ display, ascii, syllable }) => ({
    norm: ascii,
    display,
    kind: 'name',
    ...(syllable ? { syllable } : {}),
  }));
  const titles: string[] = [];
  if (schema === 'Person') {
    tokens = stripTitles(tokens, titles);
    tokens = joinArabicPrefixes(tokens);
    tokens.forEach((token, i) => {
      if (token.norm.length === 1 && /[a-z]/.test(token.norm) && !token.syllable) token.kind = 'initial';
      else if ((abjad ? ABJAD_PARTICLES : PARTICLES).has(token.norm)) token.kind = 'particle';
      else if (i > 0 && PATRONYMIC.has(tokens[i - 1]!.norm)) token.patronym = true;
    });
  } else {
    tokens = replacePhrases(tokens);
    for (const token of tokens) {
      if (token.kind === 'legal') continue;
      const form = LEGAL_FORMS.get(token.norm);
      if (form !== undefined) token.norm = form;
      if (GENERIC.has(token.norm)) token.kind = 'generic';
      else if (form !== undefined) token.kind = 'legal';
      else if (STOP.has(token.norm)) token.kind = 'stop';
    }
  }
  return { tokens, titles, abjad };
}
