/** The `vouch` command line: its commands, and how a run ends (output, failures, exit codes). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { AccountError, AccountsService, PAYLOAD_TYPES, RISK_LEVELS } from '../accounts/service.js';
import { registerAccessLogCommands } from '../access-log/cli.js';
import { registerAgentCommands } from '../agents/cli.js';
import { registerBackupCommands } from './backup.js';
import { registerOperatorCommands } from '../console/cli.js';
import { choice, CliError, isHelpOrVersion, kobo, print, usageReason, withDatabase } from './support.js';
import { ConfigError, loadConfig } from '../config.js';
import { ApiError } from '../platform/errors.js';
import { isNotFound } from '../platform/not-found.js';
import { cliAccessRequests, registerAccessCommands } from '../portal/access/cli.js';
import { changePrice, validatePrice } from '../portal/billing/checks.js';
import { priceList } from '../portal/billing/service.js';
import { registerFundingCommands, registerMailCommands, registerPersonCommands } from '../portal/cli.js';
import { registerLivenessCommands } from '../identities/liveness/cli.js';
import { registerRegistryCommands } from '../identities/registry/cli.js';
import { registerKeyCommands } from '../platform/crypto/cli.js';
import { registerPrivacyCommands } from '../privacy/cli.js';
import { migrate } from '../platform/db/migrate.js';
import { DatabaseUnavailableError, DataDirInUseError, openConfiguredDatabase } from '../platform/db/open.js';
import type { Mode, PayloadType, RiskLevel } from '../platform/db/schema.js';
import { registerOutboxCommands } from '../respondents/cli.js';
import { registerWebhookCommands } from '../webhooks/cli.js';
import { registerUpstreamCommands } from '../identities/upstreams/cli.js';
import { registerListCommands } from '../screening/lists/cli.js';
import { hostedRun, refusedInServer, sendToServer, takeExitCode, writeErr, writeOut } from './hosted.js';

/**
 * The package's version: the nearest package.json named vouch above this module (src/ and dist/
 * sit beside it; a test build deeper down, an installed package in node_modules/vouch).
 */
function packageVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'vouch' && pkg.version) return pkg.version;
    } catch {
      // No package.json here, or not one we can read: look further up.
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}

function orgSummary(org: { id: string; name: string; riskLevel: string; payloadType: string; enabled: boolean; balance: number }) {
  return `${org.id}  ${org.name}  risk=${org.riskLevel} payload=${org.payloadType} enabled=${org.enabled} balance=${org.balance} kobo`;
}

