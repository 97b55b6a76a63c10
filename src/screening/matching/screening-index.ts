import type { EntityMatch, EntitySchema, IndexedEntity, ScreeningSubject } from '../entity.js';
import { explain } from './explain.js';
import { entityKeys, queryKeys } from './keys.js';
import { prepareName, type PreparedName, type TokenKind } from './normalize.js';
import { IDENTIFIER_SCORE, identifierKeys, MAX_BOOST, qualify } from './qualifiers.js';
import { KIND_WEIGHT, ONE_WORD_FACTOR, scoredTokens, scoreNames, SUBJECT_WORD_COST, type ScoredToken } from './score.js';
import { compareTokens, tokenInfo, type TokenInfo, type TokenSimilarity } from './similarity.js';
import { DEFAULT_THRESHOLD } from './threshold.js';

/**
 * The in-memory index: every name of every entity as interned word ids (typed arrays), postings
 * from word to names, and keys from a word's family, sound, skeleton and typos to the words filed
 * under them. A subject's words look up similar listed words through the keys (a few hundred
 * comparisons of distinct words, not of names), the names holding them add up what they share,
 * and only names that can still reach the threshold are scored in full.
 */

const MIN_CANDIDATE_SIM = 0.5;
/**
 * The likeness of the subject's words a name holds stands for the aligned words' likeness, which
 * also weighs the listed words: this much is added so that no name that could reach the threshold
 * is left out.
 */
const BOUND_SLACK = 0.03;
/** Full scoring stops after this many names, best first by what they share with the subject. */
const MAX_SCORED_NAMES = 5000;
/** Words that find candidates: the others (titles are gone; particles, legal forms) only score. */
const FINDING_KINDS: ReadonlySet<TokenKind> = new Set(['name', 'generic']);

const SCHEMA_CODE: Record<EntitySchema, number> = { Person: 0, Organization: 1 };

export interface ScreenOptions {
  threshold?: number;
  sources?: ReadonlySet<string>;
  limit?: number;
}

class GrowableU32 {
  data = new Uint32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Uint32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }
  done(): Uint32Array {
    return this.data.slice(0, this.length);
  }
}

export class ScreeningIndex {
  readonly size: number;
  private readonly entities: IndexedEntity[];
  private readonly entitySchema: Uint8Array;
  private readonly entitySource: Uint16Array;
  private readonly sourceNames: string[] = [];
  private readonly words: TokenInfo[] = [];
  private readonly wordIds = new Map<string, number>();
  private readonly keys = new Map<string, number[]>();
  private readonly identifiers = new Map<string, number[]>();
  /** Name n: entity nameEntity[n], alias nameAlias[n] - 1 (0: the primary name), words nameWords[nameStart[n]..nameStart[n + 1]). */
  private readonly nameEntity: Uint32Array;
  private readonly nameAlias: Uint16Array;
  private readonly nameStart: Uint32Array;
  private readonly nameWords: Uint32Array;
  /** Names holding word w: postings[postingStart[w]..postingStart[w + 1]). */
  private readonly postingStart: Uint32Array;
  private readonly postings: Uint32Array;
  /** Per-name counters of one screening, kept between screenings (zeroed after use). */
  private scratch: { covered: Float32Array; alike: Float32Array; best: Float32Array; words: Uint8Array } | undefined;

