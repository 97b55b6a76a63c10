import type { NameToken, PreparedName, TokenKind } from './normalize.js';
import { compareTokens, tokenInfo, type Relation, type TokenInfo, type TokenSimilarity } from './similarity.js';

/**
 * The name score: the words of the two names aligned one to one, whatever their order (each pair
 * taken best first); the score is how alike the aligned words are, less a cost for each word left
 * over. A listed middle name the customer did not give costs a little ("Ahmed Bello" ~ "Ahmed
 * Musa Bello"), a word of the customer's that the list lacks more, and a word left over on both
 * sides (Ahmed Bello, Ahmed Okafor) more again. A name that agrees on one word only ("Bello") is
 * not a strong match of a longer one.
 */

/** What a word weighs in its name. */
export const KIND_WEIGHT: Record<TokenKind, number> = {
  name: 1,
  initial: 0.35,
  particle: 0.2,
  generic: 0.35,
  legal: 0.1,
  stop: 0.05,
};

/** What a word of the subject's name that the listed name lacks costs, per unit of weight. */
export const SUBJECT_WORD_COST = 0.12;
/** What a word of the listed name that the subject's name lacks costs (a middle name not given). */
const ENTITY_WORD_COST = 0.07;
/** Both names holding a word the other lacks: two different names where one would be (Bello, Okafor). */
const CONFLICT_COST = 0.1;
/** Words left over on both sides conflict from this weight: names, initials, generic business words (Bank / Ventures). */
const CONFLICT_WEIGHT = 0.35;
/** Below this, two words are not aligned at all. */
const MIN_PAIR = 0.5;
/** A pair this close counts as the same word for the one-word rule. */
const STRONG_PAIR = 0.8;
/** The factor on a score resting on one strong word when either name has two or more. */
export const ONE_WORD_FACTOR = 0.8;
/** The same, when an initial agrees as well (A. Bello ~ Ahmed Bello). */
const ONE_WORD_AND_INITIAL_FACTOR = 0.9;

export interface ScoredToken {
  info: TokenInfo;
  display: string;
  weight: number;
  /** The father's name (after bin, ibn): aligned with a person's own name, it counts less. */
  patronym?: boolean;
}

/** A father's name aligned with someone's own: Salman bin Muhammad is not Muhammad bin Salman. */
const PATRONYM_MISPLACED = 0.6;

export interface Pair {
  subject: number;
  entity: number;
  sim: number;
  relation: Relation;
}

export interface NameScore {
  score: number;
  pairs: Pair[];
  subject: ScoredToken[];
  entity: ScoredToken[];
}

/** A prepared name's words, ready to score. */
export function scoredTokens(name: PreparedName): ScoredToken[] {
  return name.tokens.map((token: NameToken) => ({
    info: tokenInfo(token.norm, token.kind, name.abjad, token.syllable),
    display: token.display,
    weight: KIND_WEIGHT[token.kind],
    ...(token.patronym ? { patronym: true } : {}),
  }));
}

export type Similarity = (subject: TokenInfo, entity: TokenInfo) => TokenSimilarity;

function align(subject: ScoredToken[], entity: ScoredToken[], similarity: Similarity): NameScore {
  const candidates: Pair[] = [];
  const patronyms = subject.some((token) => token.patronym) && entity.some((token) => token.patronym);
  for (let i = 0; i < subject.length; i++) {
    for (let j = 0; j < entity.length; j++) {
      const found = similarity(subject[i]!.info, entity[j]!.info);
      const relation = found.relation;
      const sim = patronyms && subject[i]!.patronym !== entity[j]!.patronym ? found.sim * PATRONYM_MISPLACED : found.sim;
      if (sim >= MIN_PAIR) candidates.push({ subject: i, entity: j, sim, relation });
    }
  }
  // Best pairs first; among equals, the heavier words, so a name is aligned before a particle.
  candidates.sort((x, y) => y.sim - x.sim || subject[y.subject]!.weight + entity[y.entity]!.weight - subject[x.subject]!.weight - entity[x.entity]!.weight);
  const usedSubject = new Uint8Array(subject.length);
  const usedEntity = new Uint8Array(entity.length);
  const pairs: Pair[] = [];
  for (const pair of candidates) {
    if (usedSubject[pair.subject] || usedEntity[pair.entity]) continue;
    usedSubject[pair.subject] = 1;
    usedEntity[pair.entity] = 1;
    pairs.push(pair);
  }
  return { score: coverageScore(subject, entity, pairs), pairs, subject, entity };
}

