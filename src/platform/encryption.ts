import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';

/**
 * Secrets at rest (upstream credentials): AES-256-GCM under the installation's key. The stored
 * form is `v1.<iv>.<tag>.<ciphertext>` in base64url, so a later key or cipher can sit beside it.
 */

const VERSION = 'v1';
const KEY_FILE = 'encryption.key';

/** Raised when a secret must be stored or read and no key is configured: the message says what to do. */
export class EncryptionKeyMissingError extends Error {
  override name = 'EncryptionKeyMissingError';
  constructor() {
    super('VOUCH_ENCRYPTION_KEY is not set: set it to 32 random bytes (e.g. `openssl rand -base64 32`) on every Vouch process that shares this database');
  }
}

export function encryptSecret(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), data].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

/** Throws when the stored value was made under another key or altered (GCM authenticates it). */
export function decryptSecret(key: Buffer, stored: string): string {
  const [version, iv, tag, data] = stored.split('.');
  if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('the stored secret is not in a known format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('the stored secret cannot be decrypted with this VOUCH_ENCRYPTION_KEY (was it made under another key?)');
  }
}

/** During a key change: the secret under `key`, or else under `previous` (not yet re-encrypted by `vouch keys rotate`). */
export function decryptSecretWithEither(key: Buffer, previous: Buffer, stored: string): string {
  try {
    return decryptSecret(key, stored);
  } catch {
    return decryptSecret(previous, stored);
  }
}

/** A key for one purpose derived from the installation key, so no two uses share key material. */
export function deriveKey(key: Buffer, purpose: string): Buffer {
  return createHmac('sha256', key).update(`vouch:${purpose}`).digest();
}

/**
 * The installation's key: VOUCH_ENCRYPTION_KEY when set; on the embedded database the key in the
 * data folder, made (0600) on first use when `create` allows it; otherwise undefined. A shared
 * PostgreSQL has no folder every process sees, so there the operator must set the variable.
 */
export function loadEncryptionKey(config: Pick<Config, 'encryptionKey' | 'databaseUrl' | 'dataDir'>, { create }: { create: boolean }): Buffer | undefined {
  if (config.encryptionKey) return config.encryptionKey;
  if (config.databaseUrl) return undefined;
  const file = path.join(config.dataDir, KEY_FILE);
  try {
    return parseKeyFile(fs.readFileSync(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !create) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    // `wx`: two first uses at once keep one key, the other reads it back.
    fs.writeFileSync(file, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return parseKeyFile(fs.readFileSync(file, 'utf8'), file);
  }
}

function parseKeyFile(text: string, file: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
}
