interface Waiting<I, O> {
  input: I;
  resolve(output: O): void;
  reject(error: unknown): void;
}

interface Group<I, O> {
  queue: Waiting<I, O>[];
  /** Batches of the group in flight. */
  running: number;
}

/**
 * Group commit for statements that many requests make at once: per group (an organization's
 * wallet, a registry type, a list's table) at most `concurrency` statements are in flight (one
 * unless said otherwise); what arrives while they all are waits and goes together in the next
 * one, which starts as soon as one of them is done. At low load a batch holds one input and
 * nothing waits; under load a busy group pays one round trip per batch instead of one per request.
 *
 * `run` gets a group's inputs in arrival order and returns one output per input, in order; if
 * it throws, every input of that batch is rejected with the error.
 */
export class Batches<I, O> {
  private readonly groups = new Map<string, Group<I, O>>();

  constructor(
    private readonly run: (group: string, inputs: I[]) => Promise<O[]>,
    private readonly maxBatch = 256,
    private readonly concurrency = 1,
  ) {}

  add(group: string, input: I): Promise<O> {
    return new Promise((resolve, reject) => {
      let state = this.groups.get(group);
      if (!state) {
        state = { queue: [], running: 0 };
        this.groups.set(group, state);
      }
      state.queue.push({ input, resolve, reject });
      if (state.running < this.concurrency) void this.drain(group, state);
    });
  }

  /** Runs batches of the group's queue, one after another, until it is empty. */
  private async drain(group: string, state: Group<I, O>): Promise<void> {
    state.running += 1;
    while (state.queue.length > 0) {
      const batch = state.queue.splice(0, this.maxBatch);
      try {
        const outputs = await this.run(group, batch.map((waiting) => waiting.input));
        if (outputs.length !== batch.length) throw new Error(`a batch of ${batch.length} in ${group} gave ${outputs.length} answers`);
        batch.forEach((waiting, i) => waiting.resolve(outputs[i]!));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    state.running -= 1;
    if (state.running === 0) this.groups.delete(group);
  }
}
