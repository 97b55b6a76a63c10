import type { Config } from '../../config.js';
import type { Database } from '../db/database.js';
import { EncryptionKeyMissingError, loadEncryptionKey } from '../encryption.js';
import { kekOf, Keyring } from './keyring.js';

/** How often a process re-reads `data_keys` on PostgreSQL, where another process may rotate. */
export const KEY_POLL_MS = 5_000;
/**
 * How long after `vouch keys rotate` on PostgreSQL the new data key starts encrypting: more than
 * two polls, so every running process holds it before any value is written under it.
 */
export const ROTATION_GRACE_MS = 3 * KEY_POLL_MS;

type KeyConfig = Pick<Config, 'encryptionKey' | 'encryptionKeyPrevious' | 'databaseUrl' | 'dataDir'>;

/**
 * Loads the database's keyring (the data keys, unwrapped under the configured KEK) into its field
 * protection, making the keys on a new database; the embedded default makes its KEK file in the
 * data folder on first use. It replaces any keyring loaded before. On PostgreSQL
 * without VOUCH_ENCRYPTION_KEY this throws EncryptionKeyMissingError: personal data is never
 * written unencrypted.
 */
export async function openKeyring(database: Database, config: KeyConfig, { poll = false }: { poll?: boolean } = {}): Promise<Keyring> {
  const key = loadEncryptionKey(config, { create: true });
  if (!key) throw new EncryptionKeyMissingError();
  const kek = kekOf(key);
  const previousKek = config.encryptionKeyPrevious ? kekOf(config.encryptionKeyPrevious) : undefined;
  const keyring = await Keyring.open(database.db, { kek, previousKek });
  database.protection.keyring?.close();
  database.protection.keyring = keyring;
  if (poll && database.kind === 'postgres') keyring.poll(KEY_POLL_MS);
  return keyring;
}

/**
 * For commands that may or may not touch personal data: the keyring when a key is configured,
 * else nothing (a command that then reads or writes a personal column fails with the one line
 * saying to set VOUCH_ENCRYPTION_KEY).
 */
export async function openKeyringIfConfigured(database: Database, config: KeyConfig): Promise<Keyring | undefined> {
  try {
    return await openKeyring(database, config);
  } catch (err) {
    if (err instanceof EncryptionKeyMissingError) return undefined;
    throw err;
  }
}
