import type { TokenInfo } from './similarity.js';
import { MIN_SHORT_FORM } from './variants.js';

/**
 * The keys under which the index files a name word, and under which a subject's word looks for
 * listed words like it: the name family, the Double Metaphone code, the consonant skeleton (for
 * Arabic script), the spelling with one letter deleted (a typo), and the Yoruba/Igbo stem.
 * A listed word and a subject's word that share no key are never compared.
 */

const MIN_TYPO_LENGTH = 5;
const MAX_TYPO_LENGTH = 14;

function deletions(fold: string, out: string[]): void {
  if (fold.length < MIN_TYPO_LENGTH || fold.length > MAX_TYPO_LENGTH) return;
  out.push(`d:${fold}`);
  for (let i = 0; i < fold.length; i++) {
    if (i > 0 && fold[i] === fold[i - 1]) continue;
    out.push(`d:${fold.slice(0, i)}${fold.slice(i + 1)}`);
  }
}

function stems(group: number, stem: string, out: string[]): void {
  out.push(`y:${group}:${stem}`);
  for (let length = MIN_SHORT_FORM; length < stem.length; length++) out.push(`y:${group}:${stem.slice(0, length)}`);
}

/** Keys a listed word is filed under. */
export function entityKeys(info: TokenInfo): string[] {
  const keys = [`c:${info.canon}`, `f:${info.fold}`];
  if (info.metaphone.length >= 2) keys.push(`m:${info.metaphone}`);
  // Arabic-script words and Latin ones meet through their skeletons, under keys of each side's own.
  if (info.skeleton.length >= 2) keys.push(`${info.abjad ? 's' : 'S'}:${info.skeleton}`);
  deletions(info.fold, keys);
  const affix = info.affix;
  if (affix) {
    // A short form is the start of the stem: Funmi of Oluwafunmilayo, Olufunmi of it too.
    stems(affix.group, affix.stem, keys);
    for (let length = MIN_SHORT_FORM; length <= affix.stem.length; length++) keys.push(`b:${affix.stem.slice(0, length)}`);
  }
  return keys;
}

/** Keys a subject's word looks up. */
export function queryKeys(info: TokenInfo): string[] {
  const keys = [`c:${info.canon}`, `f:${info.fold}`];
  if (info.skeleton.length >= 2) keys.push(`${info.abjad ? 'S' : 's'}:${info.skeleton}`);
  if (info.abjad) {
    deletions(info.fold, keys);
    return keys;
  }
  if (info.metaphone.length >= 2) keys.push(`m:${info.metaphone}`);
  deletions(info.fold, keys);
  const affix = info.affix;
  if (affix) {
    stems(affix.group, affix.stem, keys);
    for (let length = MIN_SHORT_FORM; length <= affix.stem.length; length++) keys.push(`c:${affix.stem.slice(0, length)}`);
  }
  if (info.norm.length >= MIN_SHORT_FORM) keys.push(`b:${info.norm}`);
  return keys;
}
