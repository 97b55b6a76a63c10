import type { Command } from 'commander';
import { CliError, cliError, print, withDatabase } from '../cli/support.js';
import { createOperator, OperatorInputError } from './operators.js';

/** `vouch operator ...`: the operator console's staff. */
export function registerOperatorCommands(program: Command): void {
  const operator = program.command('operator').description('operator staff, who sign in to the console at /console');
  operator
    .command('create')
    .description('creates an operator and prints a one-time sign-in link (valid 24 hours) that sets their password')
    .requiredOption('--email <email>', 'their own address (not a customer account)')
    .option('--name <name>', 'how the console and the audit log name them (default: the part of the address before @)')
    .option('--json', 'print JSON')
    .action(async (opts: { email: string; name?: string; json?: boolean }) => {
      await withDatabase(async ({ db }, config) => {
        try {
          const created = await createOperator(db, opts, config.publicUrl);
          print(!!opts.json, created, `created operator ${created.email} (${created.id})\nsign-in link (once, until ${created.linkExpiresAt}):\n  ${created.signInLink}`);
        } catch (err) {
          if (err instanceof OperatorInputError) throw cliError(err);
          throw err;
        }
      });
    });
}
