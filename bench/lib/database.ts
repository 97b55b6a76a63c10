import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { deferCleanup } from './cleanup.js';
import { BenchError } from './errors.js';

export const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** The URL as it may be printed: without its password. */
export function displayUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

async function withClient<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (err) {
    throw new BenchError(`PostgreSQL is unreachable at ${displayUrl(serverUrl)} (${(err as Error).message}); start it or set DATABASE_URL`);
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function assertPostgresReachable(serverUrl: string): Promise<void> {
  await withClient(serverUrl, (client) => client.query('select 1'));
}

/**
 * Creates an empty database on the server of `serverUrl`, hands `work` its URL, and drops it
 * afterwards — also when `work` fails or the run is interrupted.
 */
export async function withThrowawayDatabase<T>(serverUrl: string, work: (databaseUrl: string) => Promise<T>): Promise<T> {
  const name = `vouch_bench_${randomBytes(6).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`create database ${name}`));
  const drop = deferCleanup(() => withClient(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined));
  try {
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return await work(url.toString());
  } finally {
    await drop();
  }
}

/**
 * Writes out what a seed left in memory before a section measures: a million rows' worth of WAL
 * starts a checkpoint that PostgreSQL spreads over the next minutes, writing the seed's pages
 * beside the measured runs (docs/benchmarks.md, ninth session). A role that may not run
 * CHECKPOINT (superuser or pg_checkpoint) measures without it, and says so.
 */
export async function checkpointAfterSeed(client: pg.Client): Promise<void> {
  try {
    await client.query('checkpoint');
  } catch (err) {
    process.stderr.write(`bench: could not run CHECKPOINT after the seed (${(err as Error).message}); measuring with the seed's writes still pending\n`);
  }
}
