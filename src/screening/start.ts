import type { Kysely } from 'kysely';
import type { TaskLogger } from '../platform/background.js';
import type { DB } from '../platform/db/schema.js';
import { ListIndexProvider } from './lists/index-provider.js';
import { DEFAULT_THRESHOLD } from './matching/index.js';
import { sandboxLists } from './sandbox/index.js';
import { ScreeningService } from './service.js';

export interface ScreeningRoom {
  service: ScreeningService;
  /** The operator's lists in memory; `refresh()` after an import in this process. */
  lists: ListIndexProvider;
  close(): void;
}

/** The screening service over the operator's lists (polled for new versions) and the sandbox list. */
export async function startScreening(db: Kysely<DB>, log: TaskLogger, options: { pollMs?: number; now?: () => Date } = {}): Promise<ScreeningRoom> {
  const lists = await ListIndexProvider.start(db, log, options.pollMs === undefined ? {} : { pollMs: options.pollMs });
  const service = new ScreeningService({ db, live: lists, sandbox: sandboxLists, defaultThreshold: DEFAULT_THRESHOLD, ...(options.now ? { now: options.now } : {}) });
  return { service, lists, close: () => lists.close() };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's in-memory lists (tests refresh them after an import). */
    screeningLists: ListIndexProvider;
  }
}
