import { repeatUntilStopped, type BackgroundTask } from '../platform/background.js';
import { forgetLinkIdSteps } from './links/id-step-limits.js';
import { expireDueSessions } from './service.js';

/** How often the worker looks for sessions past their expiry (the end-user API also expires one it opens late). */
export const SESSION_EXPIRY_INTERVAL_MS = 60_000;

/**
 * Background task: open sessions past `expiresAt` end expired (session.expired sent; nothing more
 * charged: a session pays with its first ID lookup), and the ID steps of link sessions past their
 * limits' windows are forgotten.
 */
export function sessionExpiryTask(options: { intervalMs?: number; now?: () => Date } = {}): BackgroundTask {
  const name = 'session expiry';
  const now = options.now ?? (() => new Date());
  return {
    name,
    async start({ database, logger }) {
      return repeatUntilStopped(name, logger, options.intervalMs ?? SESSION_EXPIRY_INTERVAL_MS, async (stopped) => {
        let total = 0;
        for (;;) {
          const done = await expireDueSessions(database.db, now());
          total += done;
          if (done < 100 || stopped()) break;
        }
        if (total > 0) logger.info({ count: total }, `${name}: ${total} session(s) expired`);
        await forgetLinkIdSteps(database.db, now());
      });
    },
  };
}
