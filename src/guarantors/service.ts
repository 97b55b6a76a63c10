import type { PageViewer } from '../access-log/service.js';
import type { Kysely, Transaction } from 'kysely';
import {
  applyAddressTransition,
  createAddressVerification,
  type AddressFinishedEvent,
} from '../addresses/service.js';
import { DEFAULT_ADDRESS_FAILURE } from '../addresses/states.js';
import type { VisitReport } from '../agents/visit.js';
import type { FileUrls } from '../files/urls.js';
import { maskIdentifier } from '../identities/lookups.js';
import type { Registry } from '../identities/registry/registry.js';
import type { AuthContext } from '../platform/auth.js';
import { chargeUsage, refund, type Billable } from '../platform/billing.js';
import type { DB, Mode } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { nextSequence, type Page, type Scope } from '../platform/pagination.js';
import { closeLinks, consumeLink, LINK_TTL_MS, MAX_FAILED_ATTEMPTS, recordFailedAttempt, type RespondentLink } from '../respondents/links.js';
import type { Respondents } from '../respondents/service.js';
import { checkGuarantorId, compactIdNumber } from './id-check.js';
import { guarantorRequestMessage } from './messages.js';
import { renderGuarantor, type GuarantorRecordData } from './render.js';
import { findGuarantor, GUARANTOR_SEQUENCE, insertGuarantor, listGuarantors, lockGuarantor, referenceTaken, updateGuarantor } from './repository.js';
import { GUARANTOR_REASONS } from './states.js';
import { applyGuarantorTransition, outcomeAfterAddress, outcomeOf } from './transition.js';
import type { AddressOutcome, GuarantorIdType, GuarantorResponse, GuarantorRow } from './tables.js';
import type { GuarantorInput } from './validate.js';

/** What creating a guarantor verification costs by default, in kobo (`vouch price set guarantor`). */
export const GUARANTOR_BILLABLES = {
  guarantor: { type: 'guarantor', defaultPrice: 100_000 },
} as const satisfies Record<string, Billable>;

export interface GuarantorServiceDeps {
  respondents: Respondents;
  /** The identity registry of a mode: test identities in test mode. */
  registry(mode: Mode): Registry;
  /** Signs photo URLs in the address records that address transitions render. */
  fileUrls: FileUrls;
  log?: { error(details: object, message: string): void } | undefined;
}

export type GuarantorAnswer =
  | { decision: 'declined' }
  | { decision: 'accepted'; idType: GuarantorIdType; idNumber: string; dob: string };

export type AnswerResult =
  | { kind: 'recorded'; row: GuarantorRow }
  /** The registry does not know the ID number; the link stays open for another try. */
  | { kind: 'retry'; attemptsLeft: number }
  | { kind: 'used' }
  | { kind: 'closed'; row: GuarantorRow }
  /** The verification no longer exists (its organization was deleted). */
  | { kind: 'gone' }
  /** No identity source could answer (every upstream down): nothing recorded, no try counted. */
  | { kind: 'unavailable' };

export const guarantorNotFound = () => new ApiError('NOT_FOUND_ERROR', 'Guarantor verification not found');

function duplicate(reference: string): ApiError {
  return new ApiError('CONFLICT', `A guarantor verification with reference "${reference}" already exists`);
}

const OPEN_STATES = new Set(['in_progress', 'awaiting_address']);

/** The address verification's status as the guarantor record counts it. */
function addressOutcomeOf(status: AddressFinishedEvent['status']): AddressOutcome {
  if (status === 'verified') return 'verified';
  return status === 'cancelled' ? 'cancelled' : 'failed';
}

async function organizationName(trx: Kysely<DB>, orgId: string): Promise<string> {
  const row = await trx.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirstOrThrow();
  return row.name;
}

type Log = GuarantorServiceDeps['log'];

/**
 * Whether an agent has started (or finished) the visit to the guarantor's address. Read without a
 * lock, inside the transaction holding the guarantor row (stopGuarantorAddress says why the address
 * row is never locked there): a visit starting just after is cancelled with the address, and its
 * report refused.
 */
async function addressVisited(trx: Transaction<DB>, scope: Scope, row: GuarantorRow): Promise<boolean> {
  if (row.address_verification_id === null) return false;
  if (row.address_outcome !== null) return true;
  const address = await trx
    .selectFrom('address_verifications')
    .select('visit_started_at')
    .where('id', '=', Number(row.address_verification_id))
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .executeTakeFirst();
  return address?.visit_started_at != null;
}

