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
  /** 1 where the word is aligned. */
  usedSubject: Uint8Array;
  usedEntity: Uint8Array;
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
  const n = subject.length;
  const m = entity.length;
  const sims = new Float64Array(n * m);
  const relations: Relation[] = new Array<Relation>(n * m);
  const patronyms = subject.some((token) => token.patronym) && entity.some((token) => token.patronym);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      const found = similarity(subject[i]!.info, entity[j]!.info);
      relations[i * m + j] = found.relation;
      sims[i * m + j] = patronyms && subject[i]!.patronym !== entity[j]!.patronym ? found.sim * PATRONYM_MISPLACED : found.sim;
    }
  }
  // Best pairs first; among equals, the heavier words, so a name is aligned before a particle.
  const usedSubject = new Uint8Array(n);
  const usedEntity = new Uint8Array(m);
  const pairs: Pair[] = [];
  for (;;) {
    let best = -1;
    let bestSim = MIN_PAIR;
    let bestWeight = -1;
    for (let i = 0; i < n; i++) {
      if (usedSubject[i]) continue;
      for (let j = 0; j < m; j++) {
        const sim = sims[i * m + j]!;
        if (usedEntity[j] || sim < bestSim) continue;
        const weight = subject[i]!.weight + entity[j]!.weight;
        if (sim > bestSim || weight > bestWeight) {
          best = i * m + j;
          bestSim = sim;
          bestWeight = weight;
        }
      }
    }
    if (best < 0) break;
    const i = Math.floor(best / m);
    const j = best % m;
    usedSubject[i] = 1;
    usedEntity[j] = 1;
    pairs.push({ subject: i, entity: j, sim: bestSim, relation: relations[best]! });
  }
  return { score: coverageScore(subject, entity, pairs, usedSubject, usedEntity), pairs, subject, entity, usedSubject, usedEntity };
}

function coverageScore(subject: ScoredToken[], entity: ScoredToken[], pairs: Pair[], alignedS: Uint8Array, alignedE: Uint8Array): number {
  if (pairs.length === 0) return 0;
  let pairWeight = 0;
  let pairScore = 0;
  let strong = 0;
  let initials = 0;
  for (const pair of pairs) {
    const weightS = subject[pair.subject]!.weight;
    const weightE = entity[pair.entity]!.weight;
    // An initial aligned with a whole word weighs what the initial weighs.
    const weight = pair.relation === 'initial' ? Math.min(weightS, weightE) : (weightS + weightE) / 2;
    pairWeight += weight;
    pairScore += weight * pair.sim;
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

const joinedCache = new Map<string, TokenInfo>();
const JOINED_CACHE_SIZE = 50_000;

/** Two words as one, remembered: the same pairs come back screening after screening. */
function joinedInfo(first: TokenInfo, second: TokenInfo): TokenInfo {
  const key = `${first.abjad ? '#' : ''}${first.norm} ${second.norm}`;
  let info = joinedCache.get(key);
  if (info === undefined) {
    if (joinedCache.size >= JOINED_CACHE_SIZE) joinedCache.clear();
    info = tokenInfo(first.norm + second.norm, 'name', first.abjad);
    joinedCache.set(key, info);
  }
  return info;
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
    // Cheap first: a word the pair could be is about as long as both (or, in Arabic script, as many consonants).
    const length = first.info.norm.length + second.info.norm.length;
    if (!other.some((token) => token.info.abjad !== first.info.abjad || Math.abs(token.info.norm.length - length) <= 2)) continue;
    const joined = joinedInfo(first.info, second.info);
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

function leftOver(score: NameScore, side: 'subject' | 'entity'): boolean {
  const used = side === 'subject' ? score.usedSubject : score.usedEntity;
  return score[side].some((token, i) => used[i] === 0 && token.weight >= 0.2);
}

/** The best alignment of two names' tokens. */
export function scoreNames(subject: ScoredToken[], entity: ScoredToken[], similarity: Similarity = compareTokens): NameScore {
  let best = align(subject, entity, similarity);
  if (best.score >= 0.999) return best;
  // Joining helps only where a name keeps a word: one side's two for the other's one.
  if (!leftOver(best, 'subject') && !leftOver(best, 'entity')) return best;
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
