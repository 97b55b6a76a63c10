import type { TaskLogger } from './background.js';
import { processOutput } from './logging.js';

/**
 * How long a stop may take: past it the process exits anyway (code 1). Requests in flight get
 * most of it to finish; a supervisor's usual grace before SIGKILL is 10 s or more.
 */
export const STOP_DEADLINE_MS = 8_000;

/**
 * SIGTERM and SIGINT for a long-running command (`vouch serve`, `vouch worker`), whenever they
 * come, start included: what was opened so far is closed, newest first (the API stops taking
 * requests and finishes those in flight, the worker stops, the database closes), the log is
 * drained and the process exits 0. A signal during start is acted on between start's steps
 * (`checkpoint`), never in the middle of one (a half-written embedded data folder would not
 * open again). Whatever holds the stop up, the process exits with code 1 at the deadline. A
 * start that fails closes what it opened the same way and ends with code 1 (`starting`).
 */
export class StopSignals {
  private readonly closers: (() => Promise<unknown>)[] = [];
  private readonly output = processOutput();
  private logger: TaskLogger | undefined;
  private signal: string | undefined;
  private running = false;
  private stopping: Promise<never> | undefined;
  private signalled!: () => void;
  private readonly received = new Promise<void>((resolve) => (this.signalled = resolve));

  constructor(private readonly deadlineMs = STOP_DEADLINE_MS) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => this.onSignal(signal));
  }

  /** The log stream for the process's logger: standard output, drained before exit. */
  get logStream() {
    return this.output.stream;
  }

  /** Where the stop reports (the app's logger once there is one). */
  useLogger(logger: TaskLogger): void {
    this.logger = logger;
  }

  /** Something to close on stop; closed before everything registered earlier. */
  onStop(close: () => Promise<unknown>): void {
    this.closers.push(close);
  }

  /** Between start's steps: stops here if a signal came meanwhile. */
  async checkpoint(): Promise<void> {
    if (this.signal) await this.stop();
  }

  /**
   * Runs start's steps. When one fails, what was opened so far is closed, newest first, as a stop
   * closes it, and the error goes on to `main`, which prints its one line: with nothing left
   * open the process ends at once with code 1, and at the deadline if something still holds it. A
   * failed start that stayed alive (listening on nothing, holding its database connections, its
   * worker running) looked healthy to its supervisor, which never restarted it.
   */
  async starting<T>(steps: () => Promise<T>): Promise<T> {
    try {
      return await steps();
    } catch (err) {
      process.exitCode = 1;
      const deadline = setTimeout(() => process.exit(1), this.deadlineMs);
      deadline.unref();
      await this.closeAll();
      await this.output.drain(1_000);
      throw err;
    }
  }

  /** Start is over: runs until a signal, then stops. */
  async run(): Promise<never> {
    this.running = true;
    await this.received;
    return this.stop();
  }

  private onSignal(signal: string): void {
    if (this.signal) return;
    this.signal = signal;
    const deadline = setTimeout(() => {
      this.logger?.error({ signal, deadlineMs: this.deadlineMs }, 'shutdown did not finish in time; exiting anyway');
      void this.output.drain(500).then(() => process.exit(1));
    }, this.deadlineMs);
    deadline.unref();
    this.signalled();
    if (this.running) void this.stop();
  }

  private stop(): Promise<never> {
    this.stopping ??= (async () => {
      this.logger?.info({ signal: this.signal }, 'shutting down');
      const failed = await this.closeAll();
      await this.output.drain(1_000);
      return process.exit(failed ? 1 : 0);
    })();
    return this.stopping;
  }

  /** Closes what was opened, newest first; true when a step failed (each is logged, and the rest still run). */
  private async closeAll(): Promise<boolean> {
    let failed = false;
    for (const close of this.closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        failed = true;
        this.logger?.error({ err: (err as Error).message }, 'shutdown step failed');
      }
    }
    return failed;
  }
}
