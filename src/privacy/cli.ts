import os from 'node:os';
import readline from 'node:readline/promises';
import type { Command } from 'commander';
import { CliError, print, withDatabase } from '../cli/support.js';
import { openFileStore } from '../files/open-store.js';
import { protectionOf } from '../platform/crypto/fields.js';
import { isUuid } from '../accounts/service.js';
import { logCliAccess } from '../access-log/service.js';
import type { Mode } from '../platform/db/schema.js';
import { getRetention, RETENTION_KEYS, RETENTION_LABELS, setRetention, type RetentionChange, type RetentionKey, type RetentionSettings } from './retention.js';
import { eraseSubject, exportSubject, findSubject, countsOf, parseIdentifiers, writePhotos, type IdentifierKind, type SubjectCounts } from './subjects.js';
import { notFound } from '../platform/not-found.js';

const OPTION_OF: Record<RetentionKey, string> = { lookupDays: 'lookups', verificationDays: 'verifications', photoDays: 'photos', webhookDays: 'webhooks' };

function retentionText(settings: RetentionSettings): string {
  return RETENTION_KEYS.map((key) => `${OPTION_OF[key].padEnd(13)} ${String(settings[key]).padStart(5)} days${settings.custom[key] ? '' : ' (default)'}  ${RETENTION_LABELS[key]}`).join('\n');
}

function days(option: string, value: string): number | null {
  if (value === 'default') return null;
  if (!/^\d+$/.test(value)) throw new CliError(`--${option} must be a whole number of days or "default", got "${value.slice(0, 40)}"`);
  return Number(value);
}

function cliActor(): string {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    // No user name (a container without one): the request still records it came from the CLI.
  }
  return `cli:${user}`;
}

function countsText(title: string, counts: SubjectCounts): string {
  const lines = Object.entries(counts).filter(([, n]) => n > 0).map(([table, n]) => `  ${table}: ${n}`);
  return [title, ...(lines.length > 0 ? lines : ['  nothing'])].join('\n');
}

interface SelectorOptions {
  bvn?: string;
  nin?: string;
  phone?: string;
  email?: string;
  org?: string;
  json?: boolean;
}

function selectors(command: Command): Command {
  return command
    .option('--bvn <bvn>', 'the person\'s BVN')
    .option('--nin <nin>', 'the person\'s NIN')
    .option('--phone <phone>', 'the person\'s phone number')
    .option('--email <email>', 'the person\'s email address')
    .option('--org <id>', 'only this organization (default: every organization, and the registry and upstream cache)')
    .option('--json', 'print JSON');
}

function parsed(opts: SelectorOptions) {
  const identifiers = parseIdentifiers(Object.fromEntries((['bvn', 'nin', 'phone', 'email'] as IdentifierKind[]).map((kind) => [kind, opts[kind]])));
  if (opts.org !== undefined && !isUuid(opts.org)) throw new CliError(`--org must be an organization id (a UUID), got "${opts.org.slice(0, 40)}"`);
  return { identifiers, scope: { orgId: opts.org } };
}

/** `vouch org retention` and `vouch subject export|erase` (docs/data-protection.md). */
export function registerPrivacyCommands(program: Command): void {
  const org = program.commands.find((command) => command.name() === 'org');
  if (!org) throw new Error('the org command is registered first');
  org
    .command('retention <id>')
    .description("show or change how long the organization's personal data is kept (days, or `default`); changes are audited")
    .option('--lookups <days>', 'identity lookup records (masked numbers on usage and ledger rows)')
    .option('--verifications <days>', 'completed or cancelled verifications (then anonymised)')
    .option('--photos <days>', 'visit photos')
    .option('--webhooks <days>', 'ended webhook deliveries (at most VOUCH_WEBHOOK_RETENTION_DAYS)')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { lookups?: string; verifications?: string; photos?: string; webhooks?: string; json?: boolean }) => {
      const change: RetentionChange = {};
      for (const key of RETENTION_KEYS) {
        const value = opts[OPTION_OF[key] as 'lookups'];
        if (value !== undefined) change[key] = days(OPTION_OF[key], value);
      }
      if (!isUuid(id)) throw notFound(new CliError(`no organization with id ${id.slice(0, 40)}`));
      await withDatabase(async ({ db }, config) => {
        const settings = Object.keys(change).length === 0
          ? await getRetention(db, id, config.webhookRetentionDays)
          : await setRetention(db, id, change, { kind: 'cli' }, config.webhookRetentionDays);
        print(!!opts.json, settings, retentionText(settings));
      });
    });

  const subject = program.command('subject').description("a data subject's request: export or erase everything held about a person (docs/data-protection.md)");
  selectors(subject.command('export'))
    .description('gather everything held about the person into one JSON document (recorded, without the identifiers)')
    .option('--files <dir>', 'also write their photos (decrypted) into this folder')
    .action(async (opts: SelectorOptions & { files?: string }) => {
      const { identifiers, scope } = parsed(opts);
      await withDatabase(async ({ db }, config) => {
        const exported = await exportSubject(db, identifiers, scope, cliActor());
        // The access log (who exported which verification's personal data): one row per verification.
        const groups = new Map<string, { orgId: string; mode: Mode; kind: string; ids: number[] }>();
        for (const hit of exported.data.verifications) {
          const key = `${hit.orgId}:${hit.mode}:${hit.kind}`;
          if (!groups.has(key)) groups.set(key, { orgId: hit.orgId, mode: hit.mode as Mode, kind: hit.kind, ids: [] });
          groups.get(key)!.ids.push(hit.id);
        }
        for (const group of groups.values()) await logCliAccess(db, { orgId: group.orgId, mode: group.mode }, group.kind, 'export', group.ids);
        let files: Record<string, string> | undefined;
        if (opts.files) files = await writePhotos(openFileStore(config, protectionOf(db)), exported.data.photos, opts.files);
        const document = { ...exported, ...(files ? { files } : {}) };
        print(!!opts.json, document, `${countsText(`request ${exported.request.id}: found`, exported.found)}\n(--json prints the whole document${files ? `; ${Object.keys(files).length} photo(s) written to ${opts.files}` : ''})`);
      });
    });

  selectors(subject.command('erase'))
    .description('erase or anonymise everything held about the person, files included (recorded, without the identifiers)')
    .option('--yes', 'do not ask for confirmation')
    .action(async (opts: SelectorOptions & { yes?: boolean }) => {
      const { identifiers, scope } = parsed(opts);
      if (!opts.yes && !process.stdin.isTTY) throw new CliError('erasing cannot be undone: add --yes, or run it in a terminal to confirm');
      await withDatabase(async ({ db }, config) => {
        if (!opts.yes) {
          const found = countsOf(await findSubject(db, identifiers, scope));
          process.stderr.write(`${countsText('This erases:', found)}\n`);
          const prompt = readline.createInterface({ input: process.stdin, output: process.stderr });
          const answer = await prompt.question('Type "erase" to confirm: ');
          prompt.close();
          if (answer.trim() !== 'erase') throw new CliError('not confirmed: nothing was erased');
        }
        const store = openFileStore(config, protectionOf(db));
        const result = await eraseSubject(db, store, identifiers, scope, cliActor());
        print(!!opts.json, result, `${countsText(`request ${result.request.id}: erased`, result.erased)}`);
      });
    });
}
