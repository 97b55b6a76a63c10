import { randomInt, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { creditEntry } from '../../platform/billing.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { audit, type Actor } from '../audit.js';
import type { PeopleMail, PersonMail } from '../mail.js';
import type { FundingRequestStatus } from '../tables.js';

export { BILLABLES, priceList } from './checks.js';

/** ₦1,000: a funding request below this is not worth a bank transfer's reconciliation. */
export const MIN_FUNDING = 100_000;
/** ₦100,000,000: a bigger amount is a typing mistake more often than a deposit. */
export const MAX_FUNDING = 10_000_000_000;
/** Pending requests an organization may have at once: more is a stuck page or a script, not transfers. */
export const MAX_PENDING = 20;

export const FUNDING_STATUSES: readonly FundingRequestStatus[] = ['pending', 'confirmed', 'rejected', 'withdrawn'];

/** A reference customers choose: what their bank lets them type in a narration. */
export const REFERENCE_PATTERN = /^[A-Z0-9][A-Z0-9 /._-]{2,29}$/;
// No 0/O or 1/I: a reference is read off a screen and typed into a banking app.
const REFERENCE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A bank-transfer narration the operator can match: VCH- and six letters or digits. */
export function fundingReference(): string {
  let code = '';
  for (let i = 0; i < 6; i++) code += REFERENCE_ALPHABET[randomInt(REFERENCE_ALPHABET.length)];
  return `VCH-${code}`;
}

const nairaFormat = new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN', minimumFractionDigits: 2 });
export const formatNaira = (kobo: number) => nairaFormat.format(kobo / 100);

export interface FundingRequestView {
  id: string;
  orgId: string;
  orgName: string;
  amount: number;
  reference: string;
  status: FundingRequestStatus;
  /** Why it was rejected, for the customer. */
  reason: string | null;
  /** Who announced it (their name), when they are still known. */
  requestedBy: string | null;
  /** The ledger row of the credit, once confirmed. */
  ledgerEntryId: number | null;
  createdAt: string;
  decidedAt: string | null;
}

/** Another organization's standing request (pending or confirmed) with the same reference: for operators only. */
export interface SharedReference {
  orgId: string;
  orgName: string;
  status: FundingRequestStatus;
  amount: number;
}

export interface FundingListFilter {
  orgId?: string | undefined;
  status?: FundingRequestStatus | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
}

function selectView(db: Kysely<DB>) {
  return db
    .selectFrom('funding_requests as f')
    .innerJoin('organizations as o', 'o.id', 'f.org_id')
    .leftJoin('people as p', 'p.id', 'f.requested_by')
    .select(['f.id', 'f.org_id', 'o.name as org_name', 'f.amount', 'f.reference', 'f.status', 'f.reason', 'p.name as requester', 'f.ledger_entry_id', 'f.created_at', 'f.decided_at']);
}

type ViewRow = Awaited<ReturnType<ReturnType<typeof selectView>['executeTakeFirstOrThrow']>>;

function view(row: ViewRow): FundingRequestView {
  return {
    id: row.id,
    orgId: row.org_id,
    orgName: row.org_name,
    amount: Number(row.amount),
    reference: row.reference,
    status: row.status,
    reason: row.reason,
    requestedBy: row.requester,
    ledgerEntryId: row.ledger_entry_id === null ? null : Number(row.ledger_entry_id),
    createdAt: row.created_at.toISOString(),
    decidedAt: row.decided_at?.toISOString() ?? null,
  };
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';
const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

export interface FundingOptions {
  /** Mails the requester when the operator decides; without it nobody is mailed. */
  mail?: PeopleMail | undefined;
  /** The portal's address, for the link in those mails. */
  publicUrl?: string | undefined;
}

/**
 * Wallet funding by bank transfer: a member announces a transfer (amount and reference), the
 * operator confirms it when the money arrives (which credits the wallet) or rejects it; the
 * member may withdraw it while it is pending. The portal, the CLI and the operator console all
 * call these methods, each with its own actor.
 */
export class Funding {
  private readonly sending = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: FundingOptions = {},
  ) {}

  async request(orgId: string, input: { amount: number; reference?: string | undefined }, actor: Actor): Promise<FundingRequestView> {
    const { amount } = input;
    if (!Number.isSafeInteger(amount) || amount < MIN_FUNDING || amount > MAX_FUNDING) {
      throw new ApiError('VALIDATION_ERROR', `amount must be between ${MIN_FUNDING} and ${MAX_FUNDING} kobo (₦1,000 to ₦100,000,000)`);
    }
    const chosen = input.reference === undefined ? undefined : input.reference.trim().replace(/\s+/g, ' ').toUpperCase();
    if (chosen !== undefined && !REFERENCE_PATTERN.test(chosen)) {
      throw new ApiError('VALIDATION_ERROR', 'reference must be 3 to 30 letters, digits, spaces or / . _ - (or leave it out and Vouch makes one)');
    }
    // A generated reference that collides with a standing one of this organization is drawn again.
    for (let attempt = 0; ; attempt++) {
      const reference = chosen ?? fundingReference();
      try {
        return await this.db.transaction().execute(async (trx) => {
          const pending = await trx
            .selectFrom('funding_requests')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('org_id', '=', orgId)
            .where('status', '=', 'pending')
            .executeTakeFirstOrThrow();
          if (Number(pending.n) >= MAX_PENDING) {
            throw new ApiError('CONFLICT', `${MAX_PENDING} funding requests are already pending: withdraw the ones you will not send before announcing another`);
          }
          const id = randomUUID();
          await trx.insertInto('funding_requests').values({ id, org_id: orgId, amount, reference, requested_by: actor.personId ?? null }).execute();
          await audit(trx, { orgId, actor, action: 'funding.requested', target: reference, after: { amount } });
          return view(await selectView(trx).where('f.id', '=', id).executeTakeFirstOrThrow());
        });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        if (chosen !== undefined) {
          throw new ApiError('CONFLICT', `A transfer with the reference ${chosen} is already announced (pending or confirmed); give this transfer its own reference`);
        }
        if (attempt >= 4) throw err;
      }
    }
  }

  async get(orgId: string, id: string): Promise<FundingRequestView> {
    const row = isUuid(id) ? await selectView(this.db).where('f.id', '=', id).where('f.org_id', '=', orgId).executeTakeFirst() : undefined;
    if (!row) throw new ApiError('NOT_FOUND_ERROR', `No funding request ${id} in this organization`);
    return view(row);
  }

  /** Newest first; with `orgId` one organization's, else everyone's (the operator's view). */
  async list(filter: FundingListFilter = {}): Promise<{ rows: FundingRequestView[]; total: number }> {
    if (filter.orgId !== undefined && !isUuid(filter.orgId)) throw new ApiError('VALIDATION_ERROR', `organization id must be a UUID, got ${filter.orgId}`);
    let query = selectView(this.db);
    let count = this.db.selectFrom('funding_requests as f').select((eb) => eb.fn.countAll<string>().as('n'));
    if (filter.orgId) {
      query = query.where('f.org_id', '=', filter.orgId);
      count = count.where('f.org_id', '=', filter.orgId);
    }
    if (filter.status) {
      query = query.where('f.status', '=', filter.status);
      count = count.where('f.status', '=', filter.status);
    }
    const [rows, total] = await Promise.all([
      query.orderBy('f.created_at', 'desc').orderBy('f.id', 'desc').limit(filter.limit ?? 50).offset(filter.offset ?? 0).execute(),
      count.executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(view), total: Number(total.n) };
  }

  /**
   * For the operator matching transfers to requests: each request's reference as other
   * organizations' standing requests (pending or confirmed) also hold it. A reference is unique
   * per organization only, so two can announce the same words; the operator then matches the
   * transfer by its sender, not its narration. Never shown to customers (it names other organizations).
   */
  async sharedReferences(rows: readonly FundingRequestView[]): Promise<Map<string, SharedReference[]>> {
    const references = [...new Set(rows.map((row) => row.reference))];
    if (references.length === 0) return new Map();
    const standing = await this.db
      .selectFrom('funding_requests as f')
      .innerJoin('organizations as o', 'o.id', 'f.org_id')
      .select(['f.org_id', 'o.name', 'f.reference', 'f.status', 'f.amount'])
      .where('f.reference', 'in', references)
      .where('f.status', 'in', ['pending', 'confirmed'])
      .orderBy('f.created_at')
      .execute();
    return new Map(
      rows.map((row) => [
        row.id,
        standing
          .filter((other) => other.reference === row.reference && other.org_id !== row.orgId)
          .map((other) => ({ orgId: other.org_id, orgName: other.name, status: other.status, amount: Number(other.amount) })),
      ]),
    );
  }

  /** The customer will not send this transfer after all: a pending request stops waiting. */
  async withdraw(orgId: string, id: string, actor: Actor): Promise<FundingRequestView> {
    return this.decide(id, actor, { orgId, status: 'withdrawn' });
  }

  /**
   * The transfer arrived: credits the wallet with the request's amount and marks it confirmed
   * with the credit's ledger row, in one transaction with the audit row. The request row is
   * locked first and only a pending one moves, so confirming twice (two operators, a double
   * click, a retried command) credits once: the second finds it confirmed (409).
   */
  async confirm(id: string, actor: Actor): Promise<FundingRequestView> {
    return this.decide(id, actor, { status: 'confirmed' });
  }

  /** No such transfer arrived (or not that amount): nothing is credited; the reason is for the customer. */
  async reject(id: string, reason: string, actor: Actor): Promise<FundingRequestView> {
    const text = reason.trim();
    if (!text) throw new ApiError('VALIDATION_ERROR', 'reason must say why, for the customer');
    if (text.length > 500) throw new ApiError('VALIDATION_ERROR', 'reason must be at most 500 characters');
    return this.decide(id, actor, { status: 'rejected', reason: text });
  }

  /** Resolves when the mails of decisions made so far have been handed to SMTP (or left waiting). */
  async flush(): Promise<void> {
    await Promise.all([...this.sending]);
  }

  private async decide(
    id: string,
    actor: Actor,
    change: { status: Exclude<FundingRequestStatus, 'pending'>; orgId?: string; reason?: string },
  ): Promise<FundingRequestView> {
    const notFound = new ApiError('NOT_FOUND_ERROR', change.orgId ? `No funding request ${id} in this organization` : `No funding request ${id}`);
    if (!isUuid(id)) throw notFound;
    const { result, mailIds } = await this.db.transaction().execute(async (trx) => {
      let locked = trx.selectFrom('funding_requests').selectAll().where('id', '=', id);
      if (change.orgId) locked = locked.where('org_id', '=', change.orgId);
      const row = await locked.forUpdate().executeTakeFirst();
      if (!row) throw notFound;
      if (row.status !== 'pending') {
        throw new ApiError('CONFLICT', `Funding request ${row.reference} is already ${row.status}; only a pending request can be ${change.status}`);
      }
      const amount = Number(row.amount);
      let ledgerEntryId: number | null = null;
      let balance: number | undefined;
      if (change.status === 'confirmed') {
        // The ledger row names the operator who confirmed it (none for the command line).
        const credit = await creditEntry(trx, row.org_id, amount, `Bank transfer ${row.reference}`, actor.personId ?? null);
        ledgerEntryId = credit.entryId;
        balance = credit.balance;
      }
      await trx
        .updateTable('funding_requests')
        .set({ status: change.status, reason: change.reason ?? null, ledger_entry_id: ledgerEntryId, decided_by: actor.personId ?? null, decided_at: new Date() })
        .where('id', '=', id)
        .execute();
      await audit(trx, {
        orgId: row.org_id,
        actor,
        action: `funding.${change.status}`,
        target: row.reference,
        before: { status: 'pending' },
        after: { status: change.status, amount, ...(change.reason ? { reason: change.reason } : {}), ...(ledgerEntryId ? { ledgerEntryId } : {}) },
      });
      const result = view(await selectView(trx).where('f.id', '=', id).executeTakeFirstOrThrow());
      // The customer withdrew it themselves: no mail. A decision of the operator is mailed.
      const mailIds = change.status === 'withdrawn' ? [] : await this.queueDecisionMail(trx, row.requested_by, result, balance);
      return { result, mailIds };
    });
    for (const mailId of mailIds) this.dispatch(mailId);
    return result;
  }

  /**
   * Mails the member who announced the transfer; when they have left the organization, its
   * owners instead (a former member hears nothing more about its wallet).
   */
  private async queueDecisionMail(trx: Kysely<DB>, requesterId: string | null, request: FundingRequestView, balance: number | undefined): Promise<number[]> {
    const mail = this.options.mail;
    if (!mail) return [];
    const members = trx
      .selectFrom('memberships as m')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .select(['p.email', 'p.name'])
      .where('m.org_id', '=', request.orgId);
    let recipients = requesterId ? await members.where('m.person_id', '=', requesterId).execute() : [];
    if (recipients.length === 0) recipients = await members.where('m.role', '=', 'owner').execute();
    const link = this.options.publicUrl ? `${this.options.publicUrl}/billing${request.status === 'confirmed' ? '' : '/fund'}` : undefined;
    const ids: number[] = [];
    for (const person of recipients) {
      ids.push(await mail.queue(trx, decisionMail(person, request, balance, link)));
    }
    return ids;
  }

  private dispatch(mailId: number): void {
    const mail = this.options.mail;
    if (!mail) return;
    const sent = mail.dispatch(mailId).finally(() => this.sending.delete(sent));
    this.sending.add(sent);
  }
}

function decisionMail(person: { email: string; name: string }, request: FundingRequestView, balance: number | undefined, link: string | undefined): PersonMail {
  const amount = formatNaira(request.amount);
  if (request.status === 'confirmed') {
    return {
      kind: 'funding_confirmed',
      to: person.email,
      subject: `${amount} was added to ${request.orgName}'s Vouch wallet`,
      text:
        `Hello ${person.name},\n\nThe bank transfer with the reference ${request.reference} has arrived: ${amount} was added to ${request.orgName}'s wallet.` +
        (balance !== undefined ? ` The balance is now ${formatNaira(balance)}.` : '') +
        (link ? `\n\nSee the ledger: ${link}` : '') +
        '\n',
    };
  }
  return {
    kind: 'funding_rejected',
    to: person.email,
    subject: `Your Vouch funding request ${request.reference} was not confirmed`,
    text:
      `Hello ${person.name},\n\nThe transfer of ${amount} with the reference ${request.reference} for ${request.orgName} was not confirmed, and the wallet was not credited.\n\nReason: ${request.reason ?? 'none given'}\n\n` +
      `If you did send the money, reply to your account manager with the transfer receipt.` +
      (link ? ` To announce a transfer again: ${link}` : '') +
      '\n',
  };
}
