/**
 * Screening name matching (issue 51): in process, no search server.
 *
 * Method. Every name (primary and aliases) of every listed entity is prepared once: transliterated
 * to ASCII (any-ascii: Arabic, Cyrillic, Chinese, ...), lower-cased, accents and punctuation
 * dropped, "LAST, First" turned round; a person's leading titles and honorifics (Alhaji, Chief,
 * Dr, Engr, Hon, Mallam, Otunba, Gen, ...) dropped; an organization's legal forms written one way
 * and weighted low (Limited/Ltd, Public Limited Company/PLC, Nig./Nigeria, Enterprises/Ent.).
 * The words are interned and indexed by keys: the name family (Muhammad, Mohammed, Muhammadu and
 * Mamman are one), the Double Metaphone code, the consonant skeleton (Arabic script writes no
 * short vowels), the spelling with a letter deleted (typos), and the Yoruba/Igbo stem (Bunmi of
 * Oluwabunmi, Emeka of Chukwuemeka: a rule, not a table). A subject's words find similar listed
 * words through the keys; the names holding them add up what they share with the subject, and
 * the names that can still reach the threshold are scored in full.
 *
 * Score. The two names' words are aligned one to one whatever their order, best pairs first.
 * A pair scores 1 for the same word, 0.95 for spellings of one name, 0.9 for a short form, 0.88
 * for an Arabic-script transliteration, 0.4–0.9 for a spelling difference by its size against
 * the word's length, 0.7 for the Arabic and English forms of a scriptural name (Musa/Moses: in
 * Nigeria usually different people), and 0.55 for an initial. The name score is 0.6 × the part of
 * the subject's name covered plus 0.4 × the part of the listed name covered (weights: a name word
 * 1, an initial 0.35, particles such as al/bin 0.2, generic business words 0.35, legal forms 0.1),
 * times 0.8 when only one word agrees and either name has more. Qualifiers then move it: birth
 * date (same date +0.03, same year +0.02, one year apart 0, two or three −0.03, more −0.3),
 * nationality (+0.02 / −0.05), gender (−0.1 when different), and an identical identifier (passport,
 * national ID, registration number) raises it to 0.99.
 *
 * Default threshold 0.8: see bench/screening-accuracy.ts for the figures it was chosen on.
 */
import type { EntitySchema } from '../entity.js';
import { prepareName } from './normalize.js';
import { scoredTokens, scoreNames } from './score.js';

export { DEFAULT_THRESHOLD } from './threshold.js';
export { ScreeningIndex, type ScreenOptions } from './screening-index.js';

/** The name score alone (0–1): `a` as the subject's name, `b` as the listed one. */
export function compareNames(a: string, b: string, schema: EntitySchema): number {
  const score = scoreNames(scoredTokens(prepareName(a, schema)), scoredTokens(prepareName(b, schema))).score;
  return Math.round(score * 1000) / 1000;
}
