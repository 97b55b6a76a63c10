import { describe, expect, it } from 'vitest';
import { Batches } from '../../src/platform/batches.js';

/** A `run` that records each batch it is given and answers each input doubled, once released. */
function recorder() {
  const batches: { group: string; inputs: number[] }[] = [];
  const gates: (() => void)[] = [];
  const run = async (group: string, inputs: number[]) => {
    batches.push({ group, inputs });
    await new Promise<void>((resolve) => gates.push(resolve));
    return inputs.map((input) => input * 2);
  };
  /** Lets every batch through, one round at a time, until `settled` settles. */
  const releaseUntil = async (settled: Promise<unknown>) => {
    let done = false;
    void settled.finally(() => (done = true));
    while (!done) {
      for (const open of gates.splice(0)) open();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { batches, run, releaseUntil };
}

describe('batches (group commit)', () => {
  it('runs the first input alone, then what arrived meanwhile together, per group and in order, at most maxBatch at a time', async () => {
    const { batches, run, releaseUntil } = recorder();
    const queue = new Batches(run, 3);
    const answers = Promise.all([1, 2, 3, 4, 5, 6].map((n) => queue.add(n % 2 ? 'odd' : 'even', n)));
    const more = Promise.all([7, 9, 11].map((n) => queue.add('odd', n)));
    await releaseUntil(Promise.all([answers, more]));
    expect(await answers).toEqual([2, 4, 6, 8, 10, 12]);
    expect(await more).toEqual([14, 18, 22]);
    expect(batches).toEqual([
      { group: 'odd', inputs: [1] },
      { group: 'even', inputs: [2] },
      { group: 'odd', inputs: [3, 5, 7] },
      { group: 'even', inputs: [4, 6] },
      { group: 'odd', inputs: [9, 11] },
    ]);
  });

  it('with a concurrency of two, runs two batches of a group at once; what arrives meanwhile goes in the next free one', async () => {
    const { batches, run, releaseUntil } = recorder();
    const queue = new Batches(run, 10, 2);
    const early = [queue.add('g', 1), queue.add('g', 2), queue.add('g', 3), queue.add('g', 4)];
    // 1 and 2 are in flight, alone, before anything is released; 3 and 4 wait.
    expect(batches).toEqual([
      { group: 'g', inputs: [1] },
      { group: 'g', inputs: [2] },
    ]);
    await releaseUntil(Promise.all(early));
    expect(await Promise.all(early)).toEqual([2, 4, 6, 8]);
    expect(batches).toEqual([
      { group: 'g', inputs: [1] },
      { group: 'g', inputs: [2] },
      { group: 'g', inputs: [3, 4] },
    ]);
    // Nothing in flight any more: the next input starts at once, alone.
    const late = queue.add('g', 5);
    expect(batches.at(-1)).toEqual({ group: 'g', inputs: [5] });
    await releaseUntil(late);
    expect(await late).toBe(10);
  });

  it('rejects every input of a failed batch with its error, and the next input runs afresh', async () => {
    let fail = true;
    const queue = new Batches<number, number>(async (_, inputs) => {
      if (fail) throw new Error('statement failed');
      return inputs;
    });
    const failed = await Promise.allSettled([queue.add('g', 1), queue.add('g', 2)]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await queue.add('g', 3)).toBe(3);
  });

  it('refuses an answer that does not give one output per input', async () => {
    const queue = new Batches<number, number>(async () => []);
    await expect(queue.add('g', 1)).rejects.toThrow('a batch of 1 in g gave 0 answers');
  });
});
