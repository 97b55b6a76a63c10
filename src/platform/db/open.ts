import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../config.js';
import { openDatabase, type Database } from './database.js';

/**
 * The build's embedded database with every migration applied (scripts/build-server.ts), beside
 * the bundle as the migrations are. A new data folder starts from it instead of PGlite's initdb
 * and the migrations (about 0.8 s instead of 4); run from the sources, there is none, and the
 * folder is created the long way. Migrations added since the build still run at start.
 */
export const PGLITE_TEMPLATE = 'pglite-template.tar.gz';

function migratedTemplate(): Blob | undefined {
  const file = fileURLToPath(new URL(`./${PGLITE_TEMPLATE}`, import.meta.url));
  return fs.existsSync(file) ? new Blob([fs.readFileSync(file)]) : undefined;
}

/** Raised when the database cannot be opened for a reason a person can act on. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
}

/** The embedded data folder is held by another running process (a server): commands can go through it (src/cli/hosted.ts). */
export class DataDirInUseError extends DatabaseUnavailableError {
  constructor(
    message: string,
    readonly dir: string,
  ) {
    super(message);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite is a single-process database: two processes opening one data folder would corrupt it.
 * A lock file holding the owner's pid turns that into a clear refusal.
 */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const lockFile = path.join(dir, 'vouch.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(fs.readFileSync(lockFile, 'utf8'));
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isRunning(owner)) {
        throw new DataDirInUseError(
          `the embedded database in ${dir} is in use by process ${owner} (a running vouch); stop it first, or run Vouch on PostgreSQL with DATABASE_URL`,
          dir,
        );
      }
      fs.rmSync(lockFile, { force: true });
    }
  }
  throw new DatabaseUnavailableError(`could not lock the embedded database in ${dir}`);
}

/**
 * The embedded database's buffer cache for a command that runs and exits. PGlite sets up its
 * `shared_buffers` in WebAssembly memory at every start, at a cost in CPU and memory in
 * proportion: with 16 MB instead of 128 (PostgreSQL's default, which the server keeps), a
 * `vouch org create` used about 0.6 s less CPU and 110 MB less memory (docs/benchmarks.md,
 * twenty-fifth session). A command reads and writes a few pages; the files stay in the system's
 * page cache anyway.
 */
export const COMMAND_SHARED_BUFFERS = '16MB';

export interface OpenOptions {
  /**
   * Opened by a command that runs and exits (not the server or the worker): on the embedded
   * database, a smaller buffer cache (COMMAND_SHARED_BUFFERS). Commands that go through whole
   * tables (a registry import, a key rotation) keep the server's.
   */
  command?: boolean;
}

/** Opens the configured database: PostgreSQL with DATABASE_URL, else PGlite under the data folder. */
export async function openConfiguredDatabase(
  config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'databasePreparedStatements' | 'dataDir'>,
  { command = false }: OpenOptions = {},
): Promise<Database> {
  if (config.databaseUrl) {
    try {
      return await openDatabase({ url: config.databaseUrl, poolSize: config.databasePoolSize, preparedStatements: config.databasePreparedStatements });
    } catch (err) {
      throw new DatabaseUnavailableError(`cannot connect to DATABASE_URL: ${(err as Error).message}`);
    }
  }
  const unlock = lockDataDir(config.dataDir);
  try {
    const dataDir = path.join(config.dataDir, 'pglite');
    const loadDataDir = fs.existsSync(dataDir) ? undefined : migratedTemplate();
    const database = await openDatabase({ dataDir, ...(loadDataDir ? { loadDataDir } : {}), ...(command ? { sharedBuffers: COMMAND_SHARED_BUFFERS } : {}) });
    return {
      ...database,
      close: async () => {
        await database.close();
        unlock();
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}
