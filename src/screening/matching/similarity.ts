import { doubleMetaphone } from 'double-metaphone';
import type { TokenKind } from './normalize.js';
import { affixOf, CROSS_STRENGTH, familyOf, isCrossPair, shortFormStrength, type Affix } from './variants.js';

/**
 * How alike two name words are, and why: the same word, spellings of one name (a family or the
 * Yoruba/Igbo short-form rule), one Arabic-script transliteration of the other, a typo, or an
 * initial. Words are prepared once (TokenInfo) and compared many times.
 */

export interface TokenInfo {
  norm: string;
  kind: TokenKind;
  /** Transliterated from Arabic or Hebrew script: consonants only. */
  abjad: boolean;
  /** A Chinese, Japanese or Korean syllable: another syllable is another name. */
  syllable: boolean;
  /** The name family's canonical spelling, or norm. */
  canon: string;
  familyStrength: number;
  /** Spelling folded: vowels and digraphs that transliterations vary on (kh/h, ou/u, e/i, o/u). */
  fold: string;
  /** The family's canonical spelling, folded. */
  canonFold: string;
  /** Consonants only, for Arabic-script names (mhmd for Muhammad). */
  skeleton: string;
  /** Double Metaphone primary code. */
  metaphone: string;
  /** Its Yoruba/Igbo prefix or suffix, if any. */
  affix: Affix | undefined;
}

export type Relation = 'exact' | 'variant' | 'short' | 'cross' | 'script' | 'spelling' | 'initial' | 'none';

export interface TokenSimilarity {
  sim: number;
  relation: Relation;
}

const NONE: TokenSimilarity = { sim: 0, relation: 'none' };

/** Spelling folded over what transliterations and typists vary on. */
export function foldSpelling(norm: string): string {
  const folded = norm
    .replace(/kh/g, 'h')
    .replace(/ph/g, 'f')
    .replace(/q/g, 'k')
    .replace(/ck/g, 'k')
    .replace(/([dtgsz])h/g, '$1')
    .replace(/ou|oo/g, 'u')
    .replace(/ee/g, 'i')
    .replace(/y/g, 'i')
    .replace(/w/g, 'u')
    .replace(/e/g, 'i')
    .replace(/o/g, 'u');
  return folded.replace(/(.)\1+/g, '$1');
}

/**
 * Consonants, as Arabic script writes a name without its short vowels (mhmd for Muhammad), after
 * a mark of whether the name starts with a vowel: Ahmad (أحمد) and Hamid (حامد) share h-m-d.
 */
export function consonantSkeleton(norm: string): string {
  const folded = foldSpelling(norm);
  const initial = /^[aeiou]/.test(folded) ? 'V' : '';
  return initial + folded.replace(/[aeiouwyv]/g, '').replace(/(.)\1+/g, '$1');
}

export function tokenInfo(norm: string, kind: TokenKind, abjad: boolean, syllable = false): TokenInfo {
  const family = kind === 'name' ? familyOf(norm) : undefined;
  let skeleton = consonantSkeleton(norm);
  // Arabic script joins the article to the word: الرحمن → alrhmn.
  if (abjad && skeleton.length >= 5 && skeleton.startsWith('Vl')) skeleton = consonantSkeleton(norm.slice(2));
  return {
    norm,
    kind,
    abjad,
    syllable,
    canon: family?.canon ?? norm,
    familyStrength: family?.strength ?? 1,
    fold: foldSpelling(norm),
    canonFold: family ? foldSpelling(family.canon) : '',
    skeleton,
    metaphone: /^[a-z]+$/.test(norm) ? doubleMetaphone(norm)[0] : norm,
    affix: kind === 'name' ? affixOf(norm) : undefined,
  };
}

