import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { kekOf } from '../platform/crypto/keyring.js';
import { openKeyring } from '../platform/crypto/open.js';
import { openDatabase } from '../platform/db/database.js';
import { COMMAND_SHARED_BUFFERS, lockDataDir } from '../platform/db/open.js';
import { loadEncryptionKey } from '../platform/encryption.js';
import { asCliError, CliError, print } from './support.js';

/**
 * `vouch backup DIR` and `vouch restore DIR` for the embedded database (docs/backup.md): a copy of
 * the data folder's database and photo store, taken while no Vouch process holds the folder (the
 * copy is then consistent: PGlite is one process, and it is stopped), with a manifest naming the
 * migrations it holds and the key-encryption keys its data keys are wrapped by. The key itself is
 * never in a backup: a backup alone reads no personal data. PostgreSQL is backed up with its own
 * tools (pg_dump, PITR), which work while the service runs.
 */

export const BACKUP_FORMAT = 'vouch-embedded-backup/1';

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  createdAt: string;
  /** Migrations applied to the database copied: a newer Vouch applies the rest at its first start. */
  migrations: string[];
  /** Fingerprints of the key-encryption keys (`vouch keys status`) the data keys are wrapped by. */
  kekIds: string[];
  /** Photo files copied; null when they live in the S3 bucket (back the bucket up on its own). */
  files: number | null;
}

type BackupConfig = Pick<Config, 'databaseUrl' | 'dataDir' | 's3' | 'encryptionKey' | 'encryptionKeyPrevious'>;

const ON_POSTGRES = 'vouch backup and vouch restore copy the embedded database; on PostgreSQL use pg_dump or point-in-time recovery (docs/backup.md)';

function countFiles(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;
}

function isEmptyDir(dir: string): boolean {
  return !fs.existsSync(dir) || fs.readdirSync(dir).length === 0;
}

/** Copies the stopped embedded database (and its photos) into `target`, a new or empty folder. */
export async function backupEmbedded(config: BackupConfig, target: string): Promise<BackupManifest> {
  if (config.databaseUrl) throw new CliError(ON_POSTGRES);
  const source = path.join(config.dataDir, 'pglite');
  if (!fs.existsSync(source)) throw new CliError(`there is no embedded database in ${config.dataDir} to back up`);
  if (!isEmptyDir(target)) throw new CliError(`${target} is not empty: back up into a new folder`);
  if (path.resolve(target).startsWith(`${path.resolve(config.dataDir)}${path.sep}`)) throw new CliError('back up outside the data folder');
  // Refuses while `vouch serve` (or any vouch) holds the folder: a copy of a live PGlite is not consistent.
  const unlock = lockDataDir(config.dataDir);
  try {
    const database = await openDatabase({ dataDir: source, sharedBuffers: COMMAND_SHARED_BUFFERS });
    let migrations: string[];
    let kekIds: string[];
    try {
      migrations = (await database.db.selectFrom('schema_migrations').select('version').orderBy('version').execute()).map((row) => row.version);
      kekIds = [...new Set((await database.db.selectFrom('data_keys').select('kek_id').execute()).map((row) => row.kek_id))].sort();
    } finally {
      await database.close();
    }
    fs.mkdirSync(target, { recursive: true, mode: 0o700 });
    fs.cpSync(source, path.join(target, 'pglite'), { recursive: true });
    let files: number | null = null;
    if (!config.s3) {
      const store = path.join(config.dataDir, 'files');
      if (fs.existsSync(store)) fs.cpSync(store, path.join(target, 'files'), { recursive: true });
      files = countFiles(path.join(target, 'files'));
    }
    const manifest: BackupManifest = { format: BACKUP_FORMAT, createdAt: new Date().toISOString(), migrations, kekIds, files };
    fs.writeFileSync(path.join(target, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    return manifest;
  } finally {
    unlock();
  }
}

function readManifest(source: string): BackupManifest {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(source, 'manifest.json'), 'utf8')) as BackupManifest;
  } catch {
    throw new CliError(`${source} is not a Vouch backup (no readable manifest.json)`);
  }
  if (manifest.format !== BACKUP_FORMAT || !fs.existsSync(path.join(source, 'pglite'))) throw new CliError(`${source} is not a Vouch embedded-database backup`);
  return manifest;
}

/**
 * Checks the configured key against the backup's before anything is written: restoring data
 * that the key given cannot read would only make a second thing to clean up.
 */
