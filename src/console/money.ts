import type { Kysely } from 'kysely';
import { creditEntry, debitEntry } from '../platform/billing.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { audit, type Actor } from '../portal/audit.js';
import { operatorLedgerPage, type OperatorLedgerEntryView } from '../portal/billing/ledger.js';
import { formatNaira, MAX_FUNDING } from '../portal/billing/service.js';
import type { PeopleMail, PersonMail } from '../portal/mail.js';

export type Direction = 'credit' | 'debit';

/** ₦100,000,000, as for a funding: a bigger adjustment is a typing mistake more often than a correction. */
export const MAX_ADJUSTMENT = MAX_FUNDING;
export const MAX_ADJUSTMENT_REASON = 500;

export interface AdjustmentInput {
  direction: Direction;
  /** Kobo, a positive whole number. */
  amount: number;
  /** Why: the audit log keeps it and the customer's ledger shows it. */
  reason: string;
}

export interface Adjustment {
  balance: number;
  entry: OperatorLedgerEntryView;
}

export interface AdjustmentOptions {
  /** Mails the organization's owners about the adjustment; without it nobody is mailed. */
  mail?: PeopleMail | undefined;
  publicUrl?: string | undefined;
}

/** What the customer's ledger says of an adjustment: its direction and the operator's reason. */
export function adjustmentDescription(direction: Direction, reason: string): string {
  return `${direction === 'credit' ? 'Credit' : 'Debit'} by your account manager: ${reason}`;
}

/**
 * An operator credits or debits a wallet by hand (goodwill, a correction), with a reason. One
 * transaction: the wallet row locked, the balance changed with its ledger row naming the
 * operator, the audit row (before → after), the owners' mail queued. A debit never takes the
 * balance below zero (409, nothing written).
 */
export class WalletAdjustments {
  private readonly sending = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: AdjustmentOptions = {},
  ) {}

  async adjust(orgId: string, input: AdjustmentInput, actor: Actor): Promise<Adjustment> {
    const { direction, amount } = input;
    if (direction !== 'credit' && direction !== 'debit') throw new ApiError('VALIDATION_ERROR', 'direction must be credit or debit');
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_ADJUSTMENT) {
      throw new ApiError('VALIDATION_ERROR', `amount must be a whole number of kobo from 1 to ${MAX_ADJUSTMENT} (₦0.01 to ₦100,000,000)`);
    }
    const reason = input.reason.trim().replace(/\s+/g, ' ');
    if (!reason) throw new ApiError('VALIDATION_ERROR', 'reason must say why: the audit log keeps it and the customer sees it in the ledger');
    if (reason.length > MAX_ADJUSTMENT_REASON) throw new ApiError('VALIDATION_ERROR', `reason must be at most ${MAX_ADJUSTMENT_REASON} characters`);
    const personId = actor.personId ?? null;

    const { result, mailIds } = await this.db.transaction().execute(async (trx) => {
      const org = await trx.selectFrom('organizations').select(['name', 'balance']).where('id', '=', orgId).forUpdate().executeTakeFirst();
      if (!org) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId}`);
      const before = Number(org.balance);
      const description = adjustmentDescription(direction, reason);
      let done: { balance: number; entryId: number } | undefined;
      if (direction === 'credit') {
        done = await creditEntry(trx, orgId, amount, description, personId);
      } else {
        done = before >= amount ? await debitEntry(trx, orgId, amount, description, personId) : undefined;
        if (!done) {
          throw new ApiError(
            'CONFLICT',
            `The wallet of ${org.name} holds ${formatNaira(before)}: a debit of ${formatNaira(amount)} would take it below zero. Debit at most ${formatNaira(before)}.`,
          );
        }
      }
      const balance = Number(done.balance);
      await audit(trx, {
        orgId,
        actor,
        action: direction === 'credit' ? 'wallet.credited' : 'wallet.debited',
        target: 'wallet',
        before: { balance: before },
        after: { balance, amount: direction === 'credit' ? amount : -amount, reason, ledgerEntryId: done.entryId },
      });
      const page = await operatorLedgerPage(trx, { orgId }, { limit: 1, offset: 0 });
      const entry = page.rows.find((row) => row.id === done.entryId);
      if (!entry) throw new Error(`ledger entry ${done.entryId} is not the newest of its organization`);
      const mailIds = await this.queueMail(trx, orgId, org.name, direction, amount, reason, balance);
      return { result: { balance, entry }, mailIds };
    });
    for (const id of mailIds) this.dispatch(id);
    return result;
  }

  /** Resolves when the mails queued so far have been handed to SMTP (or left waiting). */
  async flush(): Promise<void> {
    await Promise.all([...this.sending]);
  }

  /** The owners hear of every change to their wallet they did not make themselves. */
  private async queueMail(trx: Kysely<DB>, orgId: string, orgName: string, direction: Direction, amount: number, reason: string, balance: number): Promise<number[]> {
    const mail = this.options.mail;
    if (!mail) return [];
    const owners = await trx
      .selectFrom('memberships as m')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .select(['p.email', 'p.name'])
      .where('m.org_id', '=', orgId)
      .where('m.role', '=', 'owner')
      .execute();
    const link = this.options.publicUrl ? `${this.options.publicUrl}/billing` : undefined;
    const ids: number[] = [];
    for (const owner of owners) ids.push(await mail.queue(trx, adjustmentMail(owner, orgName, direction, amount, reason, balance, link)));
    return ids;
  }

  private dispatch(mailId: number): void {
    const mail = this.options.mail;
    if (!mail) return;
    const sent = mail.dispatch(mailId).finally(() => this.sending.delete(sent));
    this.sending.add(sent);
  }
}

function adjustmentMail(person: { email: string; name: string }, orgName: string, direction: Direction, amount: number, reason: string, balance: number, link: string | undefined): PersonMail {
  const naira = formatNaira(amount);
  const moved = direction === 'credit' ? `${naira} was added to` : `${naira} was taken off`;
  return {
    kind: direction === 'credit' ? 'wallet_credited' : 'wallet_debited',
    to: person.email,
    subject: `${moved} ${orgName}'s Vouch wallet`,
    text:
      `Hello ${person.name},\n\nYour account manager ${direction === 'credit' ? 'credited' : 'debited'} ${orgName}'s wallet: ${moved} it.\n\n` +
      `Reason: ${reason}\n\nThe balance is now ${formatNaira(balance)}.` +
      (link ? `\n\nSee the ledger: ${link}` : '') +
      '\n\nIf this is not what you agreed, reply to your account manager.\n',
  };
}
