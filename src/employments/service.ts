import type { PageViewer } from '../access-log/service.js';
import type { Kysely, Transaction } from 'kysely';
import type { AuthContext } from '../platform/auth.js';
import { chargeUsage, refund, type Billable } from '../platform/billing.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { nextSequence, type Page, type Scope } from '../platform/pagination.js';
import { closeLinks, consumeLink, LINK_TTL_MS, type RespondentLink } from '../respondents/links.js';
import type { Respondents } from '../respondents/service.js';
import { employerRequestMessage } from './messages.js';
import { renderEmployment, type EmploymentRecordData } from './render.js';
import {
  EMPLOYMENT_SEQUENCE,
  findEmployment,
  insertEmployment,
  listEmployments,
  lockEmployment,
  referenceTaken,
} from './repository.js';
import { EMPLOYMENT_REASONS } from './states.js';
import type { EmploymentAttestation, EmploymentRow } from './tables.js';
import { applyEmploymentTransition, correctionsOf, outcomeOf } from './transition.js';
import type { EmploymentInput } from './validate.js';

/** What creating an employment verification costs by default, in kobo (`vouch price set employment`). */
export const EMPLOYMENT_BILLABLES = {
  employment: { type: 'employment', defaultPrice: 100_000 },
} as const satisfies Record<string, Billable>;

export type AnswerResult = { kind: 'recorded'; row: EmploymentRow } | { kind: 'used' } | { kind: 'closed'; row: EmploymentRow } | { kind: 'gone' };

export const employmentNotFound = () => new ApiError('NOT_FOUND_ERROR', 'Employment verification not found');

function duplicate(reference: string): ApiError {
  return new ApiError('CONFLICT', `An employment verification with reference "${reference}" already exists`);
}

async function organizationName(db: Kysely<DB>, orgId: string): Promise<string> {
  const row = await db.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirstOrThrow();
  return row.name;
}

/**
 * Completes, as NOT_VERIFIED / NO_RESPONSE, up to `batch` verifications whose employer let the
 * link expire (LINK_TTL_MS after creation) without answering; returns how many. No refund.
 */
export async function expireUnansweredEmployments(db: Kysely<DB>, now: Date, batch = 100): Promise<number> {
  const cutoff = new Date(now.getTime() - LINK_TTL_MS);
  const waiting = await db
    .selectFrom('employment_verifications')
    .select(['id', 'org_id', 'mode'])
    .where('state', '=', 'in_progress')
    .where('created_at', '<=', cutoff)
    .orderBy('created_at')
    .limit(batch)
    .execute();
  let done = 0;
  for (const candidate of waiting) {
    const scope = { orgId: candidate.org_id, mode: candidate.mode };
    const ended = await db.transaction().execute(async (trx) => {
      const row = await lockEmployment(trx, scope, Number(candidate.id), { skipLocked: true });
      if (!row || row.state !== 'in_progress' || row.created_at > cutoff) return false;
      await applyEmploymentTransition(trx, row, { to: 'not_verified', reason: EMPLOYMENT_REASONS.noResponse, now });
      return true;
    });
    if (ended) done++;
  }
  return done;
}

