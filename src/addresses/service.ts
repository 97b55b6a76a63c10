import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { PageViewer } from '../access-log/service.js';
import { closeFieldTask, openFieldTask } from '../agents/service.js';
import { OPEN_STATUSES, type VisitReport, type VisitStatus } from '../agents/visit.js';
import type { FileUrls } from '../files/urls.js';
import { consentColumns, workflowConsent, type ConsentInput } from '../consent/consent.js';
import { chargeUsage, recordUsage, refund, type Billable } from '../platform/billing.js';
import type { DB, RiskLevel } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { nextSequence, type Page, type Scope } from '../platform/pagination.js';
import { scopedTable } from '../platform/scoped-table.js';
import { assertTransition } from '../platform/state-machine.js';
import { enqueueEvent, WEBHOOK_FILE_URL_TTL_SECONDS } from '../webhooks/events.js';
import { checkApplicant, checkPlace, checkReference, Problems, requireMinimumRisk, type ApplicantInput, type PlaceInput } from './input.js';
import { ADDRESS_RECORD_COLUMNS, renderAddress, type AddressRecord, type AddressRecordRow } from './render.js';
import { ADDRESS_MACHINE } from './states.js';
import type { AddressRow } from './tables.js';

/**
 * Address verifications: the service other modules use, and the one transition function.
 *
 * For other modules (guarantors), the whole contract is:
 *
 *   createAddressVerification(trx, scope, input, { chargeable: false, parent: { kind: 'guarantor', id } })
 *     -> Promise<AddressRecord>   creates it inside the caller's transaction (validation errors
 *                                 are 400 VALIDATION_ERROR ApiErrors; nothing is charged when
 *                                 chargeable is false; a live one is assigned to a field agent)
 *   onAddressFinished(listener) -> () => void (unsubscribe)
 *     listener(trx, event) runs inside the transaction that completes or cancels an address
 *     verification, after the row is updated and its webhook queued; a listener that throws
 *     rolls the transition back. event = { scope, id, reference, parent, status, reason, record }
 *     where status is 'verified' | 'not_verified' | 'cancelled' and parent is what was passed
 *     at creation (or null).
 */

export const ADDRESS_BILLABLES = {
  address: { type: 'address', defaultPrice: 150_000 },
  address_marketplace: { type: 'address_marketplace', defaultPrice: 20_000 },
} as const satisfies Record<string, Billable>;

/** Sequence kind of address verifications (pagination). */
export const ADDRESS_SEQUENCE = 'address';
const addresses = scopedTable('address_verifications', ADDRESS_SEQUENCE);

/** The idTypes of the API (spec); FRSC (drivers licence) is also accepted from other modules. */
export const ADDRESS_ID_TYPES = ['BVN', 'NIN', 'KYC'] as const;
const INTERNAL_ID_TYPES = [...ADDRESS_ID_TYPES, 'FRSC'] as const;

export interface AddressVerificationInput extends PlaceInput {
  reference?: string | undefined;
  applicant?: ApplicantInput | undefined;
  /** The person's consent (src/consent/consent.ts). */
  consent?: ConsentInput | undefined;
}

export interface AddressParent {
  kind: string;
  id: string;
}

export interface CreateAddressOptions {
  /** Charge the wallet (live mode) the address price; false when a parent verification paid. */
  chargeable: boolean;
  parent?: AddressParent;
  /** Applicant fields the organization's risk level requires (the API passes the caller's level). */
  riskLevel?: RiskLevel;
  /** The organization requires consent (a missing one is a 400 problem); a parent's creation passes false. */
  consentRequired?: boolean;
  /** Accept the API's idTypes only (default), or also FRSC. */
  idTypes?: 'api' | 'internal';
  now?: Date;
  /** The generated reference when the input has none. */
  generateReference?: () => string;
}

export type AddressOutcome = Extract<VisitStatus, 'verified' | 'not_verified' | 'cancelled'>;

export interface AddressFinishedEvent {
  scope: Scope;
  id: number;
  reference: string;
  parent: AddressParent | null;
  status: AddressOutcome;
  reason: string | null;
  record: AddressRecord;
}

export type AddressFinishedListener = (trx: Transaction<DB>, event: AddressFinishedEvent) => Promise<void>;

const listeners = new Set<AddressFinishedListener>();