function checkKey(config: BackupConfig, manifest: BackupManifest): string | undefined {
  const key = loadEncryptionKey(config, { create: false });
  const needed = manifest.kekIds.join(' or ');
  if (!key) {
    if (manifest.kekIds.length === 0) return undefined;
    throw new CliError(`the backup is encrypted under the key ${needed}: set VOUCH_ENCRYPTION_KEY to it, or put its key file at ${path.join(config.dataDir, 'encryption.key')}`);
  }
  const given = [kekOf(key).id, ...(config.encryptionKeyPrevious ? [kekOf(config.encryptionKeyPrevious).id] : [])];
  if (manifest.kekIds.some((id) => !given.includes(id))) {
    throw new CliError(`the backup is encrypted under the key ${needed}, and the key given is ${given[0]}: set VOUCH_ENCRYPTION_KEY to the key the backup was made with`);
  }
  return given[0];
}

export interface RestoreResult {
  restoredFrom: string;
  createdAt: string;
  migrations: number;
  files: number | null;
  kekId: string | undefined;
}

/** Restores a backup into the configured data folder, which must hold no database. */
export async function restoreEmbedded(config: BackupConfig, source: string): Promise<RestoreResult> {
  if (config.databaseUrl) throw new CliError(ON_POSTGRES);
  const manifest = readManifest(source);
  const kekId = checkKey(config, manifest);
  const unlock = lockDataDir(config.dataDir);
  try {
    const target = path.join(config.dataDir, 'pglite');
    const store = path.join(config.dataDir, 'files');
    if (fs.existsSync(target)) throw new CliError(`${config.dataDir} already holds a database: move it aside, or restore into another VOUCH_DATA_DIR`);
    if (manifest.files !== null && !isEmptyDir(store)) throw new CliError(`${store} already holds files: move them aside first`);
    try {
      fs.cpSync(path.join(source, 'pglite'), target, { recursive: true });
      if (manifest.files !== null && fs.existsSync(path.join(source, 'files'))) fs.cpSync(path.join(source, 'files'), store, { recursive: true });
      // The restored data keys unwrap under the key given: the data reads back.
      const database = await openDatabase({ dataDir: target, sharedBuffers: COMMAND_SHARED_BUFFERS });
      try {
        await openKeyring(database, config);
      } finally {
        database.protection.keyring?.close();
        await database.close();
      }
    } catch (err) {
      fs.rmSync(target, { recursive: true, force: true });
      if (manifest.files !== null) fs.rmSync(store, { recursive: true, force: true });
      throw err;
    }
    return { restoredFrom: path.resolve(source), createdAt: manifest.createdAt, migrations: manifest.migrations.length, files: manifest.files, kekId };
  } finally {
    unlock();
  }
}

export function registerBackupCommands(program: Command): void {
  program
    .command('backup <dir>')
    .description('copy the embedded database and its photos into a new folder DIR, while Vouch is stopped (docs/backup.md); the key is not copied')
    .option('--json', 'print JSON')
    .action(async (dir: string, opts: { json?: boolean }) => {
      const config = loadConfig();
      const manifest = await backupEmbedded(config, path.resolve(dir)).catch((err: unknown) => Promise.reject(asCliError(err)));
      const keyNote = config.encryptionKey
        ? `the key is not in the backup: keep VOUCH_ENCRYPTION_KEY (${manifest.kekIds.join(', ')}) apart from it`
        : `the key is not in the backup: keep a copy of ${path.join(config.dataDir, 'encryption.key')} apart from it`;
      print(
        !!opts.json,
        { dir: path.resolve(dir), ...manifest },
        `backed up ${manifest.migrations.length} migrations' database and ${manifest.files ?? 'no'} photo files into ${path.resolve(dir)}\n${keyNote}; without it the backup reads nothing`,
      );
    });
  program
    .command('restore <dir>')
    .description('restore a `vouch backup` folder into an empty data folder, with the key it was made under')
    .option('--json', 'print JSON')
    .action(async (dir: string, opts: { json?: boolean }) => {
      const config = loadConfig();
      const restored = await restoreEmbedded(config, path.resolve(dir)).catch((err: unknown) => Promise.reject(asCliError(err)));
      print(!!opts.json, restored, `restored the backup of ${restored.createdAt} into ${config.dataDir}; the next start applies any newer migrations`);
    });
}