/**
 * Once a guarantor verification has ended without its address, no agent needs to visit: the
 * address verification is cancelled in a transaction of its own. Never inside one holding the
 * guarantor row: an agent's report locks the address row and then (listener) the guarantor row,
 * so the reverse order could deadlock. An address that finished meanwhile is left as it is.
 */
async function stopGuarantorAddress(db: Kysely<DB>, row: GuarantorRow, urls: FileUrls, now: Date, log: Log): Promise<void> {
  if (row.address_verification_id === null || row.address_outcome !== null) return;
  const scope = { orgId: row.org_id, mode: row.mode };
  try {
    await db.transaction().execute((trx) => applyAddressTransition(trx, scope, Number(row.address_verification_id), { to: 'cancelled' }, urls, now));
  } catch (err) {
    if (err instanceof ApiError && err.code === 'CONFLICT') return;
    log?.error({ err, guarantorId: Number(row.id) }, 'could not cancel the address verification of an ended guarantor verification');
  }
}

/**
 * Completes, as NOT_VERIFIED / NO_RESPONSE, up to `batch` verifications whose guarantor let the
 * link expire (LINK_TTL_MS after creation) without answering; returns how many. Rows another
 * worker holds are skipped. No refund: the request was made.
 */
export async function expireUnansweredGuarantors(db: Kysely<DB>, urls: FileUrls, now: Date, log?: Log, batch = 100): Promise<number> {
  const cutoff = new Date(now.getTime() - LINK_TTL_MS);
  const waiting = await db
    .selectFrom('guarantor_verifications')
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
      const row = await lockGuarantor(trx, scope, Number(candidate.id), { skipLocked: true });
      if (!row || row.state !== 'in_progress' || row.created_at > cutoff) return undefined;
      return applyGuarantorTransition(trx, row, { to: 'not_verified', reason: GUARANTOR_REASONS.noResponse, now });
    });
    if (!ended) continue;
    done++;
    await stopGuarantorAddress(db, ended, urls, now, log);
  }
  return done;
}

/**
 * Guarantor verifications: created through the API, answered by the guarantor on their page
 * (or by the sandbox test helper), completed — when the guarantor's address is verified too —
 * once that address verification finishes.
 */