  constructor(entities: Iterable<IndexedEntity>) {
    this.entities = [...entities];
    this.size = this.entities.length;
    this.entitySchema = new Uint8Array(this.size);
    this.entitySource = new Uint16Array(this.size);
    const sourceIds = new Map<string, number>();
    const nameEntity = new GrowableU32();
    const nameAlias = new GrowableU32();
    const nameStart = new GrowableU32();
    const nameWords = new GrowableU32();
    for (let e = 0; e < this.size; e++) {
      const entity = this.entities[e]!;
      this.entitySchema[e] = SCHEMA_CODE[entity.schema];
      let source = sourceIds.get(entity.source);
      if (source === undefined) {
        source = this.sourceNames.length;
        sourceIds.set(entity.source, source);
        this.sourceNames.push(entity.source);
      }
      this.entitySource[e] = source;
      const seen = new Set<string>();
      const names = [entity.name, ...entity.aliases];
      for (let a = 0; a < names.length && a < 0xffff; a++) {
        const prepared = prepareName(names[a]!, entity.schema);
        const ids = prepared.tokens.map((token) => this.intern(token.norm, token.kind, prepared.abjad, token.syllable === true) | (token.patronym ? PATRONYM : 0));
        const signature = ids.join(' ');
        if (ids.length === 0 || seen.has(signature)) continue;
        seen.add(signature);
        nameEntity.push(e);
        nameAlias.push(a);
        nameStart.push(nameWords.length);
        for (const id of ids) nameWords.push(id);
        // Words written apart in one list and together in another (Al Qaida, Alqaida): the pair
        // of a short word and its neighbour is filed as one more word of the name.
        for (let i = 0; i + 1 < prepared.tokens.length; i++) {
          const [first, second] = [prepared.tokens[i]!, prepared.tokens[i + 1]!];
          if ((first.norm.length <= 3 || second.norm.length <= 3) && first.kind !== 'initial' && second.kind !== 'initial') {
            nameWords.push(this.intern(first.norm + second.norm, 'name', prepared.abjad) | JOINED);
          }
        }
      }
      for (const key of identifierKeys(entity.identifiers)) {
        const list = this.identifiers.get(key);
        if (list) list.push(e);
        else this.identifiers.set(key, [e]);
      }
    }
    nameStart.push(nameWords.length);
    this.nameEntity = nameEntity.done();
    this.nameAlias = new Uint16Array(nameAlias.done());
    this.nameStart = nameStart.done();
    this.nameWords = nameWords.done();
    [this.postingStart, this.postings] = this.buildPostings();
  }

  private intern(norm: string, kind: TokenKind, abjad: boolean, syllable = false): number {
    const key = wordKey(norm, kind, abjad, syllable);
    let id = this.wordIds.get(key);
    if (id !== undefined) return id;
    id = this.words.length;
    const info = tokenInfo(norm, kind, abjad, syllable);
    this.words.push(info);
    this.wordIds.set(key, id);
    if (FINDING_KINDS.has(kind)) {
      for (const k of entityKeys(info)) {
        const list = this.keys.get(k);
        if (list) list.push(id);
        else this.keys.set(k, [id]);
      }
    }
    return id;
  }

  private buildPostings(): [Uint32Array, Uint32Array] {
    const counts = new Uint32Array(this.words.length + 1);
    const names = this.nameEntity.length;
    for (let n = 0; n < names; n++) {
      for (let i = this.nameStart[n]!; i < this.nameStart[n + 1]!; i++) counts[(this.nameWords[i]! & WORD_MASK) + 1]!++;
    }
    for (let w = 1; w <= this.words.length; w++) counts[w]! += counts[w - 1]!;
    const start = counts.slice();
    const postings = new Uint32Array(counts[this.words.length]!);
    for (let n = 0; n < names; n++) {
      for (let i = this.nameStart[n]!; i < this.nameStart[n + 1]!; i++) postings[counts[this.nameWords[i]! & WORD_MASK]!++] = n;
    }
    return [start, postings];
  }

  /** The scored words of name n (joined pairs left out: scoring joins neighbours itself). */
  private nameTokens(n: number): ScoredToken[] {
    const out: ScoredToken[] = [];
    for (let i = this.nameStart[n]!; i < this.nameStart[n + 1]!; i++) {
      const word = this.nameWords[i]!;
      if ((word & JOINED) !== 0) continue;
      const info = this.words[word & WORD_MASK]!;
      out.push({ info, display: info.norm, weight: KIND_WEIGHT[info.kind], ...((word & PATRONYM) !== 0 ? { patronym: true } : {}) });
    }
    return out;
  }

  /** A listed name's words as the index holds them, with the words as written. */
  private displayed(name: PreparedName): ScoredToken[] {
    return name.tokens.map((token) => {
      const id = this.wordIds.get(wordKey(token.norm, token.kind, name.abjad, token.syllable === true));
      const info = id === undefined ? tokenInfo(token.norm, token.kind, name.abjad, token.syllable) : this.words[id]!;
      return { info, display: token.display, weight: KIND_WEIGHT[token.kind], ...(token.patronym ? { patronym: true } : {}) };
    });
  }

