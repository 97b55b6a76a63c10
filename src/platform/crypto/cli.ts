import type { Command } from 'commander';
import { CliError, print, withDatabase } from '../../cli/support.js';
import type { Config } from '../../config.js';
import { openFileStore } from '../../files/open-store.js';
import type { Database } from '../db/database.js';
import { decryptSecret, encryptSecret } from '../encryption.js';
import { kekOf, type RotationResult } from './keyring.js';
import { openKeyring, ROTATION_GRACE_MS } from './open.js';
import { sealStoredFiles, sealStoredValues, type SealCounts } from './seal.js';

/** `vouch keys status|rotate`: the data keys and their rotation (docs/data-protection.md). */
export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('the encryption keys of personal data at rest (docs/data-protection.md)');

  keys
    .command('status')
    .description('the key-encryption key in use and every data key (ids and dates, never key material)')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withDatabase(async (database, config) => {
        const keyring = await openKeyring(database, config);
        const status = {
          kekId: keyring.kekId,
          previousKekId: keyring.options.previousKek?.id ?? null,
          activeKey: keyring.activeKeyId(),
          keys: keyring.describe(),
        };
        const human = [
          `key-encryption key ${status.kekId}${status.previousKekId ? ` (previous ${status.previousKekId})` : ''}`,
          ...status.keys.map((key) => `${key.id}  ${key.purpose.padEnd(5)}  wrapped by ${key.kekId}  created ${key.createdAt}${key.active ? '  active' : ''}`),
        ].join('\n');
        print(!!opts.json, status, human);
      });
    });

  keys
    .command('rotate')
    .description('make a new data key active and re-wrap every data key under VOUCH_ENCRYPTION_KEY; --reencrypt also moves every value and file to the new key')
    .option('--reencrypt', 're-encrypt every stored value and photo under the new data key, in batches (the service keeps running)')
    .option('--json', 'print JSON')
    .action(async (opts: { reencrypt?: boolean; json?: boolean }) => {
      await withDatabase(async (database, config) => {
        const result = await rotateKeys(database, config, { reencrypt: !!opts.reencrypt });
        const human = [
          `new data key ${result.created}, active from ${result.activatesAt}`,
          result.rewrapped.length > 0 ? `re-wrapped ${result.rewrapped.length} keys under ${result.kekId}: VOUCH_ENCRYPTION_KEY_PREVIOUS is no longer needed` : `every key is wrapped by ${result.kekId}`,
          ...(result.upstreamSecrets > 0 ? [`re-encrypted ${result.upstreamSecrets} upstream credentials`] : []),
          ...(result.reencrypted ? [`re-encrypted ${Object.values(result.reencrypted.rows).reduce((a, b) => a + b, 0)} rows and ${result.reencrypted.files} files`] : []),
        ].join('\n');
        print(!!opts.json, result, human);
      }, { wholeTables: !!opts.reencrypt });
    });
}

export interface KeyRotation extends RotationResult {
  /** Upstream credentials moved from the previous KEK to the current one. */
  upstreamSecrets: number;
  reencrypted?: { rows: SealCounts; files: number };
}

/**
 * The rotation `vouch keys rotate` runs: a new data key (on PostgreSQL active after a grace the
 * running processes' polls cover), every data key and upstream credential under the current KEK,
 * and with `reencrypt` every value and file under the new data key.
 */
export async function rotateKeys(database: Database, config: Pick<Config, 'encryptionKey' | 'encryptionKeyPrevious' | 'databaseUrl' | 'dataDir' | 's3'>, { reencrypt = false, graceMs }: { reencrypt?: boolean; graceMs?: number } = {}): Promise<KeyRotation> {
  const keyring = await openKeyring(database, config);
  const grace = graceMs ?? (database.kind === 'postgres' ? ROTATION_GRACE_MS : 0);
  const rotation = await keyring.rotate(grace);
  const upstreamSecrets = await rewrapUpstreamSecrets(database, keyring.options.kek.key, config.encryptionKeyPrevious);
  if (!reencrypt) return { ...rotation, upstreamSecrets };
  // Values written under the new key before every process holds it would be unreadable there.
  if (grace > 0) await new Promise((resolve) => setTimeout(resolve, grace));
  await keyring.refresh();
  const rows = await sealStoredValues(database.db, { mode: 'all' });
  const files = await sealStoredFiles(database.db, openFileStore(config, database.protection), { mode: 'all' });
  return { ...rotation, upstreamSecrets, reencrypted: { rows, files } };
}

/** Upstream credentials are encrypted with the KEK itself: those under the previous one move to the current one. */
async function rewrapUpstreamSecrets(database: Database, kek: Buffer, previous: Buffer | undefined): Promise<number> {
  const rows = await database.db.selectFrom('upstream_sources').select(['name', 'secret_encrypted']).execute();
  let moved = 0;
  for (const row of rows) {
    try {
      decryptSecret(kek, row.secret_encrypted);
      continue;
    } catch {
      // Not under the current key.
    }
    if (!previous) throw new CliError(`the credentials of upstream ${row.name} are not under VOUCH_ENCRYPTION_KEY: set VOUCH_ENCRYPTION_KEY_PREVIOUS to the key they were stored with`);
    let secret: string;
    try {
      secret = decryptSecret(previous, row.secret_encrypted);
    } catch {
      throw new CliError(`the credentials of upstream ${row.name} are under neither VOUCH_ENCRYPTION_KEY (${kekOf(kek).id}) nor VOUCH_ENCRYPTION_KEY_PREVIOUS (${kekOf(previous).id})`);
    }
    await database.db.updateTable('upstream_sources').set({ secret_encrypted: encryptSecret(kek, secret) }).where('name', '=', row.name).execute();
    moved += 1;
  }
  return moved;
}