export class GuarantorService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly deps: GuarantorServiceDeps,
  ) {}

  private now(): Date {
    return this.deps.respondents.now();
  }

  /**
   * Creates the verification, its address verification (verifyAddress), the guarantor's link and
   * message, and charges a live wallet, all in one transaction: a 402 or 409 leaves nothing.
   */
  async create(auth: AuthContext, input: GuarantorInput, inTransaction?: (trx: Transaction<DB>, record: GuarantorRecordData) => Promise<void>): Promise<GuarantorRecordData> {
    const scope: Scope = { orgId: auth.orgId, mode: auth.mode };
    const now = this.now();
    const { row, message } = await this.db.transaction().execute(async (trx) => {
      if (await referenceTaken(trx, scope, input.reference)) throw duplicate(input.reference);
      // Past the live mail cap nothing is charged or stored (429): the allowance comes first.
      const allowance = await this.deps.respondents.allowMessage(trx, scope, 'guarantor_request');
      // The wallet row first, then the list counters: the order every create takes its locks in.
      const usage = await chargeUsage(trx, { ...scope, billable: GUARANTOR_BILLABLES.guarantor, subject: `reference ${input.reference}` });
      if (!usage.paid) throw new ApiError('PAYMENT_REQUIRED', 'Insufficient balance: the account must be funded before this verification can run');
      const seq = await nextSequence(trx, scope, GUARANTOR_SEQUENCE);
      let created: GuarantorRow;
      try {
        created = await insertGuarantor(trx, scope, { seq, input, price: usage.price, now });
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw duplicate(input.reference);
        throw err;
      }
      if (input.verifyAddress) created = await this.createAddress(trx, scope, created, input, now);
      const organization = await organizationName(trx, scope.orgId);
      const message = await this.deps.respondents.invite(trx, allowance, {
        kind: 'guarantor',
        messageKind: 'guarantor_request',
        scope,
        verificationId: Number(created.id),
        to: input.email,
        compose: (link, expiresAt) =>
          guarantorRequestMessage(
            { organization, guarantorFirstname: input.firstname, applicant: input.applicant, idTypes: input.acceptableIdTypes },
            link,
            expiresAt,
          ),
      });
      await inTransaction?.(trx, renderGuarantor(created));
      return { row: created, message };
    });
    this.deps.respondents.dispatch([message]);
    return renderGuarantor(row);
  }

  /** The guarantor is the person at the address; the guarantor's price covers the visit. */
  private async createAddress(trx: Transaction<DB>, scope: Scope, row: GuarantorRow, input: GuarantorInput, now: Date) {
    const { street, city, lga, state, landmark } = input.address;
    const address = await createAddressVerification(
      trx,
      scope,
      {
        street,
        city,
        lga,
        state,
        landmark,
        applicant: { firstname: input.firstname, lastname: input.lastname, phone: input.phone || undefined },
        // The guarantor's consent covers the visit to the guarantor's address.
        consent: input.consent,
      },
      { chargeable: false, parent: { kind: 'guarantor', id: String(row.id) }, now },
    );
    return updateGuarantor(trx, scope, Number(row.id), { address_verification_id: address.id });
  }

  async get(scope: Scope, id: number): Promise<GuarantorRecordData> {
    const row = await findGuarantor(this.db, scope, id);
    if (!row) throw guarantorNotFound();
    return renderGuarantor(row);
  }

  /** A page of the scope's verifications; with a `viewer`, its records are logged as shown to them (src/access-log). */
  async list(scope: Scope, page: Page, viewer?: PageViewer): Promise<{ records: GuarantorRecordData[]; total: number }> {
    const { rows, total } = await listGuarantors(this.db, scope, page, viewer);
    return { records: rows.map(renderGuarantor), total };
  }

  /**
   * Cancels a verification still in progress (409 once it has ended). The price is refunded
   * while the guarantor has not answered and no agent has started the visit to their address (the
   * price covers the visit, whose report stays readable); a running address verification is
   * cancelled after.
   */
  async cancel(scope: Scope, id: number, within?: (trx: Transaction<DB>) => Promise<void>): Promise<void> {
    const now = this.now();
    const row = await this.db.transaction().execute(async (trx) => {
      const row = await lockGuarantor(trx, scope, id);
      if (!row) throw guarantorNotFound();
      if (!OPEN_STATES.has(row.state)) {
        throw new ApiError('CONFLICT', `This guarantor verification is already ${row.state === 'cancelled' ? 'cancelled' : 'complete'} and cannot be cancelled`);
      }
      if (row.price > 0 && row.responded_at === null && !(await addressVisited(trx, scope, row))) {
        await refund(trx, scope.orgId, row.price, `guarantor ${row.reference} cancelled before the guarantor answered`);
      }
      const cancelled = await applyGuarantorTransition(trx, row, { to: 'cancelled', now });
      await within?.(trx);
      return cancelled;
    });
    await this.stopAddress(row, now);
  }

  private stopAddress(row: GuarantorRow, now: Date): Promise<void> {
    return stopGuarantorAddress(this.db, row, this.deps.fileUrls, now, this.deps.log);
  }

  /** The verification a respondent link points at, with the asking organization's name. */
  async forLink(link: RespondentLink): Promise<{ row: GuarantorRow; organization: string } | undefined> {
    const row = await findGuarantor(this.db, link.scope, link.verificationId);
    if (!row) return undefined;
    return { row, organization: await organizationName(this.db, link.scope.orgId) };
  }

  /**
   * Records the guarantor's answer from their page. The ID is looked up before the transaction
   * (the registry may be the database itself); an unknown number leaves the link open for
   * another try, up to MAX_FAILED_ATTEMPTS, after which it counts as ID_NOT_FOUND.
   */
  async answer(link: RespondentLink, answer: GuarantorAnswer): Promise<AnswerResult> {
    const current = await findGuarantor(this.db, link.scope, link.verificationId);
    if (!current) return { kind: 'gone' };
    let response: GuarantorResponse = { decision: 'declined', via: 'respondent' };
    if (answer.decision === 'accepted') {
      let matches: Awaited<ReturnType<typeof checkGuarantorId>>;
      try {
        matches = await checkGuarantorId(this.deps.registry(link.scope.mode), answer.idType, answer.idNumber, current, answer.dob);
      } catch (err) {
        // The live registry's upstreams are all down: the guarantor did nothing wrong, so the
        // link stays open and the failed tries untouched.
        if (err instanceof ApiError && err.code === 'SERVICE_UNAVAILABLE') return { kind: 'unavailable' };
        throw err;
      }
      response = {
        decision: 'accepted',
        idType: answer.idType,
        idNumber: maskIdentifier(compactIdNumber(answer.idNumber)),
        found: matches !== undefined,
        ...(matches ? { matches } : {}),
        via: 'respondent',
      };
      if (!matches) {
        const attempts = await recordFailedAttempt(this.db, link.tokenHash);
        if (attempts < MAX_FAILED_ATTEMPTS) return { kind: 'retry', attemptsLeft: MAX_FAILED_ATTEMPTS - attempts };
      }
    }
    const now = this.now();
    const result = await this.db.transaction().execute(async (trx): Promise<AnswerResult> => {
      const row = await lockGuarantor(trx, link.scope, link.verificationId);
      if (!row) return { kind: 'gone' };
      if (row.state !== 'in_progress') return { kind: 'closed', row };
      if (!(await consumeLink(trx, link.tokenHash, now))) return { kind: 'used' };
      return { kind: 'recorded', row: await this.respond(trx, row, response, now) };
    });
    if (result.kind === 'recorded' && result.row.state === 'not_verified') await this.stopAddress(result.row, now);
    return result;
  }

  /** Applies an answer to a locked, in-progress row. */
  private async respond(trx: Transaction<DB>, row: GuarantorRow, response: GuarantorResponse, now: Date): Promise<GuarantorRow> {
    const { to, reason } = outcomeOf(response, row.verify_address, row.address_outcome);
    return applyGuarantorTransition(trx, row, {
      to,
      reason,
      patch: { response: JSON.stringify(response), responded_at: now },
      now,
    });
  }

  /**
   * The sandbox test helper: completes the verification as the guarantor (and, with
   * verifyAddress, the field agent) would. `verified`: the guarantor accepts with a matching ID
   * and the address is verified; `failed`: the guarantor declines, or, if the guarantor has
   * already accepted, the address is not verified.
   */
  async completeForTest(scope: Scope, id: number, outcome: 'verified' | 'failed'): Promise<GuarantorRecordData> {
    if (scope.mode !== 'test') throw guarantorNotFound();
    const now = this.now();
    let row = await this.db.transaction().execute(async (trx) => {
      const row = await lockGuarantor(trx, scope, id);
      if (!row) throw guarantorNotFound();
      if (!OPEN_STATES.has(row.state)) {
        throw new ApiError('CONFLICT', `This guarantor verification is already ${row.state === 'cancelled' ? 'cancelled' : 'complete'}`);
      }
      if (row.state !== 'in_progress') return row;
      const response: GuarantorResponse =
        outcome === 'verified'
          ? { decision: 'accepted', idType: row.acceptable_id_types[0]!, found: true, matches: { firstname: true, lastname: true, dob: true }, via: 'test_helper' }
          : { decision: 'declined', via: 'test_helper' };
      await closeLinks(trx, 'guarantor', scope, id, now);
      return this.respond(trx, row, response, now);
    });
    if (row.state === 'not_verified') await this.stopAddress(row, now);
    if (row.state === 'awaiting_address') {
      // The address completes through its own transition, as an agent's report would; its
      // listener completes this verification in the same transaction.
      const to = outcome === 'verified' ? 'verified' : 'not_verified';
      await this.db.transaction().execute((trx) =>
        applyAddressTransition(trx, scope, Number(row.address_verification_id), { to, report: testVisit(outcome) }, this.deps.fileUrls, now),
      );
      row = (await findGuarantor(this.db, scope, id))!;
    }
    return renderGuarantor(row);
  }

  /**
   * Listener of the addresses service (onAddressFinished), inside the transaction that finishes
   * the address verification: records its outcome and, if the guarantor has already answered,
   * completes the guarantor verification. Safe to run twice for one event.
   */
  readonly addressFinished = async (trx: Transaction<DB>, event: AddressFinishedEvent): Promise<void> => {
    if (event.parent?.kind !== 'guarantor' || !/^\d+$/.test(event.parent.id)) return;
    const row = await lockGuarantor(trx, event.scope, Number(event.parent.id));
    if (!row || Number(row.address_verification_id) !== event.id || row.address_outcome !== null) return;
    const addressOutcome = addressOutcomeOf(event.status);
    const patch = { address_outcome: addressOutcome };
    if (row.state !== 'awaiting_address') {
      await updateGuarantor(trx, event.scope, Number(row.id), patch);
      return;
    }
    const { to, reason } = outcomeAfterAddress(true, addressOutcome);
    await applyGuarantorTransition(trx, row, { to, reason, patch, now: this.now() });
  };
}

/** What a field agent reports from the sandbox visit of the guarantor's address. */
function testVisit(outcome: 'verified' | 'failed'): VisitReport {
  return {
    outcome,
    reason: outcome === 'failed' ? DEFAULT_ADDRESS_FAILURE : undefined,
    latitude: undefined,
    longitude: undefined,
    photoIds: [],
    neighbor: { name: '', comment: 'Completed by the sandbox test helper', phone: '' },
    findings: {},
    reviewReason: undefined,
  };
}