  private nameText(n: number): string {
    const entity = this.entities[this.nameEntity[n]!]!;
    const alias = this.nameAlias[n]!;
    return alias === 0 ? entity.name : entity.aliases[alias - 1]!;
  }

  screen(subject: ScreeningSubject, options: ScreenOptions = {}): EntityMatch[] {
    const threshold = options.threshold ?? DEFAULT_THRESHOLD;
    const limit = options.limit ?? 20;
    const schema: EntitySchema = subject.type === 'organization' ? 'Organization' : 'Person';
    const schemaCode = SCHEMA_CODE[schema];
    const allowed = this.allowedSources(options.sources);
    if (allowed !== undefined && allowed.size === 0) return [];
    const admits = (e: number): boolean => this.entitySchema[e] === schemaCode && (allowed === undefined || allowed.has(this.entitySource[e]!));

    const best = new Map<number, { score: number; name: number; subjectName: number }>();
    const subjectNames = subject.names.map((name) => prepareName(name, schema));
    const subjectTokens = subjectNames.map((name) => scoredTokens(name));
    const similarity = memoSimilarity();
    for (let s = 0; s < subjectTokens.length; s++) {
      const tokens = subjectTokens[s]!;
      if (tokens.length === 0) continue;
      for (const n of this.candidates(tokens, threshold, admits, similarity)) {
        const { score } = scoreNames(tokens, this.nameTokens(n), similarity);
        const e = this.nameEntity[n]!;
        const held = best.get(e);
        if (score + MAX_BOOST >= threshold - 1e-9 && (!held || score > held.score)) best.set(e, { score, name: n, subjectName: s });
      }
    }
    const identified = new Set<number>();
    for (const key of identifierKeys(subject.identifiers ?? [])) {
      for (const e of this.identifiers.get(key) ?? []) if (admits(e)) identified.add(e);
    }

    const matches: { e: number; score: number; name: number | undefined; subjectName: number; notes: string[] }[] = [];
    const consider = new Set<number>([...best.keys(), ...identified]);
    for (const e of consider) {
      const entity = this.entities[e]!;
      const found = best.get(e);
      const qualified = qualify(subject, entity);
      let score = Math.max(0, Math.min(1, (found?.score ?? 0) + qualified.delta));
      if (qualified.identifier !== undefined) score = Math.max(score, IDENTIFIER_SCORE);
      if (score >= threshold) matches.push({ e, score, name: found?.name, subjectName: found?.subjectName ?? 0, notes: qualified.notes });
    }
    matches.sort((a, b) => b.score - a.score || a.e - b.e);
    return matches.slice(0, limit).map((match) => {
      const entity = this.entities[match.e]!;
      const matchedName = match.name === undefined ? entity.name : this.nameText(match.name);
      const listed = prepareName(matchedName, schema);
      const explained = explain(
        { text: subject.names[match.subjectName] ?? '', titles: subjectNames[match.subjectName]?.titles ?? [], tokens: subjectTokens[match.subjectName] ?? [] },
        { text: matchedName, titles: listed.titles, tokens: this.displayed(listed) },
        match.notes,
        similarity,
      );
      return { entity, score: Math.round(match.score * 1000) / 1000, matchedName, explanation: explained };
    });
  }

  private allowedSources(sources: ReadonlySet<string> | undefined): Set<number> | undefined {
    if (sources === undefined) return undefined;
    const allowed = new Set<number>();
    this.sourceNames.forEach((name, id) => {
      if (sources.has(name)) allowed.add(id);
    });
    return allowed;
  }

