import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes, randomFillSync, type KeyObject } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { LoopLoad } from '../loop-load.js';
import { DecryptionThread, type ThreadKey } from './decryption-thread.js';
import './tables.js';

/**
 * Envelope encryption of personal data (docs/data-protection.md).
 *
 * - The key-encryption key (KEK) is VOUCH_ENCRYPTION_KEY, or the embedded default's key file in
 *   the data folder. It never touches data: it only wraps the data keys. During a KEK change the
 *   old one is VOUCH_ENCRYPTION_KEY_PREVIOUS until `vouch keys rotate` has re-wrapped every key.
 * - Data keys (DEKs) are random, stored wrapped in `data_keys`, unwrapped once per process and
 *   kept in memory: a value costs one AES-256-GCM operation, never a KEK operation.
 * - A value is stored as `vx1:<key id>:<base64url(iv | ciphertext | tag)>`, so values under
 *   every key ever active coexist and rotation needs no downtime.
 * - The blind index key (purpose `index`) makes HMAC-SHA-256 lookup keys of identity numbers,
 *   phones and emails. It is never rotated (every index would change); a KEK change re-wraps it.
 */

export const ENVELOPE_PREFIX = 'vx1:';
const FILE_MAGIC = Buffer.from('VXF1', 'latin1');
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ID_LENGTH = 8;
/**
 * From this many values up, `decryptJsonMany` opens them on the decryption thread: a list page (about
 * a hundred) goes there, a lookup's record or a session's few fields stay on the caller's thread,
 * where they cost less than the two messages would (docs/data-protection.md).
 */
export const BULK_DECRYPTION = 24;

/**
 * When `decryptJsonMany` sends a page to the decryption thread: `true` always, `false` never,
 * `'when-busy'` while this thread's event loop is busy (src/platform/loop-load.ts).
 */
export type DecryptionThreadUse = boolean | 'when-busy';

/**
 * The decryption thread's use on a machine with `cores` cores:
 * - more than 2: always. The thread keeps a page's opening off the event loop (tenth session).
 * - 2: only while the event loop is busy. A message to the thread and its answer wake a second
 *   thread, which on two cores waits for a core that the event loop or the database (often on the
 *   same machine) is using. At 500 requests/s on a machine where that left the loop half idle,
 *   opening in line took 15 % less CPU per request, with the same p99 (twelfth session). On a
 *   machine where the same rate kept the loop busy nine tenths of the time, opening in line
 *   queued every request behind the loop, and the thread, taking the opening (40 % of a list's
 *   work) to the other core, halved the p99 at that rate or better (docs/benchmarks.md, fourteenth
 *   session).
 * - 1: never; there is no other core.
 */
export function decryptionThreadUse(cores: number = availableParallelism()): DecryptionThreadUse {
  if (cores > 2) return true;
  return cores === 2 ? 'when-busy' : false;
}

/** A key-encryption key and its fingerprint (what `data_keys.kek_id` names). */
export interface Kek {
  id: string;
  key: Buffer;
}

export function kekOf(key: Buffer): Kek {
  if (key.length !== 32) throw new Error('a key-encryption key is 32 bytes');
  return { id: createHmac('sha256', key).update('vouch:kek-id').digest('hex').slice(0, 16), key };
}

/** Raised when a value or file names a data key this process does not hold. */
export class DataKeyError extends Error {
  override name = 'DataKeyError';
}

interface DataKey {
  id: string;
  purpose: 'data' | 'index';
  key: Buffer;
  /**
   * The same key as a KeyObject, made once: a cipher made from it skips copying and checking the
   * key bytes, about 5 % of opening a value (docs/benchmarks.md, fourteenth session).
   */
  secret: KeyObject;
  /** The additional data every value under this key is bound to (its id), made once. */
  aad: Buffer;
  kekId: string;
  createdAt: Date;
  activatesAt: Date;
}

export interface KeyringOptions {
  /** The current KEK (wraps new keys) and, during a KEK change, the previous one. */
  kek: Kek;
  previousKek?: Kek | undefined;
  /** When to open many values at once on the decryption thread (default: `decryptionThreadUse()` on this machine). */
  decryptionThread?: DecryptionThreadUse;
  /** What `'when-busy'` reads (default: this thread's event loop; tests give a scripted one). */
  loopLoad?: LoopLoad;
}

export interface DataKeyInfo {
  id: string;
  purpose: 'data' | 'index';
  kekId: string;
  createdAt: string;
  activatesAt: string;
  active: boolean;
}

export interface RotationResult {
  /** The new data key, active from `activatesAt`. */
  created: string;
  activatesAt: string;
  /** Keys re-wrapped under the current KEK (those that were under the previous one). */
  rewrapped: string[];
  kekId: string;
}