function coverageScore(subject: ScoredToken[], entity: ScoredToken[], pairs: Pair[]): number {
  if (pairs.length === 0) return 0;
  let pairWeight = 0;
  let pairScore = 0;
  let strong = 0;
  let initials = 0;
  const alignedS = new Uint8Array(subject.length);
  const alignedE = new Uint8Array(entity.length);
  for (const pair of pairs) {
    const weightS = subject[pair.subject]!.weight;
    const weightE = entity[pair.entity]!.weight;
    // An initial aligned with a whole word weighs what the initial weighs.
    const weight = pair.relation === 'initial' ? Math.min(weightS, weightE) : (weightS + weightE) / 2;
    pairWeight += weight;
    pairScore += weight * pair.sim;
    alignedS[pair.subject] = 1;
    alignedE[pair.entity] = 1;
    if (pair.sim >= STRONG_PAIR && weightS === 1 && weightE === 1) strong++;
    if (pair.relation === 'initial') initials++;
  }
  let missingS = 0;
  let missingE = 0;
  let namesS = 0;
  let namesE = 0;
  subject.forEach((token, i) => {
    if (alignedS[i]) return;
    missingS += token.weight;
    if (token.weight >= CONFLICT_WEIGHT) namesS++;
  });
  entity.forEach((token, j) => {
    if (alignedE[j]) return;
    missingE += token.weight;
    if (token.weight >= CONFLICT_WEIGHT) namesE++;
  });
  let score = pairScore / pairWeight - SUBJECT_WORD_COST * missingS - ENTITY_WORD_COST * missingE - CONFLICT_COST * Math.min(namesS, namesE);
  const words = Math.max(countNames(subject), countNames(entity));
  if (strong <= 1 && words >= 2) score *= initials > 0 ? ONE_WORD_AND_INITIAL_FACTOR : ONE_WORD_FACTOR;
  return Math.max(0, Math.min(1, score));
}

function countNames(tokens: ScoredToken[]): number {
  let count = 0;
  for (const token of tokens) if (token.weight === 1) count++;
  return count;
}

/**
 * Two neighbouring words of one name written as one word of the other (Abu Bakar / Abubakar,
 * Jin Ping / Jinping): the two are joined when that aligns better.
 */
function joinNeighbours(side: ScoredToken[], other: ScoredToken[], similarity: Similarity): ScoredToken[] | undefined {
  for (let i = 0; i + 1 < side.length; i++) {
    const first = side[i]!;
    const second = side[i + 1]!;
    if (first.info.kind === 'initial' || second.info.kind === 'initial') continue;
    const joined = tokenInfo(first.info.norm + second.info.norm, 'name', first.info.abjad);
    // Without vowels, a short second word can vanish into the first (mhmd + dvd → mhmd).
    if (joined.abjad && joined.skeleton.length <= Math.max(first.info.skeleton.length, second.info.skeleton.length)) continue;
    for (const token of other) {
      if (similarity(joined, token.info).sim >= 0.85) {
        return [...side.slice(0, i), { info: joined, display: `${first.display} ${second.display}`, weight: 1 }, ...side.slice(i + 2)];
      }
    }
  }
  return undefined;
}

/** The best alignment of two names' tokens. */
export function scoreNames(subject: ScoredToken[], entity: ScoredToken[], similarity: Similarity = compareTokens): NameScore {
  let best = align(subject, entity, similarity);
  if (best.score >= 0.999) return best;
  const alignedAll = best.pairs.length === Math.min(subject.length, entity.length) && subject.length === entity.length;
  if (alignedAll) return best;
  const joinedSubject = joinNeighbours(subject, entity, similarity);
  if (joinedSubject) {
    const other = align(joinedSubject, entity, similarity);
    if (other.score > best.score) best = other;
  }
  const joinedEntity = joinNeighbours(entity, best.subject, similarity);
  if (joinedEntity) {
    const other = align(best.subject, joinedEntity, similarity);
    if (other.score > best.score) best = other;
  }
  return best;
}

const RELATION_WORDS: Record<Relation, string> = {
  exact: '',
  variant: 'name variant',
  short: 'short form',
  cross: 'Arabic/English form, weak',
  script: 'transliteration',
  spelling: 'spelling',
  initial: 'initial',
  none: '',
};

/** The alignment in words: "Mohammed = Muhammad (name variant); Yusuf = YUSUF; Musa not in subject". */
export function describeAlignment(score: NameScore): string[] {
  const parts: string[] = [];
  for (const pair of [...score.pairs].sort((a, b) => a.subject - b.subject)) {
    const s = score.subject[pair.subject]!.display;
    const e = score.entity[pair.entity]!.display;
    const sign = pair.sim >= 0.85 ? '=' : '~';
    const why = RELATION_WORDS[pair.relation];
    parts.push(why === '' ? `${s} ${sign} ${e}` : `${s} ${sign} ${e} (${why})`);
  }
  const alignedS = new Set(score.pairs.map((pair) => pair.subject));
  const alignedE = new Set(score.pairs.map((pair) => pair.entity));
  const missingE = score.entity.filter((token, j) => !alignedE.has(j) && token.weight >= 0.35).map((token) => token.display);
  const missingS = score.subject.filter((token, i) => !alignedS.has(i) && token.weight >= 0.35).map((token) => token.display);
  if (missingS.length > 0) parts.push(`${missingS.join(' ')} not in the listed name`);
  if (missingE.length > 0) parts.push(`${missingE.join(' ')} not in the subject's name`);
  return parts;
}