  /**
   * Names worth scoring in full: each subject word's similar listed words (through the keys), the
   * names that hold them, and what each name shares with the subject added up; a name that shares
   * too little to reach the threshold whatever else it holds is left out.
   */
  private candidates(tokens: ScoredToken[], threshold: number, admits: (e: number) => boolean, similarity: MemoSimilarity): number[] {
    const names = this.nameEntity.length;
    if (this.scratch === undefined || this.scratch.covered.length < names) {
      this.scratch = { covered: new Float32Array(names), alike: new Float32Array(names), best: new Float32Array(names), words: new Uint8Array(names) };
    }
    const { covered, alike, best, words } = this.scratch;
    const touched: number[] = [];
    let finderTotal = 0;
    let subjectWords = 0;
    let initials = false;
    for (const token of tokens) {
      if (FINDING_KINDS.has(token.info.kind)) finderTotal += token.weight;
      if (token.weight === 1) subjectWords++;
      if (token.info.kind === 'initial') initials = true;
    }
    const finders = tokens.filter((token) => FINDING_KINDS.has(token.info.kind)).map((token) => ({ token, words: token.weight === 1 ? 1 : 0 }));
    // A subject's words written apart that a list writes as one (Abu Bakar, Jin Ping).
    for (let i = 0; i + 1 < tokens.length; i++) {
      const [first, second] = [tokens[i]!, tokens[i + 1]!];
      if (first.info.kind === 'name' && second.info.kind === 'name') {
        const joined = tokenInfo(first.info.norm + second.info.norm, 'name', first.info.abjad);
        finders.push({ token: { info: joined, display: '', weight: first.weight + second.weight }, words: 2 });
      }
    }
    for (const { token, words: count } of finders) {
      const local: number[] = [];
      const compared = new Set<number>();
      for (const key of queryKeys(token.info)) {
        for (const w of this.keys.get(key) ?? []) {
          if (compared.has(w)) continue;
          compared.add(w);
          const sim = similarity(token.info, this.words[w]!).sim;
          if (sim < MIN_CANDIDATE_SIM) continue;
          for (let p = this.postingStart[w]!; p < this.postingStart[w + 1]!; p++) {
            const n = this.postings[p]!;
            if (best[n] === 0) local.push(n);
            if (sim > best[n]!) best[n] = sim;
          }
        }
      }
      for (const n of local) {
        if (covered[n] === 0) touched.push(n);
        covered[n]! += token.weight;
        alike[n]! += token.weight * best[n]!;
        words[n] = Math.min(255, words[n]! + count);
        best[n] = 0;
      }
    }
    // The most a name can score: its words' likeness to the subject's where they are alike, the
    // subject's words it lacks costing what they cost (initials, particles and legal forms, which
    // find nothing, assumed present).
    const factor = initials ? 0.9 : ONE_WORD_FACTOR;
    const kept: number[] = [];
    for (const n of touched) {
      const missing = Math.max(0, finderTotal - covered[n]!);
      let bound = alike[n]! / covered[n]! + BOUND_SLACK - SUBJECT_WORD_COST * missing;
      if (words[n]! <= 1 && subjectWords >= 2) bound *= factor;
      if (bound + MAX_BOOST >= threshold && admits(this.nameEntity[n]!)) kept.push(n);
    }
    kept.sort((a, b) => alike[b]! - alike[a]!);
    for (const n of touched) {
      covered[n] = 0;
      alike[n] = 0;
      words[n] = 0;
    }
    return kept.length > MAX_SCORED_NAMES ? kept.slice(0, MAX_SCORED_NAMES) : kept;
  }
}

/** Joined-pair words carry this bit in nameWords, fathers' names (after bin, ibn) the next. */
const JOINED = 0x80000000;
const PATRONYM = 0x40000000;
const WORD_MASK = 0x3fffffff;

function wordKey(norm: string, kind: TokenKind, abjad: boolean, syllable: boolean): string {
  return `${kind[0]}${abjad ? '#' : ''}${syllable ? '^' : ''}${norm}`;
}

type MemoSimilarity = (a: TokenInfo, b: TokenInfo) => TokenSimilarity;

/** compareTokens remembered per subject word and listed word, for one screening. */
function memoSimilarity(): MemoSimilarity {
  const memo = new Map<TokenInfo, Map<TokenInfo, TokenSimilarity>>();
  return (a, b) => {
    let row = memo.get(a);
    if (!row) memo.set(a, (row = new Map()));
    let found = row.get(b);
    if (!found) row.set(b, (found = compareTokens(a, b)));
    return found;
  };
}
