import { buildApp } from './app.js';
import { asCliError } from './cli/support.js';
import { loadConfig } from './config.js';
import { seedDemo } from './demo.js';
import { openFileStore } from './files/open-store.js';
import { openKeyring } from './platform/crypto/open.js';
import { sealLegacyInBackground } from './platform/crypto/seal.js';
import { migrate } from './platform/db/migrate.js';
import { openConfiguredDatabase } from './platform/db/open.js';
import { tuneHeapForServing } from './platform/heap.js';
import { loadSharp } from './platform/sharp.js';
import { StopSignals } from './platform/shutdown.js';
import { startWorker } from './worker.js';

/** Test only: VOUCH_TEST_PAUSE_AFTER_COMMIT_MS holds idempotent answers after their work committed (see IdempotencySettings.holdAnswerMs). */
function testPause(): { holdAnswerMs: number } | undefined {
  const ms = Number(process.env.VOUCH_TEST_PAUSE_AFTER_COMMIT_MS ?? 0);
  return Number.isSafeInteger(ms) && ms > 0 ? { holdAnswerMs: ms } : undefined;
}

/**
 * `vouch serve`: migrate, seed the demo on a first start, then the API (and the worker) until a
 * signal. SIGTERM or SIGINT at any moment, start included, stops it cleanly within the deadline
 * (src/platform/shutdown.ts, docs/operations.md).
 */
export async function serve(): Promise<void> {
  tuneHeapForServing();
  const stop = new StopSignals();
  const config = loadConfig();
  const database = await openConfiguredDatabase(config);
  stop.onStop(() => database.close());
  await stop.checkpoint();
  await migrate(database.db);
  await stop.checkpoint();
  // Personal data is encrypted at rest (docs/data-protection.md): no key, no start.
  await openKeyring(database, config, { poll: true }).catch(async (err: unknown) => {
    await database.close();
    throw asCliError(err);
  });
  // sharp is loaded on first use (src/platform/sharp.ts), so that commands start without it; the
  // server loads it now, so an install without its native library fails here, not at a request.
  await loadSharp();
  const demo = config.demo ? await seedDemo(database.db) : undefined;
  await stop.checkpoint();
  const app = await buildApp({ config, database, logStream: stop.logStream, idempotency: testPause() });
  stop.useLogger(app.log);
  stop.onStop(() => app.close());
  // Rows stored before encryption existed are encrypted now, in batches, while the API serves.
  sealLegacyInBackground(database, openFileStore(config, database.protection), app.log);
  await stop.checkpoint();
  const worker = config.runWorker ? await startWorker({ database, config, logger: app.log }) : undefined;
  if (worker) stop.onStop(() => worker.stop());
  await stop.checkpoint();
  await app.listen({ port: config.port, host: config.host });
  await stop.checkpoint();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const base = config.publicUrl.includes(`:${config.port}`) ? config.publicUrl.replace(`:${config.port}`, `:${port}`) : config.publicUrl;
  const lines = [
    '',
    `Vouch is running (${database.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})`,
    `  API       ${base}`,
    `  API docs  ${base}/docs  (OpenAPI: ${base}/openapi.json)`,
    `  Portal    ${base}/  (sign up, or sign in as the demo organization's owner)`,
  ];
  if (demo) {
    lines.push(
      '',
      `Created the demo organization "${demo.organization.name}" (${demo.organization.id}), enabled and funded with ₦${demo.organization.balance / 100},`,
      `and loaded ${demo.registryRecords} demo registry records. Its secrets are shown this once:`,
      `  export VOUCH_TEST_SECRET=${demo.organization.testSecret}`,
      `  export VOUCH_LIVE_SECRET=${demo.organization.liveSecret}`,
      '',
      `Sign in to the portal as ${demo.portal.email} with the password ${demo.portal.password} (shown this once).`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
  await stop.run();
}
