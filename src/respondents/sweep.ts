import type { BackgroundTask, WorkerContext } from '../platform/background.js';

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
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      let running: Promise<void> = Promise.resolve();
      const tick = () => {
        running = sweep(context, new Date())
          .then((count) => {
            if (count > 0) context.logger.info({ count }, `${name}: completed ${count} unanswered verification(s)`);
          })
          .catch((err: unknown) => context.logger.error({ err }, `${name} failed`))
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
    },
  };
}