function wrapAad(id: string, purpose: string): Buffer {
  return Buffer.from(`vouch:data-key:${id}:${purpose}`);
}

/**
 * IVs are random (96 bits, NIST SP 800-38D 8.2.2), taken from a pool the CSPRNG fills 4 KB at a
 * time: one call into it per 341 values instead of one per value (about 1.9 µs each, 15 % of a
 * registry import's CPU). A used pool is dropped, never refilled in place, so no IV is handed out
 * twice; each process (and worker thread) has its own.
 */
const IV_POOL_BYTES = 4096;
let ivPool = Buffer.alloc(0);
let ivTaken = 0;

function nextIv(): Buffer {
  if (ivTaken + IV_BYTES > ivPool.length) {
    ivPool = randomFillSync(Buffer.allocUnsafe(IV_POOL_BYTES));
    ivTaken = 0;
  }
  const iv = ivPool.subarray(ivTaken, ivTaken + IV_BYTES);
  ivTaken += IV_BYTES;
  return iv;
}

function seal(key: Buffer | KeyObject, plain: Buffer, aad: Buffer): Buffer {
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const data = cipher.update(plain);
  const final = cipher.final();
  return Buffer.concat([iv, data, final, cipher.getAuthTag()]);
}

function open(key: Buffer | KeyObject, sealed: Buffer, aad: Buffer): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new DataKeyError('the encrypted value is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  const data = decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES));
  // GCM returns everything from update(); final() only checks the tag (and throws when it fails).
  const rest = decipher.final();
  return rest.length === 0 ? data : Buffer.concat([data, rest]);
}

/** The data key id a stored value names, or undefined when it is not a value this module made. */
export function envelopeKeyId(value: string): string | undefined {
  if (!value.startsWith(ENVELOPE_PREFIX) || value.charCodeAt(ENVELOPE_PREFIX.length + ID_LENGTH) !== 58) return undefined;
  return value.slice(ENVELOPE_PREFIX.length, ENVELOPE_PREFIX.length + ID_LENGTH);
}

export class Keyring {
  private keys = new Map<string, DataKey>();
  private dataKeys: DataKey[] = [];
  private indexKey: Buffer | undefined;
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Bumped at every load: the decryption thread is sent the keys again when it holds an older set. */
  private version = 0;
  private readonly thread = new DecryptionThread({ prefix: ENVELOPE_PREFIX, idLength: ID_LENGTH });
  /** When `decryptJsonMany` sends many values to the thread (KeyringOptions.decryptionThread). */
  private readonly threadUse: DecryptionThreadUse;
  /** Read only with `'when-busy'`. */
  private readonly loop: LoopLoad;

  private constructor(
    private readonly db: Kysely<DB>,
    readonly options: KeyringOptions,
  ) {
    this.threadUse = options.decryptionThread ?? decryptionThreadUse();
    this.loop = options.loopLoad ?? new LoopLoad();
  }

  /**
   * Loads and unwraps every data key, making the first data key and the index key on a new
   * database. Fails when a key is wrapped by a KEK this process was not given (the message says
   * which fingerprint it needs): data is never written under a second, divergent key set.
   */
  static async open(db: Kysely<DB>, options: KeyringOptions): Promise<Keyring> {
    const keyring = new Keyring(db, options);
    await keyring.load();
    if (!keyring.indexKey || keyring.dataKeys.length === 0) {
      await db.transaction().execute(async (trx) => {
        // Two processes starting on a new database at once make one set of keys.
        await sql`lock table data_keys in share row exclusive mode`.execute(trx);
        const rows = await trx.selectFrom('data_keys').select(['purpose']).execute();
        if (!rows.some((row) => row.purpose === 'index')) await keyring.insertKey(trx, 'index', new Date(0));
        if (!rows.some((row) => row.purpose === 'data')) await keyring.insertKey(trx, 'data', new Date(0));
      });
      await keyring.load();
    }
    return keyring;
  }

  get kekId(): string {
    return this.options.kek.id;
  }

