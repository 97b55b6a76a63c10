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
