import type { Transferable, Worker } from 'node:worker_threads';

/**
 * The requests in flight to one worker thread, each answered by the reply that carries its id:
 * the bookkeeping the face engine, the liveness analyzer and the decryption thread share.
 *
 * - The worker keeps the process alive only while it holds requests: referenced with the first,
 *   unreferenced when the last is answered, so an idle one never holds a process open.
 * - When the worker errs or exits, every request still waiting is rejected at once with that
 *   error, and so is every later one, so no caller waits for a thread that is gone; `onGone` then
 *   lets the owner start another for the next request.
 */
export class WorkerCalls<Reply extends { id: number }> {
  private readonly pending = new Map<number, { resolve(reply: Reply): void; reject(error: Error): void }>();
  private nextId = 1;
  private gone: Error | undefined;

  /** `name` says whose worker it is in the error of its exit ("face model worker exited with code 1"). */
  constructor(
    readonly worker: Worker,
    name: string,
    private readonly onGone: (calls: WorkerCalls<Reply>) => void,
  ) {
    worker.unref();
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`${name} exited with code ${code}`)));
  }

  /** Posts `message` with a new `id`; resolves with the worker's reply to it. */
  send(message: object, transfer: readonly Transferable[] = []): Promise<Reply> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
      try {
        this.worker.postMessage({ ...message, id }, transfer);
      } catch (error) {
        // Not sent (a buffer already handed to a worker cannot be sent again): nothing will answer.
        this.pending.delete(id);
        if (this.pending.size === 0) this.worker.unref();
        throw error;
      }
    });
  }

  /** Fails what is waiting with `error`, then stops the worker. */
  async close(error: Error): Promise<void> {
    this.fail(error);
    await this.worker.terminate();
  }

  private settle(reply: Reply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    pending.resolve(reply);
  }

  private fail(error: Error): void {
    if (this.gone) return;
    this.gone = error;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
    this.onGone(this);
  }
}
