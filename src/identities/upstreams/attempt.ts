import { Compile, type Validator } from 'typebox/compile';
import { IDENTITY_TYPES, RECORD_SCHEMAS, registryKey, type IdentityType, type RecordOf } from '../records.js';
import { recordTypeOf, UpstreamFailure, type FaceMatchRequest, type ProviderFaceMatch, type UpstreamRecordOf, type UpstreamType } from './adapter.js';
import type { LiveSource } from './sources.js';

const validators = new Map<IdentityType, Validator>(IDENTITY_TYPES.map((type) => [type, Compile(RECORD_SCHEMAS[type])]));

/** Anything an adapter throws that is not an UpstreamFailure is a bug in it: a failure of the source, named without detail. */
function asFailure(err: unknown, signal: AbortSignal): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  if (signal.aborted) return new UpstreamFailure('timeout', 'no answer within the time limit');
  return new UpstreamFailure('malformed', `the adapter failed (${(err as Error)?.name ?? 'unknown error'})`);
}

/** A record must fit its type's schema and be the one asked for: anything else is the source's failure. */
function checkRecord<T extends UpstreamType>(type: T, key: string, record: unknown): UpstreamRecordOf[T] {
  const recordType = recordTypeOf(type);
  const validator = validators.get(recordType)!;
  if (!validator.Check(record)) {
    const where = validator.Errors(record)[0]?.instancePath || '/';
    throw new UpstreamFailure('malformed', `the ${recordType} record does not fit its schema at ${where}`);
  }
  if (type !== 'nin_phone' && registryKey(recordType, record as RecordOf[IdentityType]) !== key) {
    throw new UpstreamFailure('malformed', `the ${recordType} record is for another identifier`);
  }
  return record as UpstreamRecordOf[T];
}

/**
 * One source asked once for one lookup: one deadline for the whole (so the retry cannot double
 * the wait), one retry after a `connection` failure only (a refused or reset connection has not
 * reached the provider's registry; a timeout or an HTTP error may have, and is not repeated).
 */
export async function askSource<T extends UpstreamType>(source: LiveSource, type: T, key: string): Promise<UpstreamRecordOf[T] | undefined> {
  return withinDeadline(source, async (signal) => {
    const record = await source.adapter.find({ type, key, signal });
    return record === undefined ? undefined : checkRecord(type, key, record);
  });
}

/** One source asked for one face match, under the same deadline and retry rule as a lookup. */
export async function askSourceFace(source: LiveSource, request: Omit<FaceMatchRequest, 'signal'>): Promise<ProviderFaceMatch | undefined> {
  const compare = source.adapter.compareFace?.bind(source.adapter);
  if (!compare) throw new UpstreamFailure('refused', `kind ${source.kind} offers no face match`);
  return withinDeadline(source, async (signal) => {
    const verdict = await compare({ ...request, signal });
    return verdict === undefined ? undefined : checkVerdict(verdict);
  });
}

/** A verdict must be a boolean and scores in range: anything else is the source's failure, never a decision. */
function checkVerdict(verdict: ProviderFaceMatch): ProviderFaceMatch {
  const { match, confidence, threshold, maxScore } = verdict;
  const inRange = (value: number) => Number.isFinite(value) && value >= 0 && value <= maxScore;
  if (typeof match !== 'boolean' || !Number.isFinite(maxScore) || maxScore <= 0 || !inRange(confidence) || !inRange(threshold)) {
    throw new UpstreamFailure('malformed', 'the face match verdict is not a boolean with scores from 0 to its maximum');
  }
  return verdict;
}

async function withinDeadline<R>(source: LiveSource, call: (signal: AbortSignal) => Promise<R>): Promise<R> {
  // A timer cleared on the answer, not AbortSignal.timeout: that one fires for every lookup
  // (building a DOMException and running its listeners) long after the answer came.
  const controller = new AbortController();
  const { signal } = controller;
  let timer: NodeJS.Timeout | undefined;
  // Raced with each attempt too: an adapter that ignores its signal still cannot hang a lookup.
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new UpstreamFailure('timeout', 'no answer within the time limit'));
    }, source.timeoutMs);
  });
  deadline.catch(() => undefined);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await Promise.race([call(signal), deadline]);
      } catch (err) {
        const failure = asFailure(err, signal);
        if (failure.kind === 'connection' && attempt === 1 && !signal.aborted) continue;
        throw failure;
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