/** Employment verifications: created through the API, answered by the employer on their page. */
export class EmploymentService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly respondents: Respondents,
  ) {}

  /** Creates the verification, the employer's link and message, and charges a live wallet, in one transaction. */
  async create(auth: AuthContext, input: EmploymentInput, inTransaction?: (trx: Kysely<DB>, record: EmploymentRecordData) => Promise<void>): Promise<EmploymentRecordData> {
    const scope: Scope = { orgId: auth.orgId, mode: auth.mode };
    const now = this.respondents.now();
    const { row, message } = await this.db.transaction().execute(async (trx) => {
      if (await referenceTaken(trx, scope, input.reference)) throw duplicate(input.reference);
      // Past the live mail cap nothing is charged or stored (429): the allowance comes first.
      const allowance = await this.respondents.allowMessage(trx, scope, 'employer_request');
      // The wallet row first, then the list counter: the order every create takes its locks in.
      const usage = await chargeUsage(trx, { ...scope, billable: EMPLOYMENT_BILLABLES.employment, subject: `reference ${input.reference}` });
      if (!usage.paid) throw new ApiError('PAYMENT_REQUIRED', 'Insufficient balance: the account must be funded before this verification can run');
      const seq = await nextSequence(trx, scope, EMPLOYMENT_SEQUENCE);
      let created: EmploymentRow;
      try {
        created = await insertEmployment(trx, scope, { seq, input, price: usage.price, now });
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw duplicate(input.reference);
        throw err;
      }
      const organization = await organizationName(trx, scope.orgId);
      const message = await this.respondents.invite(trx, allowance, {
        kind: 'employer',
        messageKind: 'employer_request',
        scope,
        verificationId: Number(created.id),
        to: input.employerEmail,
        compose: (link, expiresAt) =>
          employerRequestMessage(
            {
              organization,
              employerName: input.employerName,
              applicant: input.applicant,
              title: input.title,
              startDate: input.startDate,
              endDate: input.endDate,
            },
            link,
            expiresAt,
          ),
      });
      await inTransaction?.(trx, renderEmployment(created));
      return { row: created, message };
    });
    this.respondents.dispatch([message]);
    return renderEmployment(row);
  }

  async get(scope: Scope, id: number): Promise<EmploymentRecordData> {
    const row = await findEmployment(this.db, scope, id);
    if (!row) throw employmentNotFound();
    return renderEmployment(row);
  }

  /** A page of the scope's verifications; with a `viewer`, its records are logged as shown to them (src/access-log). */
  async list(scope: Scope, page: Page, viewer?: PageViewer): Promise<{ records: EmploymentRecordData[]; total: number }> {
    const { rows, total } = await listEmployments(this.db, scope, page, viewer);
    return { records: rows.map(renderEmployment), total };
  }

  /** Cancels a verification the employer has not answered (409 once it has ended) and refunds its price. */
  async cancel(scope: Scope, id: number, within?: (trx: Transaction<DB>) => Promise<void>): Promise<void> {
    const now = this.respondents.now();
    await this.db.transaction().execute(async (trx) => {
      const row = await lockEmployment(trx, scope, id);
      if (!row) throw employmentNotFound();
      if (row.state !== 'in_progress') {
        throw new ApiError('CONFLICT', `This employment verification is already ${row.state === 'cancelled' ? 'cancelled' : 'complete'} and cannot be cancelled`);
      }
      await applyEmploymentTransition(trx, row, { to: 'cancelled', now });
      if (row.price > 0) await refund(trx, scope.orgId, row.price, `employment ${row.reference} cancelled before the employer answered`);
      await within?.(trx);
    });
  }

  async forLink(link: RespondentLink): Promise<{ row: EmploymentRow; organization: string } | undefined> {
    const row = await findEmployment(this.db, link.scope, link.verificationId);
    if (!row) return undefined;
    return { row, organization: await organizationName(this.db, link.scope.orgId) };
  }

  /** Records the employer's answer from their page; the link is used by the same transaction. */
  async answer(link: RespondentLink, attestation: EmploymentAttestation): Promise<AnswerResult> {
    const now = this.respondents.now();
    return this.db.transaction().execute(async (trx): Promise<AnswerResult> => {
      const row = await lockEmployment(trx, link.scope, link.verificationId);
      if (!row) return { kind: 'gone' };
      if (row.state !== 'in_progress') return { kind: 'closed', row };
      if (!(await consumeLink(trx, link.tokenHash, now))) return { kind: 'used' };
      return { kind: 'recorded', row: await this.record(trx, row, attestation, now) };
    });
  }

  private async record(trx: Parameters<typeof applyEmploymentTransition>[0], row: EmploymentRow, attestation: EmploymentAttestation, now: Date) {
    const checked: EmploymentAttestation = { ...attestation, corrected: correctionsOf(row, attestation) };
    const { to, reason } = outcomeOf(checked);
    return applyEmploymentTransition(trx, row, { to, reason, patch: { attestation: JSON.stringify(checked), responded_at: now }, now });
  }

  /**
   * The sandbox test helper: `verified` is the employer confirming the claim as made; `failed` is
   * the employer declining to answer. Same transition and webhook as a real answer.
   */
  async completeForTest(scope: Scope, id: number, outcome: 'verified' | 'failed'): Promise<EmploymentRecordData> {
    if (scope.mode !== 'test') throw employmentNotFound();
    const now = this.respondents.now();
    const row = await this.db.transaction().execute(async (trx) => {
      const row = await lockEmployment(trx, scope, id);
      if (!row) throw employmentNotFound();
      if (row.state !== 'in_progress') {
        throw new ApiError('CONFLICT', `This employment verification is already ${row.state === 'cancelled' ? 'cancelled' : 'complete'}`);
      }
      await closeLinks(trx, 'employer', scope, id, now);
      const attestation: EmploymentAttestation =
        outcome === 'verified'
          ? {
              decision: 'confirmed',
              title: row.claimed_title,
              startDate: row.claimed_start_date,
              endDate: row.claimed_end_date,
              rehire: true,
              attestatorName: 'Sandbox Employer',
              attestatorTitle: 'Human Resources',
              attestatorContact: row.employer_email,
              comment: 'Completed by the sandbox test helper',
              via: 'test_helper',
            }
          : { decision: 'declined', comment: 'Completed by the sandbox test helper', via: 'test_helper' };
      return this.record(trx, row, attestation, now);
    });
    return renderEmployment(row);
  }
}
