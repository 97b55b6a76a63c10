import { repeatUntilStopped, type BackgroundTask, type WorkerContext } from '../platform/background.js';

/** How often the worker looks for respondent links that expired unanswered. */
export const SWEEP_INTERVAL_MS = 60_000;

/**
 * A background task that runs `sweep` now and then every `intervalMs` until stopped; `sweep`
 * answers how many verifications it completed. Several workers may run it at once: sweeps lock
 * each row they change and skip rows another worker holds.
 */
export function sweepTask(name: string, sweep: (context: WorkerContext, now: Date) => Promise<number>, intervalMs = SWEEP_INTERVAL_MS): BackgroundTask {
  return {
    name,
    async start(context) {
      return repeatUntilStopped(name, context.logger, intervalMs, async () => {
        const count = await sweep(context, new Date());
        if (count > 0) context.logger.info({ count }, `${name}: completed ${count} unanswered verification(s)`);
      });
    },
  };
}
