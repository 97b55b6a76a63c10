import { createHash } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { addressIdentityIndex } from '../../src/platform/crypto/fields.js';
import type { Keyring } from '../../src/platform/crypto/keyring.js';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { openDatabase } from '../../src/platform/db/database.js';

/**
 * Rows written by SQL as Vouch itself stores them: every personal column encrypted under the
 * database's data key (`vx1:` values, json columns as a JSON string of the ciphertext), the
 * address-by-identity key a blind index. A section that wrote them in clear would measure
 * `vouch serve` encrypting them in the background at start (src/platform/crypto/seal.ts), not the
 * endpoint. The keys come from VOUCH_ENCRYPTION_KEY, which bench/run.ts sets for every process.
 */
export interface Sealer {
  /** The stored form of a json column's value. */
  json(value: unknown): string;
  /** The stored form of a text column's value (numbers come back as numbers). */
  value(value: string | number): string;
  /** The stored address-by-identity key of an applicant's ID (src/addresses/input.ts identityKey). */
  identityIndex(idClass: string, idNumber: string): string;
  keyring: Keyring;
}

/** Loads (or makes, on a new database) the data keys, then runs `work` with a sealer under them. */
export async function withSealer<T>(databaseUrl: string, work: (sealer: Sealer) => Promise<T>): Promise<T> {
  const database = await openDatabase({ url: databaseUrl, poolSize: 1 });
  try {
    const keyring = await openKeyring(database, loadConfig());
    const { protection } = database;
    return await work({
      json: (value) => protection.protect('json', value) as string,
      value: (value) => protection.protect('value', value) as string,
      identityIndex: (idClass, idNumber) => addressIdentityIndex(keyring, createHash('sha256').update(`${idClass}:${idNumber}`).digest('hex')),
      keyring,
    });
  } finally {
    database.protection.keyring?.close();
    await database.close();
  }
}

/**
 * Inserts `count` rows numbered 1..count in batches: `columns(g)` gives a row's values (the
 * personal ones already sealed), `statement` is an INSERT ... SELECT over
 * `unnest($1::int[], $2::text[], ...) as s(g, <names>)` with the names in `names`' order. The
 * next batch is encrypted while PostgreSQL writes the last.
 */
export async function insertInBatches(
  databaseUrl: string,
  count: number,
  names: readonly string[],
  columns: (g: number) => (string | null)[],
  statement: (unnest: string) => string,
  params: unknown[] = [],
  batchSize = 5_000,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const offset = params.length;
    const unnest = `unnest($${offset + 1}::int[], ${names.map((_, i) => `$${offset + i + 2}::text[]`).join(', ')}) as s(g, ${names.join(', ')})`;
    const text = statement(unnest);
    let pending: Promise<unknown> = Promise.resolve();
    for (let start = 1; start <= count; start += batchSize) {
      const end = Math.min(count, start + batchSize - 1);
      const seqs: number[] = [];
      const values: (string | null)[][] = names.map(() => []);
      for (let g = start; g <= end; g++) {
        seqs.push(g);
        const row = columns(g);
        for (let i = 0; i < names.length; i++) values[i]!.push(row[i] ?? null);
      }
      await pending;
      pending = client.query(text, [...params, seqs, ...values]);
    }
    await pending;
  } finally {
    await client.end();
  }
}
