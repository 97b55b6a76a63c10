import pino, { type LoggerOptions } from 'pino';
import { loadConfig } from './config.js';
import type { BackgroundTask, RunningTask, WorkerContext } from './platform/background.js';
import { asCliError } from './cli/support.js';
import { openKeyring } from './platform/crypto/open.js';
import { migrate } from './platform/db/migrate.js';
import { openConfiguredDatabase } from './platform/db/open.js';
import { logDestination, loggerOptions } from './platform/logging.js';
import { StopSignals } from './platform/shutdown.js';
import { webhookRetentionTask } from './webhooks/retention.js';
import { DEFAULT_DELIVERY_SETTINGS, DeliveryWorker, type DeliverySettings } from './webhooks/worker.js';
import { employmentExpiryTask } from './employments/expiry.js';
import { guarantorExpiryTask } from './guarantors/expiry.js';
import { retentionJobTask } from './privacy/retention.js';
import { sessionExpiryTask } from './sessions/expiry.js';
import { screeningMonitoringTask } from './screening/monitoring.js';
import { listSyncTask } from './screening/lists/sync.js';

/** What the worker runs its tasks with: the common context, and overrides of the webhook delivery settings (tests use a fast retry schedule and poll). */
export interface WorkerRunContext extends WorkerContext {
  webhooks?: Partial<DeliverySettings>;
}

const webhookDeliveries: BackgroundTask<WorkerRunContext> = {
  name: 'webhook deliveries',
  async start({ database, config, logger, webhooks }) {
    const worker = new DeliveryWorker(
      database,
      { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: config.allowPrivateUrls, ...webhooks },
      logger,
    );
    await worker.start();
    return worker;
  },
};

/** Every background task; a module with timers of its own adds its task here. */
export const BACKGROUND_TASKS: readonly BackgroundTask<WorkerRunContext>[] = [webhookDeliveries, webhookRetentionTask(), guarantorExpiryTask, employmentExpiryTask, sessionExpiryTask(), retentionJobTask(), screeningMonitoringTask(), listSyncTask()];

export interface Worker {
  /** Stops every task; deliveries in flight get a short grace, then are retried later. */
  stop(): Promise<void>;
}

export async function startWorker(context: WorkerRunContext & { tasks?: readonly BackgroundTask<WorkerRunContext>[] }): Promise<Worker> {
  const running: RunningTask[] = [];
  const stop = async () => {
    await Promise.all(running.splice(0).map((task) => task.stop()));
  };
  try {
    for (const task of context.tasks ?? BACKGROUND_TASKS) running.push(await task.start(context));
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}

/**
 * `vouch worker`: the background work without the API, for scaling it apart from the API. On the
 * embedded database it cannot run beside `vouch serve` (one process per data folder), so a
 * separate worker needs PostgreSQL. A step of start that fails closes what was opened before it,
 * and the process exits with code 1 and its one line (StopSignals.starting).
 */
export async function runWorkerProcess(): Promise<void> {
  const stop = new StopSignals();
  const config = loadConfig();
  const database = await stop.starting(async () => {
    const database = await openConfiguredDatabase(config);
    stop.onStop(() => database.close());
    await stop.checkpoint();
    await migrate(database.db);
    // Webhook bodies are stored encrypted: the worker decrypts them to send them.
    await openKeyring(database, config, { poll: true }).catch((err: unknown) => {
      throw asCliError(err);
    });
    await stop.checkpoint();
    const logger = pino(loggerOptions(config.logLevel) as LoggerOptions, logDestination(config.logFormat, stop.logStream));
    stop.useLogger(logger);
    const worker = await startWorker({ database, config, logger });
    stop.onStop(() => worker.stop());
    await stop.checkpoint();
    return database;
  });
  const where = database.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL';
  process.stdout.write(`\nVouch worker is running (${where}): ${BACKGROUND_TASKS.map((task) => task.name).join(', ')}\n\n`);
  await stop.run();
}
