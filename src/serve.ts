import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { asCliError, CliError } from './cli/support.js';
import { loadConfig, type Config } from './config.js';
import { seedDemo, type DemoSeed } from './demo.js';
import { openFileStore } from './files/open-store.js';
import { openKeyring } from './platform/crypto/open.js';
import { sealLegacyInBackground } from './platform/crypto/seal.js';
import type { Database } from './platform/db/database.js';
import { migrate } from './platform/db/migrate.js';
import { openConfiguredDatabase } from './platform/db/open.js';
import { tuneHeapForServing } from './platform/heap.js';
import { logDestination } from './platform/logging.js';
import { loadSharp } from './platform/sharp.js';
import { StopSignals } from './platform/shutdown.js';
import { startWorker } from './worker.js';
import { recordServerPublicUrl } from './cli/support.js';

/** Test only: VOUCH_TEST_PAUSE_AFTER_COMMIT_MS holds idempotent answers after their work committed (see IdempotencySettings.holdAnswerMs). */
function testPause(): { holdAnswerMs: number } | undefined {
  const ms = Number(process.env.VOUCH_TEST_PAUSE_AFTER_COMMIT_MS ?? 0);
  return Number.isSafeInteger(ms) && ms > 0 ? { holdAnswerMs: ms } : undefined;
}

/** Why a listen failed, in words for the one line the CLI prints; other codes print Node's message. */
const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied (a port below 1024 needs privileges)',
  EADDRNOTAVAIL: "the address is not one of this machine's",
};

function listenFailure(err: unknown, { host, port }: Pick<Config, 'host' | 'port'>): CliError {
  const reason = LISTEN_FAILURES[(err as NodeJS.ErrnoException).code ?? ''] ?? (err as Error).message;
  return new CliError(`cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}: ${reason}`);
}

/**
 * `vouch serve`: migrate, then the API and the worker, and on a first start the demo, until a
 * signal. SIGTERM or SIGINT at any moment, start included, stops it cleanly within the deadline
 * (src/platform/shutdown.ts, docs/operations.md); a step of start that fails closes what was
 * opened before it, and the process exits with code 1 and its one line.
 */
/** The server's public URL with the port it actually listens at (PORT=0 picks one). */
function listeningUrl(app: FastifyInstance, config: Config): string {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return config.publicUrl.includes(`:${config.port}`) ? config.publicUrl.replace(`:${config.port}`, `:${port}`) : config.publicUrl;
}

export async function serve(): Promise<void> {
  tuneHeapForServing();
  const stop = new StopSignals();
  const config = loadConfig();
  const { app, database, demo } = await stop.starting(() => start(stop, config));
  const base = listeningUrl(app, config);
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

/** Start's steps, each thing opened registered with `stop` as it opens, so that a stop or a failed step closes it. */
async function start(stop: StopSignals, config: Config): Promise<{ app: FastifyInstance; database: Database; demo: DemoSeed | undefined }> {
  const database = await openConfiguredDatabase(config);
  stop.onStop(() => database.close());
  await stop.checkpoint();
  await migrate(database.db);
  await stop.checkpoint();
  // Personal data is encrypted at rest (docs/data-protection.md): no key, no start.
  await openKeyring(database, config, { poll: true }).catch((err: unknown) => {
    throw asCliError(err);
  });
  // sharp is loaded on first use (src/platform/sharp.ts), so that commands start without it; the
  // server loads it now, so an install without its native library fails here, not at a request.
  await loadSharp();
  const app = await buildApp({ config, database, logStream: logDestination(config.logFormat, stop.logStream), idempotency: testPause() });
  stop.useLogger(app.log);
  stop.onStop(() => app.close());
  await stop.checkpoint();
  // The port before anything that lasts: a port already taken starts no worker and seeds no demo.
  await app.listen({ port: config.port, host: config.host }).catch((err: unknown) => {
    throw listenFailure(err, config);
  });
  await stop.checkpoint();
  // Commands run beside this server print links at its address (src/cli/support.ts): the one it
  // listens at (PORT=0 picks one) unless PUBLIC_URL says where people reach it.
  await recordServerPublicUrl(database.db, listeningUrl(app, config));
  // Rows stored before encryption existed are encrypted now, in batches, while the API serves.
  sealLegacyInBackground(database, openFileStore(config, database.protection), app.log);
  const worker = config.runWorker ? await startWorker({ database, config, logger: app.log }) : undefined;
  if (worker) stop.onStop(() => worker.stop());
  await stop.checkpoint();
  // The CLI beside the server: on the embedded database, commands run here, through a socket in the data folder (src/cli/hosted.ts).
  if (database.kind === 'pglite') {
    const { serveCommands } = await import('./cli/hosted.js');
    const { runCommand } = await import('./cli/program.js');
    stop.onStop(await serveCommands(config.dataDir, database, runCommand));
  }
  await stop.checkpoint();
  // Last, so that no later step can fail and take with it the secrets that only this start prints.
  const demo = config.demo ? await seedDemo(database.db) : undefined;
  await stop.checkpoint();
  return { app, database, demo };
}
