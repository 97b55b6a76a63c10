import v8 from 'node:v8';

/**
 * V8 settings for `vouch serve`, applied when it starts, before it builds anything that answers
 * requests. Flags set at run time apply to what V8 does from then on, for every thread of the
 * process (the decryption thread and the face engine's included).
 *
 * `--no-allocation-site-pretenuring`: V8 watches, per place in the code that makes objects, how
 * many of them survive a young-generation collection, and when nearly all do it makes that place's
 * objects in the old generation from then on ("pretenuring"). A server's objects (rows parsed by
 * `pg`, values back from the decryption thread, response headers) live for the milliseconds of a
 * request, but a collection that runs while requests are in flight finds them alive, and V8 judged
 * those places long-lived: on the lists at 500 requests/s, 0.8 MB of request garbage went to the
 * old generation at every young collection (6 % of what was made), a full mark-compact ran every
 * 6 s, and six of the eight latency episodes over 25 ms in 45 s began with one. Without
 * pretenuring, those objects die young: 9 kB moved up per collection (median), one mark-compact
 * in 45 s, and 5-9 % less CPU per request (docs/benchmarks.md, twelfth session).
 */
export const SERVING_V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

export function tuneHeapForServing(): void {
  for (const flag of SERVING_V8_FLAGS) v8.setFlagsFromString(flag);
}
