import { InvalidArgumentError, type CommanderError } from 'commander';
import type { Kysely } from 'kysely';
import { loadConfig, type Config } from '../config.js';
import { DataKeyError } from '../platform/crypto/keyring.js';
import { NoKeyringError } from '../platform/crypto/fields.js';
import { openKeyringIfConfigured } from '../platform/crypto/open.js';
import type { Database } from '../platform/db/database.js';
import type { DB } from '../platform/db/schema.js';
import { EncryptionKeyMissingError } from '../platform/encryption.js';
import { migrate } from '../platform/db/migrate.js';
import { isNotFound, notFound } from '../platform/not-found.js';
import { hostedRun, writeOut } from './hosted.js';
import { openConfiguredDatabase } from '../platform/db/open.js';

/** What every module's CLI commands stand on: output, argument parsers, the database. */

/** A failure the user can act on: printed as one line, exit code 1 (3 when it is marked not found). */
export class CliError extends Error {}

/** A module's own refusal as the CLI's one line, keeping whether it means "not found". */
export function cliError(err: Error): CliError {
  const cli = new CliError(err.message);
  return isNotFound(err) ? notFound(cli) : cli;
}

/**
 * Commander's own parse errors (unknown command or option, missing argument, bad value) read
 * "error: unknown option '--jsn'\n(Did you mean --json?)"; the CLI prints every failure as one
 * line after "vouch: ", so this is the reason without the prefix, on one line.
 */
export function usageReason(err: CommanderError): string {
  return err.message.replace(/^error:\s*/, '').replace(/\s*\n\s*/g, ' ').trim();
}

/** What commander stops on after printing what was asked (help, version): no failure to report. */
export function isHelpOrVersion(err: CommanderError): boolean {
  return err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version';
}

export function print(json: boolean, data: unknown, human: string): void {
  writeOut(json ? `${JSON.stringify(data)}\n` : `${human}\n`);
}

export function choice<T extends string>(name: string, allowed: readonly T[]) {
  return (value: string): T => {
    const upper = value.toUpperCase() as T;
    const found = allowed.find((option) => option === upper || option === value);
    if (!found) throw new InvalidArgumentError(`${name} must be one of ${allowed.join(', ')}`);
    return found;
  };
}

export function kobo(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError('must be a whole number of kobo (₦1 = 100 kobo)');
  }
  return Number(value);
}

/** A key problem (missing, wrong, unknown data key) as the one line the CLI prints; other errors as they are. */
export function asCliError(err: unknown): unknown {
  if (err instanceof EncryptionKeyMissingError || err instanceof NoKeyringError || err instanceof DataKeyError) return new CliError(err.message);
  return err;
}

/**
 * Opens and migrates the configured database, loads its keyring when a key is configured (a
 * command that then touches personal data without one fails with the line saying to set
 * VOUCH_ENCRYPTION_KEY), runs `work`, and always closes it. The embedded database opens with a
 * command's smaller buffer cache unless `wholeTables` says the command goes through whole tables.
 */
export async function withDatabase<T>(work: (database: Database, config: Config) => Promise<T>, { wholeTables = false } = {}): Promise<T> {
  const config = loadConfig();
  const run = async (database: Database) => work(database, await withServerUrl(database.db, config));
  // Inside the running server (src/cli/hosted.ts): its database, migrated and with its keys, stays open.
  const hosted = hostedRun();
  if (hosted) {
    try {
      return await run(hosted.database);
    } catch (err) {
      throw asCliError(err);
    }
  }
  const database = await openConfiguredDatabase(config, { command: !wholeTables });
  try {
    await migrate(database.db);
    await openKeyringIfConfigured(database, config);
    return await run(database);
  } catch (err) {
    throw asCliError(err);
  } finally {
    await database.close();
  }
}

/**
 * Links a command prints (invitations, tasks) are the server's: its recorded public URL, unless
 * this command was given a PUBLIC_URL of its own.
 */
async function withServerUrl(db: Kysely<DB>, config: Config): Promise<Config> {
  const publicUrl = process.env.PUBLIC_URL ? undefined : await serverPublicUrl(db);
  return publicUrl ? { ...config, publicUrl } : config;
}

/** The settings row in which a server keeps the public URL it serves at (its links' base). */
const SERVER_PUBLIC_URL = 'server_public_url';

/** Records the public URL a starting server serves at, for the commands run beside it. */
export async function recordServerPublicUrl(db: Kysely<DB>, publicUrl: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ name: SERVER_PUBLIC_URL, value: publicUrl })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: publicUrl }))
    .execute();
}

/** The public URL the last server started on this database serves at, if one has started. */
async function serverPublicUrl(db: Kysely<DB>): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('name', '=', SERVER_PUBLIC_URL).executeTakeFirst();
  return row?.value;
}