export function buildCli(): Command {
  const program = new Command('vouch')
    .description('Vouch: identity and field verification service for Nigeria')
    // Commander's parse errors are thrown (and inherited by every subcommand made below) so that
    // they are reported like any other failure: one "vouch: ..." line, exit code 2 (a usage error).
    .configureOutput({ outputError: () => undefined, writeOut: (text) => writeOut(text), writeErr: (text) => writeErr(text) })
    .exitOverride()
    .version(packageVersion(), '-V, --version', 'print the version');

  // The server, the worker and the face model's samples load only for the commands that use
  // them: every other command starts in a fraction of the time.
  program
    .command('serve')
    .description('run the API (what `npm start` runs) and, unless VOUCH_WORKER=off, the worker')
    .action(async () => (await import('../serve.js')).serve());
  program
    .command('worker')
    .description('run only the background worker (webhook deliveries); beside `serve` it needs PostgreSQL')
    .action(async () => (await import('../worker.js')).runWorkerProcess());

  program
    .command('migrate')
    .description('apply database migrations')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = loadConfig();
      const database = await openConfiguredDatabase(config, { command: true });
      try {
        const applied = await migrate(database.db);
        print(!!opts.json, { applied }, applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await database.close();
      }
    });

  const org = program.command('org').description('manage organizations (tenants)');
  org
    .command('create')
    .description('create an organization; prints its test and live secrets, once')
    .requiredOption('--name <name>', 'organization name')
    .option('--email <email>', 'contact email')
    .option('--risk-level <level>', `one of ${RISK_LEVELS.join(', ')}`, choice('risk level', RISK_LEVELS))
    .option('--payload-type <type>', `one of ${PAYLOAD_TYPES.join(', ')}`, choice('payload type', PAYLOAD_TYPES))
    .option('--enable', 'grant API access (live mode) now')
    .option('--fund <kobo>', 'initial wallet credit in kobo', kobo)
    .option('--json', 'print JSON')
    .action(async (opts: { name: string; email?: string; riskLevel?: RiskLevel; payloadType?: PayloadType; enable?: boolean; fund?: number; json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const created = await new AccountsService(db).create({
          name: opts.name,
          email: opts.email,
          riskLevel: opts.riskLevel,
          payloadType: opts.payloadType,
          enabled: !!opts.enable,
          fund: opts.fund,
        });
        const { email: _email, ...shown } = created;
        print(!!opts.json, shown, `${orgSummary(created)}\ntest secret: ${created.testSecret}\nlive secret: ${created.liveSecret}\n(the secrets are shown only now)`);
      });
    });
  org
    .command('list')
    .description('every organization: id, name, risk level, payload type, access and balance, oldest first')
    .option('--json', 'print JSON (an array)')
    .action(async (opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const all = await new AccountsService(db).list();
        print(!!opts.json, all, all.length ? all.map(orgSummary).join('\n') : 'no organizations yet: vouch org create --name NAME');
      });
    });
  org
    .command('show <id>')
    .description('an organization: name, risk level, payload type, access and balance')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const found = await new AccountsService(db).get(id);
        print(!!opts.json, found, orgSummary(found));
      });
    });
  org
    .command('enable <id>')
    .description('grant API access with a risk level and a NIN payload type')
    .requiredOption('--risk-level <level>', `one of ${RISK_LEVELS.join(', ')}`, choice('risk level', RISK_LEVELS))
    .requiredOption('--payload-type <type>', `one of ${PAYLOAD_TYPES.join(', ')}`, choice('payload type', PAYLOAD_TYPES))
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { riskLevel: RiskLevel; payloadType: PayloadType; json?: boolean }) => {
      await withDatabase(async ({ db }, config) => {
        const accounts = new AccountsService(db);
        await accounts.get(id);
        // Approves the organization's pending access request from the portal, if it has one, and mails the member who asked.
        const { requests, finish } = cliAccessRequests(db, config);
        await requests.approve(id, { riskLevel: opts.riskLevel, payloadType: opts.payloadType }, { kind: 'cli' });
        await finish();
        const enabled = await accounts.get(id);
        print(!!opts.json, enabled, orgSummary(enabled));
      });
    });
  org
    .command('decline <id>')
    .description("decline the organization's pending request for API access, with a reason the customer sees")
    .requiredOption('--reason <text>', 'why, in words for the customer')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { reason: string; json?: boolean }) => {
      await withDatabase(async ({ db }, config) => {
        await new AccountsService(db).get(id);
        const { requests, finish } = cliAccessRequests(db, config);
        const requestId = await requests.decline(id, opts.reason, { kind: 'cli' });
        await finish();
        print(!!opts.json, { id, requestId, status: 'declined' }, `declined access request ${requestId}`);
      });
    });
  org
    .command('fund')
    .description('credit the wallet (kobo)')
    .argument('<id>')
    .argument('<kobo>', 'amount in kobo', kobo)
    .option('--json', 'print JSON')
    .action(async (id: string, amount: number, opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const funded = await new AccountsService(db).fund(id, amount);
        print(!!opts.json, funded, orgSummary(funded));
      });
    });
  org
    .command('rate-limit')
    .description("set the organization's requests per minute for each of its secrets, or `default` for the server's (VOUCH_RATE_LIMIT)")
    .argument('<id>')
    .argument('<perMinute>', 'requests per minute, or default')
    .option('--json', 'print JSON')
    .action(async (id: string, perMinute: string, opts: { json?: boolean }) => {
      const value = perMinute === 'default' ? null : /^\d+$/.test(perMinute) ? Number(perMinute) : Number.NaN;
      if (Number.isNaN(value)) throw new CliError(`perMinute must be a whole number of requests per minute or "default", got "${perMinute}"`);
      await withDatabase(async ({ db }) => {
        const result = await new AccountsService(db).setRateLimit(id, value);
        print(!!opts.json, result, `${id}: ${result.rateLimitPerMinute === null ? 'the default rate limit' : `${result.rateLimitPerMinute} requests a minute per secret`}`);
      });
    });
  org
    .command('rotate-secret <id>')
    .description('replace the test or live secret; the old one stops working at once')
    .requiredOption('--mode <mode>', 'test or live', choice('mode', ['test', 'live'] as const))
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { mode: Mode; json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const secret = await new AccountsService(db).rotateSecret(id, opts.mode);
        print(!!opts.json, { id, mode: opts.mode, secret }, `new ${opts.mode} secret: ${secret}\n(shown only now)`);
      });
    });

  const price = program.command('price').description('prices per verification type, in kobo');
  price
    .command('set')
    .description('set the price of a verification type, in kobo (audited)')
    .argument('<type>')
    .argument('<kobo>', 'price in kobo', kobo)
    .option('--json', 'print JSON')
    .action(async (type: string, amount: number, opts: { json?: boolean }) => {
      // Checked before the database opens; the console's Prices page sets prices through the same changePrice.
      validatePrice(type, amount);
      await withDatabase(async ({ db }) => {
        await changePrice(db, type, amount, { kind: 'cli' });
        print(!!opts.json, { type, price: amount }, `${type}: ${amount} kobo`);
      });
    });
  price
    .command('list')
    .description('the price in force of every verification type, in kobo')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const prices: Record<string, number> = {};
        for (const inForce of await priceList(db)) prices[inForce.type] = inForce.amount;
        print(!!opts.json, prices, Object.entries(prices).map(([t, p]) => `${t.padEnd(16)} ${p} kobo`).join('\n'));
      });
    });

  program
    .command('test-identities')
    .description('the fixed sandbox identity of every type, and the screening test subjects')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { loadTestIdentities } = await import('../identities/registry/test-identities.js');
      const { SANDBOX_TEST_SUBJECTS } = await import('../screening/sandbox/list.js');
      // Screening's fixed test subjects sit beside the identities (docs/screening.md, "Test mode").
      const { sandboxOutcomeTable } = await import('../identities/registry/sandbox-outcomes.js');
      // Magic numbers for the outcomes besides a match (docs/test-mode.md, "Every outcome"), under `outcomes`.
      const identities = { ...(await loadTestIdentities()), screening: SANDBOX_TEST_SUBJECTS, outcomes: sandboxOutcomeTable() };
      const human = Object.entries(identities)
        .map(([type, record]) => `${type}: ${JSON.stringify(record, (key, value) => (key === 'photo' ? '<image>' : value))}`)
        .join('\n');
      print(!!opts.json, identities, human);
    });

  registerRegistryCommands(program);
  registerWebhookCommands(program);
  registerAgentCommands(program);
  registerOutboxCommands(program);
  registerMailCommands(program);
  registerAccessCommands(program);
  registerFundingCommands(program);
  registerUpstreamCommands(program);
  registerListCommands(program);
  registerOperatorCommands(program);
  registerPersonCommands(program);
  registerKeyCommands(program);
  registerAccessLogCommands(program);
  registerPrivacyCommands(program);
  registerBackupCommands(program);
  registerLivenessCommands(program);

  return program;
}

