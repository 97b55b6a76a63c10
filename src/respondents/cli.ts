import { InvalidArgumentError, type Command } from 'commander';
import { CliError, cliError, print, withDatabase } from '../cli/support.js';
import { smtpTransport } from './mailer.js';
import { listMessages, type OutboxEntry } from './outbox.js';
import { Respondents, SandboxMessageError } from './service.js';
import { notFound } from '../platform/not-found.js';

const MAX_LIST = 1000;

function count(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_LIST) {
    throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_LIST}`);
  }
  return Number(value);
}

function messageId(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('must be a message id (a whole number)');
  return Number(value);
}

function describe(message: OutboxEntry): string {
  const state =
    message.mode === 'test'
      ? 'test mode: never sent, shown in the sandbox outbox'
      : message.sentAt
        ? `sent ${message.sentAt}`
        : message.error
          ? `not sent: ${message.error}`
          : 'not sent';
  return [
    `#${message.id}  ${message.createdAt}  ${message.mode}  ${message.kind}  to ${message.to}  (${state})`,
    `  ${message.subject}`,
    `  ${message.link}`,
  ].join('\n');
}

/**
 * `vouch outbox ...`: the messages to respondents (guarantors, employers). Without SMTP_URL live
 * messages are only stored, and an operator passes each link on by hand; with it, `send` resends
 * one. Test-mode messages are listed too but are never sent, by SMTP or by hand.
 */
export function registerOutboxCommands(program: Command): void {
  const outbox = program.command('outbox').description('messages to respondents (guarantors, employers), newest first');

  outbox
    .command('list')
    .description('the newest messages to respondents (and their links in test mode), newest first')
    .option('--limit <n>', `how many, 1 to ${MAX_LIST} (default 20)`, count, 20)
    .option('--unsent', 'only live messages not sent by SMTP yet (test-mode messages are never sent)')
    .option('--org <id>', "only this organization's messages")
    .option('--json', 'print JSON: an array of {id, orgId, mode, kind, verificationId, to, subject, text, html, link, createdAt, sentAt, error}')
    .action(async (opts: { limit: number; unsent?: boolean; org?: string; json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const messages = await listMessages(db, { limit: opts.limit, unsent: !!opts.unsent, ...(opts.org ? { orgId: opts.org } : {}) });
        print(!!opts.json, messages, messages.length > 0 ? messages.map(describe).join('\n') : 'no messages');
      });
    });

  outbox
    .command('send')
    .description('send (again) one message through SMTP_URL')
    .argument('<id>', 'the message id', messageId)
    .option('--json', 'print JSON')
    .action(async (id: number, opts: { json?: boolean }) => {
      await withDatabase(async ({ db }, config) => {
        if (!config.smtpUrl) throw new CliError('SMTP_URL is not set: there is no mail server to send through');
        const respondents = new Respondents(db, {
          publicUrl: config.publicUrl,
          mailFrom: config.mailFrom,
          mailCapPerHour: config.mailCapPerHour,
          transport: smtpTransport(config.smtpUrl),
        });
        try {
          let sent: boolean;
          try {
            sent = await respondents.send(id);
          } catch (err) {
            if (err instanceof RangeError) throw notFound(new CliError(`no outbox message ${id}`));
            if (err instanceof SandboxMessageError) throw cliError(err);
            throw err;
          }
          if (!sent) throw new CliError(`message ${id} was not sent; see its error with \`vouch outbox list\``);
          print(!!opts.json, { id, sent }, `message ${id} sent`);
        } finally {
          await respondents.close();
        }
      });
    });
}
