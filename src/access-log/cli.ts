import type { Command } from 'commander';
import { CliError, print, withDatabase } from '../cli/support.js';
import { consentRequired, setConsentRequired } from '../consent/setting.js';
import { ApiError } from '../platform/errors.js';
import { listAccess, type AccessRow } from './service.js';
import type { AccessActorKind, AccessChannel } from './tables.js';
import { notFound } from '../platform/not-found.js';

function instant(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) && name === '--to' ? `${value}T23:59:59.999Z` : value);
  if (Number.isNaN(date.getTime())) throw new CliError(`${name} must be a date (YYYY-MM-DD) or an ISO 8601 date-time, got "${value}"`);
  return date;
}

function line(row: AccessRow): string {
  const who = row.actor.kind === 'cli' ? 'cli' : `${row.actor.kind}:${row.actor.id ?? '-'}${row.actor.name ? ` (${row.actor.name})` : ''}`;
  return `${row.at}  ${row.orgName ?? row.orgId ?? '-'}${row.mode ? ` [${row.mode}]` : ''}  ${who}  ${row.channel} ${row.action} ${row.resource}${row.resourceId ? ` ${row.resourceId}` : ''}${row.ip ? `  from ${row.ip}` : ''}`;
}

/**
 * `vouch access-log`: who viewed or exported personal data (issue 12, point 5), and
 * `vouch org consent <id> required|optional`: the organization's consent setting (point 4).
 */
export function registerAccessLogCommands(program: Command): void {
  program
    .command('access-log')
    .description('who viewed or exported personal data (API, portal, console, CLI), newest first; holds no personal data itself')
    .option('--org <id>', 'one organization')
    .option('--resource <kind>', 'address, business, guarantor, employment, ledger, subject ...')
    .option('--resource-id <id>', 'one resource (with --resource)')
    .option('--actor <id>', "an API secret's or a person's id")
    .option('--actor-kind <kind>', 'api, member, operator, agent or cli')
    .option('--channel <channel>', 'api, portal, console, field or cli')
    .option('--from <date>', 'from this day or instant (included)')
    .option('--to <date>', 'up to this day or instant (included)')
    .option('--limit <n>', 'rows to print (default 50, at most 1000)', '50')
    .option('--json', 'print JSON')
    .action(async (opts: { org?: string; resource?: string; resourceId?: string; actor?: string; actorKind?: string; channel?: string; from?: string; to?: string; limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliError('--limit must be a whole number from 1 to 1000');
      if (opts.actorKind && !['api', 'member', 'operator', 'agent', 'cli'].includes(opts.actorKind)) throw new CliError('--actor-kind must be one of api, member, operator, agent, cli');
      if (opts.channel && !['api', 'portal', 'console', 'field', 'cli'].includes(opts.channel)) throw new CliError('--channel must be one of api, portal, console, field, cli');
      if (opts.org && !/^[0-9a-f-]{36}$/i.test(opts.org)) throw new CliError('--org must be an organization id (a UUID)');
      const filters = {
        orgId: opts.org,
        resource: opts.resource,
        resourceId: opts.resourceId,
        actorId: opts.actor,
        actorKind: opts.actorKind as AccessActorKind | undefined,
        channel: opts.channel as AccessChannel | undefined,
        from: instant('--from', opts.from),
        to: instant('--to', opts.to),
      };
      await withDatabase(async ({ db }) => {
        const { rows, total } = await listAccess(db, filters, { limit, offset: 0 });
        print(!!opts.json, { data: rows, total }, rows.length === 0 ? 'no access recorded' : `${rows.map(line).join('\n')}\n${rows.length} of ${total}`);
      });
    });

  const org = program.commands.find((command) => command.name() === 'org');
  if (!org) throw new Error('the org command must be registered first');
  org
    .command('consent')
    .description('require consent on every identity lookup and workflow creation of the organization (or make it optional again); without a setting, show it')
    .argument('<id>')
    .argument('[setting]', 'required or optional')
    .option('--json', 'print JSON')
    .action(async (id: string, setting: string | undefined, opts: { json?: boolean }) => {
      if (setting !== undefined && setting !== 'required' && setting !== 'optional') throw new CliError(`setting must be "required" or "optional", got "${setting}"`);
      await withDatabase(async ({ db }) => {
        try {
          const result =
            setting === undefined ? { orgId: id, consentRequired: await consentRequired(db, id) } : await setConsentRequired(db, id, setting === 'required', { kind: 'cli' });
          print(!!opts.json, result, `${id}: consent is ${result.consentRequired ? 'required' : 'optional'}`);
        } catch (err) {
          if (err instanceof ApiError && err.code === 'NOT_FOUND_ERROR') throw notFound(new CliError(err.message));
          throw err;
        }
      });
    });
}