/**
 * Exit codes (docs/cli.md, "Exit codes"): 0 done; 1 refused or failed; 2 a usage error (an
 * unknown command or option, a missing or bad argument, bad configuration in the environment);
 * 3 the thing named does not exist; 75 a temporary failure worth retrying as it is (the database
 * unreachable, the embedded data folder in use by a running server), as sysexits' EX_TEMPFAIL.
 */
export const EXIT_CODES = { failed: 1, usage: 2, notFound: 3, temporary: 75 } as const;
type Failure = keyof typeof EXIT_CODES;

/** Network errors of a database client: the server is down or unreachable, not the command wrong. */
const TEMPORARY_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P03', '53300']);

function failureOf(err: unknown): Failure {
  if (err instanceof CommanderError || err instanceof ConfigError) return 'usage';
  if (isNotFound(err)) return 'notFound';
  if (err instanceof DatabaseUnavailableError || TEMPORARY_CODES.has(String((err as { code?: unknown } | null)?.code))) return 'temporary';
  return 'failed';
}

function describeError(err: unknown): string {
  if (err instanceof CommanderError) return usageReason(err);
  if (err instanceof ConfigError) return `invalid configuration: ${err.message}`;
  if (err instanceof CliError || err instanceof AccountError || err instanceof ApiError || err instanceof DatabaseUnavailableError) return err.message;
  if (err instanceof RangeError) return err.message;
  return `unexpected error: ${(err as Error)?.message ?? String(err)}`;
}

