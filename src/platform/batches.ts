interface Waiting<I, O> {
  input: I;
  resolve(output: O): void;
  reject(error: unknown): void;
}

/**
 * Group commit for statements that many requests make at once: per group (an organization's
 * wallet, a registry type) at most one statement is in flight; what arrives meanwhile waits and
 * goes together in the next one, which starts after every one of them arrived. At low load a
 * batch holds one input and nothing waits; under load a busy group pays one round trip per
 * batch instead of one per request.
 *
 * `run` gets a group's inputs in arrival order and returns one output per input, in order; if
 * it throws, every input of that batch is rejected with the error.
 */
export class Batches<I, O> {
  private readonly queues = new Map<string, Waiting<I, O>[]>();

  constructor(
    private readonly run: (group: string, inputs: I[]) => Promise<O[]>,
    private readonly maxBatch = 256,
  ) {}

  add(group: string, input: I): Promise<O> {
    return new Promise((resolve, reject) => {
      const waiting = { input, resolve, reject };
      const queue = this.queues.get(group);
      if (queue) {
        queue.push(waiting);
        return;
      }
      this.queues.set(group, [waiting]);
      void this.drain(group);
    });
  }

  private async drain(group: string): Promise<void> {
    const queue = this.queues.get(group)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, this.maxBatch);
      try {
        const outputs = await this.run(group, batch.map((waiting) => waiting.input));
        if (outputs.length !== batch.length) throw new Error(`a batch of ${batch.length} in ${group} gave ${outputs.length} answers`);
        batch.forEach((waiting, i) => waiting.resolve(outputs[i]!));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    this.queues.delete(group);
  }
}