export function onAddressFinished(listener: AddressFinishedListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export const generateAddressReference = () => `adr_${randomBytes(10).toString('hex')}`;

function validate(input: AddressVerificationInput, options: CreateAddressOptions) {
  const problems = new Problems();
  const reference = checkReference(input.reference, problems);
  const place = checkPlace(input, problems);
  const { applicant, identityKey } = checkApplicant(
    input.applicant,
    {
      required: ['firstname', 'lastname'],
      riskLevel: options.riskLevel ?? 'NONE',
      idTypes: options.idTypes === 'internal' ? INTERNAL_ID_TYPES : ADDRESS_ID_TYPES,
    },
    problems,
  );
  const consent = workflowConsent(input.consent, options.consentRequired ?? false, problems);
  problems.throwIfAny();
  return { reference, place, applicant, identityKey, consent };
}

function duplicate(reference: string): ApiError {
  return new ApiError('CONFLICT', `An address verification with reference "${reference}" already exists`);
}

export function paymentRequired(): ApiError {
  return new ApiError('PAYMENT_REQUIRED', 'Insufficient balance: the account must be funded before this verification can run');
}

/**
 * Creates an address verification inside the caller's transaction: validates, takes the next
 * list position, charges a live wallet (402 and nothing kept when it is short), and opens the
 * field task of a live verification. A duplicate reference is 409 with nothing charged.
 */
export async function createAddressVerification(
  trx: Transaction<DB>,
  scope: Scope,
  input: AddressVerificationInput,
  options: CreateAddressOptions,
): Promise<AddressRecord> {
  const checked = validate(input, options);
  const now = options.now ?? new Date();
  const reference = checked.reference ?? (options.generateReference ?? generateAddressReference)();
  if (await addresses.referenceTaken(trx, scope, reference)) throw duplicate(reference);
  let charged = 0;
  if (options.chargeable) {
    const usage = await chargeUsage(trx, { ...scope, billable: ADDRESS_BILLABLES.address, subject: `reference ${reference}` });
    if (!usage.paid) throw paymentRequired();
    charged = usage.price;
  }
  const seq = await nextSequence(trx, scope, ADDRESS_SEQUENCE);
  let row: AddressRow;
  try {
    row = await trx
      .insertInto('address_verifications')
      .values({
        org_id: scope.orgId,
        mode: scope.mode,
        seq,
        reference,
        applicant: JSON.stringify(checked.applicant),
        applicant_id_key: checked.identityKey ?? null,
        ...checked.place,
        charged,
        parent_kind: options.parent?.kind ?? null,
        parent_id: options.parent?.id ?? null,
        ...consentColumns(checked.consent),
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (err) {
    // Two creates with one new reference raced past the check above.
    if ((err as { code?: string }).code === '23505') throw duplicate(reference);
    throw err;
  }
  if (scope.mode === 'live') {
    await openFieldTask(trx, { kind: 'address', verificationId: Number(row.id), ...scope, state: row.state, lga: row.lga }, now);
  }
  return renderAddress(row, undefined);
}

/**
 * Creates an address verification for a caller of the API (POST /v1/verifications/addresses,
 * and the portal's form on the organization's behalf): the risk level's minimum, the create in
 * its own transaction, and a refusal for a short wallet recorded as usage before the 402.
 */
export async function createAddressForCaller(
  db: Kysely<DB>,
  caller: Scope & { riskLevel: RiskLevel; consentRequired?: boolean },
  input: AddressVerificationInput,
  /** More work in the create's transaction (the API keeps its Idempotency-Key's answer there). */
  inTransaction?: (trx: Kysely<DB>, record: AddressRecord) => Promise<void>,
): Promise<AddressRecord> {
  requireMinimumRisk(caller.riskLevel, 'LOW', 'Address verification');
  const scope: Scope = { orgId: caller.orgId, mode: caller.mode };
  try {
    return await db.transaction().execute(async (trx) => {
      const record = await createAddressVerification(trx, scope, input, { chargeable: true, riskLevel: caller.riskLevel, consentRequired: caller.consentRequired ?? false });
      await inTransaction?.(trx, record);
      return record;
    });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'PAYMENT_REQUIRED') {
      await recordUsage(db, { ...scope, billable: ADDRESS_BILLABLES.address, subject: 'create' }, 'insufficient_funds');
    }
    throw err;
  }
}

/** Parses a path id: not a number is 400, a number no row can have is 404. */
export function parseId(raw: string, what: string): number {
  if (!/^\d+$/.test(raw)) throw new ApiError('VALIDATION_ERROR', 'id must be a whole number');
  const id = Number(raw);
  if (!Number.isSafeInteger(id) || id < 1) throw new ApiError('NOT_FOUND_ERROR', `${what} not found`);
  return id;
}

export const addressNotFound = () => new ApiError('NOT_FOUND_ERROR', 'Address verification not found');

export async function getAddressVerification(db: Kysely<DB>, scope: Scope, id: number, urls: FileUrls): Promise<AddressRecord> {
  const row = await addresses.find(db, scope, id);
  if (!row) throw addressNotFound();
  return renderAddress(row, urls);
}

/** A page of the scope's address verifications, newest first, and the exact total. */
export async function listAddressVerifications(
  db: Kysely<DB>,
  scope: Scope,
  page: Page,
  urls: FileUrls,
  viewer?: PageViewer,
): Promise<{ records: AddressRecord[]; total: number }> {
  const { rows, total } = await addresses.page<AddressRecordRow>(db, scope, page, ADDRESS_RECORD_COLUMNS, viewer);
  return { records: rows.map((row) => renderAddress(row, urls)), total };
}

export type AddressChange =
  | { to: 'visiting' }
  | { to: 'cancelled' }
  | { to: 'verified' | 'not_verified'; report: VisitReport };

/**
 * The one function that moves an address verification between states (ADDRESS_MACHINE): it
 * locks and updates the row, closes the field task, refunds a cancellation before any visit,
 * queues the webhook and tells the listeners — all in the caller's transaction.
 */
export async function applyAddressTransition(
  trx: Transaction<DB>,
  scope: Scope,
  id: number,
  change: AddressChange,
  urls: FileUrls,
  now = new Date(),
): Promise<AddressRecord> {
  const row = await addresses.lock(trx, scope, id);
  if (!row) throw addressNotFound();
  if (change.to === 'cancelled' && !OPEN_STATUSES.includes(row.status)) {
    throw new ApiError('CONFLICT', `This address verification is already ${row.status === 'cancelled' ? 'cancelled' : 'complete'} and cannot be cancelled`);
  }
  assertTransition(ADDRESS_MACHINE, row.status, change.to);
  let updated: AddressRow;
  if (change.to === 'visiting') {
    updated = await addresses.update(trx, scope, id, { status: 'visiting', visit_started_at: now });
    return renderAddress(updated, urls);
  }
  if (change.to === 'cancelled') {
    updated = await addresses.update(trx, scope, id, { status: 'cancelled', cancelled_at: now });
    if (row.charged > 0 && row.visit_started_at === null) {
      await refund(trx, scope.orgId, row.charged, `address ${row.reference} cancelled before a visit`);
    }
  } else {
    const { report } = change;
    updated = await addresses.update(trx, scope, id, {
      status: change.to,
      reason: change.to === 'not_verified' ? (report.reason ?? null) : null,
      visit_started_at: row.visit_started_at ?? now,
      completed_at: now,
      latitude: report.latitude ?? null,
      longitude: report.longitude ?? null,
      photo_ids: report.photoIds,
      neighbor: JSON.stringify(report.neighbor),
      flagged_for_review: report.reviewReason !== undefined,
      review_reason: report.reviewReason ?? null,
    });
  }
  await closeFieldTask(trx, 'address', id, change.to, now);
  const record = renderAddress(updated, urls);
  // The body is sent for days (retries): its photo links are signed to outlast them.
  const data = renderAddress(updated, urls.lasting(WEBHOOK_FILE_URL_TTL_SECONDS));
  await enqueueEvent(trx, { ...scope, type: change.to === 'cancelled' ? 'address.cancelled' : 'address.completed', data }, now);
  const event: AddressFinishedEvent = {
    scope,
    id,
    reference: updated.reference,
    parent: updated.parent_kind && updated.parent_id ? { kind: updated.parent_kind, id: updated.parent_id } : null,
    status: change.to,
    reason: updated.reason,
    record,
  };
  for (const listener of listeners) await listener(trx, event);
  return record;
}