const ROWS: [Int32Array, Int32Array, Int32Array] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/** Damerau-Levenshtein distance (optimal string alignment), with an early exit past `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  if (b.length >= 64) return editDistance(a.slice(0, 63), b.slice(0, 63), limit);
  // Rows reused between calls: this runs for every pair of words compared.
  let [before, previous, current] = ROWS;
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) best = Math.min(best, before[j - 2]! + 1);
      current[j] = best;
      if (best < rowMin) rowMin = best;
    }
    if (rowMin > limit) return limit + 1;
    const spare = before;
    before = previous;
    previous = current;
    current = spare;
  }
  return previous[b.length]!;
}

/**
 * A spelling difference as a similarity: one typo in a long name is a typo, in a four-letter
 * name (Bala, Bola) as likely another name.
 */
function spellingSimilarity(a: string, b: string): number {
  const length = Math.max(a.length, b.length);
  const distance = editDistance(a, b, 3);
  if (distance === 0) return 0.97;
  if (distance === 1) return length >= 8 ? 0.9 : length >= 6 ? 0.86 : length >= 5 ? 0.8 : length === 4 ? 0.65 : 0.4;
  if (distance === 2) return length >= 10 ? 0.82 : length >= 8 ? 0.75 : length >= 6 ? 0.62 : 0.3;
  if (distance === 3) return length >= 12 ? 0.7 : length >= 10 ? 0.6 : 0;
  return 0;
}

export function compareTokens(a: TokenInfo, b: TokenInfo): TokenSimilarity {
  if (a.norm === b.norm) return { sim: 1, relation: 'exact' };
  if (a.kind === 'initial' || b.kind === 'initial') {
    if (a.kind === 'initial' && b.kind === 'initial') return NONE;
    return a.norm[0] === b.norm[0] ? { sim: 0.55, relation: 'initial' } : NONE;
  }
  if (a.syllable && b.syllable) return NONE;
  if (a.canon === b.canon) return { sim: Math.min(a.familyStrength, b.familyStrength, 0.95), relation: 'variant' };
  if (isCrossPair(a.canon, b.canon)) return { sim: CROSS_STRENGTH, relation: 'cross' };
  const short = shortFormStrength(a.norm, a.affix, b.norm, b.affix);
  if (short > 0) return { sim: short, relation: short >= 0.95 ? 'variant' : 'short' };
  if (a.abjad !== b.abjad) {
    if (a.syllable || b.syllable) return NONE;
    if (a.skeleton.length === 0 || b.skeleton.length === 0) return NONE;
    // Without short vowels, one skeleton is several names (Mahmud, Muhammad: mhmd): a likely match, no more.
    if (a.skeleton === b.skeleton) return { sim: 0.85, relation: 'script' };
    const distance = editDistance(a.skeleton, b.skeleton, 1);
    return distance === 1 && Math.min(a.skeleton.length, b.skeleton.length) >= 3 ? { sim: 0.72, relation: 'script' } : NONE;
  }
  // Abdulrahim and Abdulrahman share "Abdul", which says nothing: the rest is the name.
  if (a.norm.startsWith('abdul') && b.norm.startsWith('abdul') && a.norm.length > 7 && b.norm.length > 7) {
    const sim = spellingSimilarity(foldSpelling(a.norm.slice(5)), foldSpelling(b.norm.slice(5)));
    return sim > 0 ? { sim, relation: 'spelling' } : NONE;
  }
  // Folded and as written: folding kh to h turns a transposed Lakhal into two edits.
  let sim = Math.max(spellingSimilarity(a.fold, b.fold), spellingSimilarity(a.norm, b.norm) - 0.02);
  if (a.canonFold !== '' || b.canonFold !== '') sim = Math.max(sim, spellingSimilarity(a.canonFold || a.fold, b.canonFold || b.fold) - 0.03);
  if (sim < 0.8 && a.metaphone === b.metaphone && a.norm[0] === b.norm[0] && Math.min(a.norm.length, b.norm.length) >= 5) sim = Math.max(sim, 0.75);
  return sim > 0 ? { sim, relation: 'spelling' } : NONE;
}
