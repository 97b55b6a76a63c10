import { InvalidArgumentError, type Command } from 'commander';
import type { Kysely } from 'kysely';
import { choice, print, withDatabase } from '../../cli/support.js';
import type { Config } from '../../config.js';
import type { DB } from '../../platform/db/schema.js';
import { PeopleMail } from '../mail.js';
import { AccessRequests, type AccessRequestEntry, type AccessRequestStatus } from './service.js';
import { writeErr } from '../../cli/hosted.js';

const STATUSES: readonly AccessRequestStatus[] = ['pending', 'approved', 'declined'];

function count(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1000) throw new InvalidArgumentError('must be a whole number from 1 to 1000');
  return Number(value);
}

/**
 * The access-request service as the command line uses it: decisions are mailed to the member
 * who asked (by SMTP when SMTP_URL is set, else kept for `vouch mail list`). Call `finish()`
 * before the database closes: it waits for the mails and closes the SMTP connection.
 */
export function cliAccessRequests(db: Kysely<DB>, config: Config): { requests: AccessRequests; finish(): Promise<void> } {
  const log = {
    info: () => undefined,
    error: (details: object, message?: string) => writeErr(`${message ?? 'mail error'} ${JSON.stringify(details)}\n`),
  };
  const mail = new PeopleMail(db, config, log);
  const requests = new AccessRequests(db, { mail, publicUrl: config.publicUrl });
  return {
    requests,
    finish: async () => {
      await requests.flush();
      mail.close();
    },
  };
}

function describe(entry: AccessRequestEntry): string {
  const decided =
    entry.status === 'approved'
      ? `  approved ${entry.decidedRiskLevel}/${entry.decidedPayloadType} ${entry.decidedAt}`
      : entry.status === 'declined'
        ? `  declined ${entry.decidedAt}: ${entry.declineReason}`
        : '';
  const useCase = entry.useCase ? `\n    use: ${entry.useCase.replace(/\s+/g, ' ')}` : '';
  return `${entry.id}  ${entry.orgId}  ${entry.orgName}  asked ${entry.riskLevel}/${entry.payloadType}  ${entry.status}  ${entry.createdAt}${decided}${useCase}`;
}

/** `vouch access ...`: the requests for live API access customers send from the portal. */
export function registerAccessCommands(program: Command): void {
  const access = program.command('access').description('requests for live API access from the portal (decide with org enable / org decline)');
  access
    .command('list')
    .description('requests, newest first')
    .option('--status <status>', STATUSES.join(', '), choice('status', STATUSES))
    .option('--limit <n>', 'at most this many (default 50)', count)
    .option('--json', 'print JSON')
    .action(async (opts: { status?: AccessRequestStatus; limit?: number; json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const rows = await new AccessRequests(db).listAll({ status: opts.status, limit: opts.limit ?? 50 });
        print(!!opts.json, rows, rows.length ? rows.map(describe).join('\n') : 'no access requests');
      });
    });
}