/** Writes a failure as the CLI reports one and returns its exit code. */
function report(err: unknown, args: string[]): number {
  const failure = failureOf(err);
  const message = describeError(err);
  // With --json, the failure is JSON too (on stderr, so stdout stays the command's answer or nothing).
  const json = args.includes('--json');
  writeErr(json ? `${JSON.stringify({ error: { kind: failure, exitCode: EXIT_CODES[failure], message } })}\n` : `vouch: ${message}\n`);
  return EXIT_CODES[failure];
}

/** A command's end: its exit code, or (outside the server) the data folder held by a running server. */
async function attempt(args: string[]): Promise<{ code: number } | { inUse: DataDirInUseError }> {
  try {
    await buildCli().parseAsync(args, { from: 'user' });
    return { code: takeExitCode() ?? 0 };
  } catch (err) {
    // Commander printed the help (on stderr, exit 1, when a subcommand is missing) or version.
    if (err instanceof CommanderError && isHelpOrVersion(err)) return { code: err.exitCode };
    if (err instanceof DataDirInUseError && !hostedRun()) return { inUse: err };
    return { code: report(err, args) };
  }
}

/**
 * Runs one command (`args`: the words after `vouch`) and returns its exit code; what it prints
 * goes to standard output and error, or to the server's run of it (src/cli/hosted.ts).
 */
export async function runCommand(args: string[]): Promise<number> {
  const outcome = await attempt(args);
  return 'inUse' in outcome ? report(outcome.inUse, args) : outcome.code;
}

/**
 * `vouch ARGS`. On the embedded database, a command that finds the data folder held by a running
 * server is sent to that server and run there (src/cli/hosted.ts): its output and exit code are
 * this process's. A server that does not answer leaves the refusal as it was (exit 75).
 */
export async function main(argv: string[]): Promise<void> {
  const args = argv.slice(2);
  const outcome = await attempt(args);
  if (!('inUse' in outcome)) {
    process.exitCode = outcome.code;
    return;
  }
  // `vouch serve` on a held folder, and the commands a server cannot run, say the folder is in use.
  const answer = refusedInServer(args) ? undefined : await sendToServer(outcome.inUse.dir, args);
  if (!answer) {
    process.exitCode = report(outcome.inUse, args);
    return;
  }
  process.stdout.write(answer.stdout);
  process.stderr.write(answer.stderr);
  process.exitCode = answer.exitCode;
}
