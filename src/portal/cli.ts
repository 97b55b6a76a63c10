import { InvalidArgumentError, type Command } from 'commander';
import { choice, cliError, CliError, print, withDatabase } from '../cli/support.js';
import { resetSecondFactor, SecondFactorResetError } from './auth/lost-second-factor.js';
import { formatNaira, Funding, FUNDING_STATUSES, type SharedReference } from './billing/service.js';
import { listMail, PeopleMail } from './mail.js';
import type { FundingRequestStatus } from './tables.js';
import { writeErr } from '../cli/hosted.js';

function count(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1000) throw new InvalidArgumentError('must be a whole number from 1 to 1000');
  return Number(value);
}

/** `vouch mail ...`: mail to portal users (verification, password reset, invitations), for operators and development. */
export function registerMailCommands(program: Command): void {
  const mail = program.command('mail').description('mail to portal users (readable here when no SMTP server is set)');
  mail
    .command('list')
    .description('the newest mails first, with their links')
    .option('--to <email>', 'only mails to this address')
    .option('--limit <n>', 'at most this many (default 20)', count)
    .option('--json', 'print JSON')
    .action(async (opts: { to?: string; limit?: number; json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const mails = await listMail(db, { to: opts.to, limit: opts.limit ?? 20 });
        const text = mails.length
          ? mails.map((m) => `#${m.id}  ${m.kind}  ${m.createdAt}  to ${m.to}  ${m.sentAt ? `sent ${m.sentAt}` : m.error ? `not sent: ${m.error}` : 'not sent'}\nSubject: ${m.subject}\n\n${m.text}`).join('\n---\n')
          : 'no mail';
        print(!!opts.json, mails, text);
      });
    });
}

/** The warning a listed request gets when other organizations announced the same reference. */
function sharedNote(others: readonly SharedReference[]): string {
  if (others.length === 0) return '';
  const who = others.map((other) => `${other.orgName} (${other.status}, ${formatNaira(other.amount)})`).join('; ');
  return `\n    warning: the same reference was announced by ${who}: match the transfer by its sender, not its narration`;
}

/** `vouch funding ...`: the operator confirms or rejects the bank transfers customers announce in the portal. */
export function registerFundingCommands(program: Command): void {
  const funding = program.command('funding').description('wallet funding requests from the portal');
  /** The service as the CLI uses it: decisions mail the customer (SMTP when set, else `vouch mail list`). */
  const withFunding = <T>(work: (service: Funding) => Promise<T>) =>
    withDatabase(async ({ db }, config) => {
      const mail = new PeopleMail(db, config, cliMailLog);
      try {
        const service = new Funding(db, { mail, publicUrl: config.publicUrl });
        const result = await work(service);
        await service.flush();
        return result;
      } finally {
        mail.close();
      }
    });
  funding
    .command('list')
    .description('funding requests, newest first')
    .option('--status <status>', 'pending, confirmed, rejected or withdrawn', choice('status', FUNDING_STATUSES))
    .option('--org <id>', 'only this organization\'s')
    .option('--limit <n>', 'at most this many (default 200)', count)
    .option('--json', 'print JSON')
    .action(async (opts: { status?: FundingRequestStatus; org?: string; limit?: number; json?: boolean }) => {
      await withFunding(async (service) => {
        const { rows } = await service.list({ status: opts.status, orgId: opts.org, limit: opts.limit ?? 200 });
        const shared = await service.sharedReferences(rows);
        const listed = rows.map((row) => ({ ...row, alsoAnnouncedBy: shared.get(row.id) ?? [] }));
        const text = listed.length
          ? listed.map((r) => `${r.id}  ${r.reference}  ${formatNaira(r.amount)}  ${r.status}  ${r.orgName} (${r.orgId})  ${r.createdAt}${sharedNote(r.alsoAnnouncedBy)}`).join('\n')
          : 'no funding requests';
        print(!!opts.json, listed, text);
      });
    });
  funding
    .command('confirm <id>')
    .description('the transfer arrived: credit the wallet with the amount (once, however often this runs)')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withFunding(async (service) => {
        const done = await service.confirm(id, { kind: 'cli' });
        const shared = (await service.sharedReferences([done])).get(done.id) ?? [];
        print(!!opts.json, done, `confirmed ${done.reference}: credited ${formatNaira(done.amount)} to ${done.orgName}${sharedNote(shared)}`);
      });
    });
  funding
    .command('reject <id>')
    .description('no such transfer arrived: reject the request with a reason the customer sees')
    .requiredOption('--reason <text>', 'why, in words for the customer')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { reason: string; json?: boolean }) => {
      await withFunding(async (service) => {
        const done = await service.reject(id, opts.reason, { kind: 'cli' });
        print(!!opts.json, done, `rejected ${done.reference} of ${done.orgName}`);
      });
    });
}

/** `vouch person ...`: what the administrator does for a person of the portal, console or field app. */
export function registerPersonCommands(program: Command): void {
  const person = program.command('person').description('people who sign in to the portal, the console or the field app');
  person
    .command('reset-second-factor')
    .description('turns off the two-factor authentication of a person who lost their app and recovery codes; ends their sessions and mails them')
    .requiredOption('--email <email>', 'the address they sign in with')
    .option('--json', 'print JSON')
    .action(async (opts: { email: string; json?: boolean }) => {
      await withDatabase(async ({ db }, config) => {
        const mail = new PeopleMail(db, config, cliMailLog);
        try {
          const { reset, mailId } = await resetSecondFactor(db, mail, { email: opts.email, publicUrl: config.publicUrl });
          await mail.dispatch(mailId);
          print(
            !!opts.json,
            reset,
            `turned off two-factor authentication for ${reset.email} (${reset.id}): ${reset.sessionsEnded} session(s) ended, ${reset.recoveryCodesRemoved} unused recovery code(s) removed; they were mailed (see \`vouch mail list\` without SMTP)`,
          );
        } catch (err) {
          if (err instanceof SecondFactorResetError) throw cliError(err);
          throw err;
        } finally {
          mail.close();
        }
      });
    });
}

/** The CLI's mail log: quiet when a mail waits for `vouch mail list`, one stderr line when SMTP refused it. */
const cliMailLog = {
  info: () => undefined,
  error: (_details: unknown, message?: string) => writeErr(`vouch: warning: ${message ?? 'mail could not be sent'} (see \`vouch mail list\`)\n`),
} as unknown as ConstructorParameters<typeof PeopleMail>[2];