  /**
   * Re-reads `data_keys` every `ms` (PostgreSQL: another process may rotate). A rotation
   * activates its key later than that, so every process holds it before anyone writes with it.
   */
  poll(ms: number): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.refresh().catch(() => {}), ms);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.thread.close();
  }

  /** Loads keys added since (a rotation elsewhere). Concurrent calls share one read. */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async load(): Promise<void> {
    const rows = await this.db.selectFrom('data_keys').select(['id', 'purpose', 'wrapped', 'kek_id', 'created_at', 'activates_at']).execute();
    const loaded = new Map<string, DataKey>();
    for (const row of rows) {
      const known = this.keys.get(row.id);
      if (known && known.kekId === row.kek_id) {
        loaded.set(row.id, { ...known, activatesAt: row.activates_at });
        continue;
      }
      const kek = this.kekNamed(row.kek_id);
      if (!kek) {
        throw new DataKeyError(
          `data key ${row.id} is wrapped by the key-encryption key ${row.kek_id}, which is neither VOUCH_ENCRYPTION_KEY (${this.options.kek.id})` +
            `${this.options.previousKek ? ` nor VOUCH_ENCRYPTION_KEY_PREVIOUS (${this.options.previousKek.id})` : ''}: set the key this database was encrypted with`,
        );
      }
      let key: Buffer;
      try {
        key = open(kek.key, Buffer.from(row.wrapped, 'base64url'), wrapAad(row.id, row.purpose));
      } catch {
        throw new DataKeyError(`data key ${row.id} cannot be unwrapped with the key-encryption key ${kek.id}: the stored key was altered`);
      }
      loaded.set(row.id, { id: row.id, purpose: row.purpose, key, secret: createSecretKey(key), aad: Buffer.from(row.id), kekId: row.kek_id, createdAt: row.created_at, activatesAt: row.activates_at });
    }
    // Replaced whole: a reader never sees half a refresh.
    this.keys = loaded;
    this.version += 1;
    const all = [...loaded.values()];
    this.dataKeys = all.filter((key) => key.purpose === 'data').sort((a, b) => b.activatesAt.getTime() - a.activatesAt.getTime() || b.createdAt.getTime() - a.createdAt.getTime());
    this.indexKey = all.find((key) => key.purpose === 'index')?.key;
  }

  private kekNamed(id: string): Kek | undefined {
    if (id === this.options.kek.id) return this.options.kek;
    if (id === this.options.previousKek?.id) return this.options.previousKek;
    return undefined;
  }

  private async insertKey(db: Kysely<DB>, purpose: 'data' | 'index', activatesAt: Date): Promise<string> {
    for (;;) {
      const id = randomBytes(ID_LENGTH / 2).toString('hex');
      const key = randomBytes(32);
      const wrapped = seal(this.options.kek.key, key, wrapAad(id, purpose)).toString('base64url');
      const inserted = await db
        .insertInto('data_keys')
        .values({ id, purpose, wrapped, kek_id: this.options.kek.id, activates_at: activatesAt })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (inserted) return id;
    }
  }

  /** The data key new values are written under: the newest whose activation time has passed. */
  activeKeyId(now = Date.now()): string {
    return this.active(now).id;
  }

  private active(now = Date.now()): DataKey {
    for (const key of this.dataKeys) if (key.activatesAt.getTime() <= now) return key;
    const oldest = this.dataKeys[this.dataKeys.length - 1];
    if (!oldest) throw new DataKeyError('no data key is loaded');
    return oldest;
  }

  private dataKey(id: string): DataKey {
    const key = this.keys.get(id);
    if (!key || key.purpose !== 'data') {
      // Made by another process after this one loaded its keys: read it for the next call.
      void this.refresh().catch(() => {});
      throw new DataKeyError(`data key ${id} is not known to this process yet; retry shortly`);
    }
    return key;
  }

  /** `plain` encrypted under the active data key, as a `vx1:` value. */
  encrypt(plain: string): string {
    const key = this.active();
    return `${ENVELOPE_PREFIX}${key.id}:${seal(key.secret, Buffer.from(plain, 'utf8'), key.aad).toString('base64url')}`;
  }

  decrypt(value: string): string {
    const id = envelopeKeyId(value);
    if (!id) throw new DataKeyError('the stored value is not an encrypted value');
    const key = this.dataKey(id);
    try {
      return open(key.secret, Buffer.from(value.slice(ENVELOPE_PREFIX.length + ID_LENGTH + 1), 'base64url'), key.aad).toString('utf8');
    } catch {
      throw new DataKeyError(`a value under data key ${id} fails authentication: it was altered`);
    }
  }

  /**
   * `JSON.parse(decrypt(value))` of every value, in order (what the field protection stores is
   * JSON). From BULK_DECRYPTION values up the work runs on the decryption thread when it pays
   * (`decryptionThreadUse`, src/platform/crypto/decryption-thread.ts); a value it did not open is
   * opened here, so the results and the errors are those of one at a time either way.
   */
  async decryptJsonMany(values: readonly string[]): Promise<unknown[]> {
    const one = (value: string): unknown => JSON.parse(this.decrypt(value));
    if (values.length < BULK_DECRYPTION || !this.onThreadNow() || values.some((value) => value.includes('\n'))) return values.map(one);
    const opened = await this.thread.open(values, this.version, () => this.threadKeys());
    if (!opened) return values.map(one);
    const parsed = JSON.parse(opened.json) as unknown[];
    for (const i of opened.failed) parsed[i] = one(values[i]!);
    return parsed;
  }

  private onThreadNow(): boolean {
    return this.threadUse === 'when-busy' ? this.loop.isBusy() : this.threadUse;
  }

  private threadKeys(): ThreadKey[] {
    return this.dataKeys.map((key) => ({ id: key.id, key: key.key, aad: key.aad }));
  }

  /** File bytes encrypted under the active data key; `name` (the file id) is bound to them. */
  encryptBytes(plain: Buffer, name: string): Buffer {
    const key = this.active();
    return Buffer.concat([FILE_MAGIC, Buffer.from(key.id, 'latin1'), seal(key.secret, plain, Buffer.from(`${key.id}:${name}`))]);
  }

  /** Whether stored file bytes are encrypted (files written before encryption are not). */
  static isEncryptedFile(bytes: Buffer): boolean {
    return bytes.length > FILE_MAGIC.length + ID_LENGTH && bytes.subarray(0, FILE_MAGIC.length).equals(FILE_MAGIC);
  }

  decryptBytes(stored: Buffer, name: string): Buffer {
    if (!Keyring.isEncryptedFile(stored)) throw new DataKeyError('the stored file is not encrypted');
    const id = stored.toString('latin1', FILE_MAGIC.length, FILE_MAGIC.length + ID_LENGTH);
    const key = this.dataKey(id);
    try {
      return open(key.secret, stored.subarray(FILE_MAGIC.length + ID_LENGTH), Buffer.from(`${id}:${name}`));
    } catch {
      throw new DataKeyError(`a file under data key ${id} fails authentication: it was altered or belongs to another id`);
    }
  }

  /** The data key id stored file bytes name. */
  static fileKeyId(stored: Buffer): string | undefined {
    return Keyring.isEncryptedFile(stored) ? stored.toString('latin1', FILE_MAGIC.length, FILE_MAGIC.length + ID_LENGTH) : undefined;
  }

  /**
   * The blind index of `value` in `domain` ("bvn", "phone", "email", ...): HMAC-SHA-256 under the
   * index key, hex. The caller normalises the value (the same number must give the same index).
   */
  blindIndex(domain: string, value: string): string {
    if (!this.indexKey) throw new DataKeyError('no blind index key is loaded');
    return createHmac('sha256', this.indexKey).update(`${domain}\0${value}`).digest('hex');
  }

  /** What `vouch keys status` shows. */
  describe(now = Date.now()): DataKeyInfo[] {
    const active = this.dataKeys.length > 0 ? this.active(now).id : undefined;
    return [...this.keys.values()]
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .map((key) => ({
        id: key.id,
        purpose: key.purpose,
        kekId: key.kekId,
        createdAt: key.createdAt.toISOString(),
        activatesAt: key.activatesAt.toISOString(),
        active: key.id === active,
      }));
  }

  /**
   * `vouch keys rotate`: a new data key, active after `activateAfterMs` (so every process
   * polling `data_keys` holds it before anyone writes with it), and every key wrapped by the
   * previous KEK re-wrapped by the current one, all in one transaction. Old data keys stay: the
   * values under them keep reading, and `reencrypt` moves them to the new key.
   */
  async rotate(activateAfterMs: number): Promise<RotationResult> {
    const activatesAt = new Date(Date.now() + activateAfterMs);
    const result = await this.db.transaction().execute(async (trx) => {
      await sql`lock table data_keys in share row exclusive mode`.execute(trx);
      const created = await this.insertKey(trx, 'data', activatesAt);
      const rewrapped: string[] = [];
      const rows = await trx.selectFrom('data_keys').select(['id', 'purpose', 'wrapped', 'kek_id']).where('kek_id', '<>', this.options.kek.id).execute();
      for (const row of rows) {
        const kek = this.kekNamed(row.kek_id);
        if (!kek) throw new DataKeyError(`data key ${row.id} is wrapped by the key-encryption key ${row.kek_id}, which this process was not given: set VOUCH_ENCRYPTION_KEY_PREVIOUS to it`);
        const key = open(kek.key, Buffer.from(row.wrapped, 'base64url'), wrapAad(row.id, row.purpose));
        const wrapped = seal(this.options.kek.key, key, wrapAad(row.id, row.purpose)).toString('base64url');
        await trx.updateTable('data_keys').set({ wrapped, kek_id: this.options.kek.id }).where('id', '=', row.id).execute();
        rewrapped.push(row.id);
      }
      return { created, rewrapped };
    });
    await this.load();
    return { ...result, activatesAt: activatesAt.toISOString(), kekId: this.options.kek.id };
  }
}
