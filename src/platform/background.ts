import type { BaseLogger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from './db/database.js';

/** The logging background tasks need: Fastify's logger (inside `serve`) or a pino logger (`vouch worker`). */
export type TaskLogger = Pick<BaseLogger, 'info' | 'warn' | 'error'>;

/** What every background task runs with. */
export interface WorkerContext {
  database: Database;
  config: Config;
  logger: TaskLogger;
}

export interface RunningTask {
  stop(): Promise<void>;
}

/**
 * Work that runs beside the API (or alone in `vouch worker`) and survives restarts through the
 * database. A task that needs more than the common context (the webhook deliveries take settings
 * overrides) names its own `Context`; `src/worker.ts` lists the tasks and runs them.
 */
export interface BackgroundTask<Context extends WorkerContext = WorkerContext> {
  name: string;
  start(context: Context): Promise<RunningTask>;
}

/**
 * Runs `work` now and then `intervalMs` after each run ends, until stopped; `stop` waits for the
 * run in flight. `work` gets a `stopped()` check for long batched runs; a failed run is logged
 * as `<name> failed` and the next one comes at its time.
 */
export function repeatUntilStopped(name: string, logger: TaskLogger, intervalMs: number, work: (stopped: () => boolean) => Promise<void>): RunningTask {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = work(() => stopped)
      .catch((err: unknown) => logger.error({ err }, `${name} failed`))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      clearTimeout(timer);
    },
  };
}
