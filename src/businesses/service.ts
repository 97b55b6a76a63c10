import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { PageViewer } from '../access-log/service.js';
import { checkApplicant, checkPlace, checkReference, Problems, text, type ApplicantInput, type Place, type PlaceInput } from '../addresses/input.js';
import { paymentRequired } from '../addresses/service.js';
import { consentColumns, workflowConsent, type Consent, type ConsentInput } from '../consent/consent.js';
import { closeFieldTask, openFieldTask } from '../agents/service.js';
import { OPEN_STATUSES, type StoredApplicant, type VisitReport } from '../agents/visit.js';
import type { FileUrls } from '../files/urls.js';
import { IDENTITY_BILLABLES } from '../identities/lookups.js';
import type { Registry } from '../identities/registry/registry.js';
import { chargeUsage, priceOf, refund, type Billable } from '../platform/billing.js';
import type { DB, RiskLevel } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { nextSequence, type Page, type Scope } from '../platform/pagination.js';
import { scopedTable } from '../platform/scoped-table.js';
import { assertTransition } from '../platform/state-machine.js';
import { enqueueEvent, WEBHOOK_FILE_URL_TTL_SECONDS } from '../webhooks/events.js';
import { BUSINESS_RECORD_COLUMNS, renderBusiness, type BusinessRecord, type BusinessRecordRow } from './render.js';
import { findRegisteredCompany, registeredPlace } from './registered-address.js';
import { BUSINESS_MACHINE } from './states.js';
import type { AddressSource, BusinessRow } from './tables.js';

/** Business verifications: create, read, list, and the one transition function. */

export const BUSINESS_BILLABLES = {
  business: { type: 'business', defaultPrice: 250_000 },
} as const satisfies Record<string, Billable>;

export const BUSINESS_SEQUENCE = 'business';
const businesses = scopedTable('business_verifications', BUSINESS_SEQUENCE);
export const BUSINESS_ID_TYPES = ['BVN', 'NIN', 'KYC PHONE', 'DRIVERS LICENCE'] as const;
export const BUSINESS_TYPES = ['Formal', 'Informal'] as const;
const RC_NUMBER = /^(RC|BN|IT)?\d{1,10}$/;

export interface BusinessVerificationInput extends PlaceInput {
  reference?: string | undefined;
  name?: string | undefined;
  type?: string | undefined;
  /** Sample-request aliases of name and type. */
  businessName?: string | undefined;
  businessType?: string | undefined;
  rcNumber?: string | undefined;
  canContactPoc?: boolean | undefined;
  applicant?: ApplicantInput | undefined;
  /** The person's consent (src/consent/consent.ts). */
  consent?: ConsentInput | undefined;
}

export interface CheckBusinessOptions {
  riskLevel?: RiskLevel;
  /** The organization requires consent: a missing one is a 400 problem. */
  consentRequired?: boolean;
}

export interface CreateBusinessOptions {
  chargeable: boolean;
  now?: Date;
  generateReference?: () => string;
  /** The screening of the company made in the same transaction (src/businesses/screening.ts). */
  screeningId?: number;
}

export const generateBusinessReference = () => `biz_${randomBytes(10).toString('hex')}`;

/** A business request whose every field but the place (and the name) is valid. */
export interface CheckedBusiness {
  reference: string | undefined;
  /** Undefined when the request sent no street, lga or state but an rcNumber: the registry's head office is visited. */
  place: Place | undefined;
  name: string | undefined;
  type: (typeof BUSINESS_TYPES)[number] | null;
  rcNumber: string;
  canContactPoc: boolean;
  applicant: StoredApplicant;
  consent: Consent | undefined;
}

/** A business request ready to be created: the place to visit and where it came from. */
export interface LocatedBusiness extends CheckedBusiness {
  place: Place;
  name: string;
  addressSource: AddressSource;
}

const PLACE_FIELDS = ['street', 'lga', 'state'] as const;

/**
 * Checks a business request; throws one 400 naming every problem. A request with an rcNumber
 * and none of street, lga and state is not missing its place: `locateBusiness` looks it up.
 */
export function checkBusinessRequest(input: BusinessVerificationInput, options: CheckBusinessOptions = {}): CheckedBusiness {
  const problems = new Problems();
  const reference = checkReference(input.reference, problems);
  const typeRaw = text(input.type) ?? text(input.businessType);
  const type = BUSINESS_TYPES.find((value) => value === typeRaw) ?? null;
  if (typeRaw !== undefined && !type) problems.add(`type must be one of ${BUSINESS_TYPES.join(', ')}`);
  const rcRaw = text(input.rcNumber);
  const rcNumber = rcRaw?.replace(/[\s-]+/g, '').toUpperCase();
  const rcValid = rcNumber !== undefined && RC_NUMBER.test(rcNumber);
  if (rcNumber !== undefined && !rcValid) problems.add('rcNumber must be a registration number such as 1284395 or RC1284395');
  const fromRegistry = rcValid && PLACE_FIELDS.every((field) => text(input[field]) === undefined);
  const place = fromRegistry ? undefined : checkPlace(input, problems);
  const name = text(input.name) ?? text(input.businessName);
  if (name === undefined && !fromRegistry) problems.add('name (or businessName) is required');
  else if (name !== undefined && name.length > 200) problems.add('name must be at most 200 characters');
  const { applicant } = checkApplicant(input.applicant, { required: [], riskLevel: options.riskLevel ?? 'NONE', idTypes: BUSINESS_ID_TYPES }, problems);
  const consent = workflowConsent(input.consent, options.consentRequired ?? false, problems);
  problems.throwIfAny();
  return { reference, place, name, type, rcNumber: rcNumber ?? '', canContactPoc: input.canContactPoc ?? false, applicant, consent };
}

/**
 * The place a checked request is visited at: its own, or (none sent) the company's registered
 * head office, found by rcNumber in the corporate registry. 400 naming the missing fields when
 * the company is not found or its address names no state and LGA we know; 503 when the
 * registry cannot answer. The lookup is not charged: the business price covers it.
 */
export async function locateBusiness(checked: CheckedBusiness, registry: Registry): Promise<LocatedBusiness> {
  if (checked.place) return { ...checked, place: checked.place, name: checked.name!, addressSource: 'applicant' };
  const company = await findRegisteredCompany(registry, checked.rcNumber);
  const found = company ? registeredPlace(company) : {};
  const name = checked.name ?? company?.companyName;
  if (PLACE_FIELDS.some((field) => found[field] === undefined)) {
    // One answer whether the company is unknown or its address unusable, naming every field as the
    // request left them: this 400 is not charged, so it must not tell which companies exist.
    const problems = new Problems();
    if (checked.name === undefined) problems.add('name (or businessName) is required');
    for (const field of PLACE_FIELDS) problems.add(`${field} is required`);
    problems.add(`the corporate registry has no head-office address we can visit for rcNumber ${checked.rcNumber}, so the address must be sent`);
    problems.throwIfAny();
  }
  if (name === undefined) throw new ApiError('VALIDATION_ERROR', 'name (or businessName) is required');
  const place: Place = { street: found.street!, city: found.city ?? '', landmark: '', lga: found.lga!, state: found.state!, country: 'Nigeria' };
  return { ...checked, place, name, addressSource: 'corporate_registry' };
}

/**
 * A live wallet short of the business price answers 402 before the corporate registry is asked,
 * so an unfunded account cannot have the registry's sources queried for nothing. The charge
 * itself stays in `createBusinessVerification`'s transaction.
 */
export async function requireBusinessFunds(db: Kysely<DB>, scope: Scope): Promise<void> {
  if (scope.mode !== 'live') return;
  const [price, org] = await Promise.all([
    priceOf(db, BUSINESS_BILLABLES.business),
    db.selectFrom('organizations').select('balance').where('id', '=', scope.orgId).executeTakeFirst(),
  ]);
  if (!org || Number(org.balance) < price) throw paymentRequired();
}

function duplicate(reference: string): ApiError {
  return new ApiError('CONFLICT', `A business verification with reference "${reference}" already exists`);
}

/**
 * Creates a located business verification inside the caller's transaction: charges a live
 * wallet (402 and nothing kept when short), takes the next list position and opens the field
 * task of a live verification. A duplicate reference is 409 with nothing charged.
 */
export async function createBusinessVerification(
  trx: Transaction<DB>,
  scope: Scope,
  checked: LocatedBusiness,
  options: CreateBusinessOptions,
): Promise<BusinessRecord> {
  const now = options.now ?? new Date();
  const reference = checked.reference ?? (options.generateReference ?? generateBusinessReference)();
  if (await businesses.referenceTaken(trx, scope, reference)) throw duplicate(reference);
  let charged = 0;
  if (options.chargeable) {
    const usage = await chargeUsage(trx, { ...scope, billable: BUSINESS_BILLABLES.business, subject: `reference ${reference}` });
    if (!usage.paid) throw paymentRequired();
    charged = usage.price;
  }
  const seq = await nextSequence(trx, scope, BUSINESS_SEQUENCE);
  let row: BusinessRow;
  try {
    row = await trx
      .insertInto('business_verifications')
      .values({
        org_id: scope.orgId,
        mode: scope.mode,
        seq,
        reference,
        applicant: JSON.stringify(checked.applicant),
        name: checked.name,
        type: checked.type,
        rc_number: checked.rcNumber,
        can_contact_poc: checked.canContactPoc,
        ...checked.place,
        address_source: checked.addressSource,
        screening_id: options.screeningId ?? null,
        charged,
        ...consentColumns(checked.consent),
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw duplicate(reference);
    throw err;
  }
  if (scope.mode === 'live') {
    await openFieldTask(trx, { kind: 'business', verificationId: Number(row.id), ...scope, state: row.state, lga: row.lga }, now);
  }
  return renderBusiness(row, undefined);
}

export const businessNotFound = () => new ApiError('NOT_FOUND_ERROR', 'Business verification not found');

export async function getBusinessVerification(db: Kysely<DB>, scope: Scope, id: number, urls: FileUrls): Promise<BusinessRecord> {
  const row = await businesses.find(db, scope, id);
  if (!row) throw businessNotFound();
  return renderBusiness(row, urls);
}

export async function listBusinessVerifications(
  db: Kysely<DB>,
  scope: Scope,
  page: Page,
  urls: FileUrls,
  viewer?: PageViewer,
): Promise<{ records: BusinessRecord[]; total: number }> {
  const { rows, total } = await businesses.page<BusinessRecordRow>(db, scope, page, BUSINESS_RECORD_COLUMNS, viewer);
  return { records: rows.map((row) => renderBusiness(row, urls)), total };
}

export type BusinessChange =
  | { to: 'visiting' }
  | { to: 'cancelled' }
  | { to: 'verified' | 'not_verified'; report: VisitReport };

/**
 * The one function that moves a business verification between states (BUSINESS_MACHINE): it
 * locks and updates the row, closes the field task, refunds a cancellation before any visit and
 * queues the webhook, in the caller's transaction.
 */
export async function applyBusinessTransition(
  trx: Transaction<DB>,
  scope: Scope,
  id: number,
  change: BusinessChange,
  urls: FileUrls,
  now = new Date(),
): Promise<BusinessRecord> {
  const row = await businesses.lock(trx, scope, id);
  if (!row) throw businessNotFound();
  if (change.to === 'cancelled' && !OPEN_STATUSES.includes(row.status)) {
    throw new ApiError('CONFLICT', `This business verification is already ${row.status === 'cancelled' ? 'cancelled' : 'complete'} and cannot be cancelled`);
  }
  assertTransition(BUSINESS_MACHINE, row.status, change.to);
  let updated: BusinessRow;
  if (change.to === 'visiting') {
    updated = await businesses.update(trx, scope, id, { status: 'visiting', visit_started_at: now });
    return renderBusiness(updated, urls);
  }
  if (change.to === 'cancelled') {
    updated = await businesses.update(trx, scope, id, { status: 'cancelled', cancelled_at: now });
    if (row.charged > 0 && row.visit_started_at === null) {
      // A head office found in the corporate registry was shown at create (the company's name and
      // address): that lookup is kept at the cac price, the visit refunded, so create-then-cancel
      // is not a free CAC lookup.
      const kept = row.address_source === 'corporate_registry' ? Math.min(row.charged, await priceOf(trx, IDENTITY_BILLABLES.cac)) : 0;
      const description = kept > 0 ? `business ${row.reference} cancelled before a visit (its corporate registry lookup kept)` : `business ${row.reference} cancelled before a visit`;
      if (row.charged > kept) await refund(trx, scope.orgId, row.charged - kept, description);
    }
  } else {
    const { report } = change;
    updated = await businesses.update(trx, scope, id, {
      status: change.to,
      reason: change.to === 'not_verified' ? (report.reason ?? null) : null,
      visit_started_at: row.visit_started_at ?? now,
      completed_at: now,
      latitude: report.latitude ?? null,
      longitude: report.longitude ?? null,
      photo_ids: report.photoIds,
      neighbor: JSON.stringify(report.neighbor),
      findings: JSON.stringify(report.findings),
      flagged_for_review: report.reviewReason !== undefined,
      review_reason: report.reviewReason ?? null,
    });
  }
  await closeFieldTask(trx, 'business', id, change.to, now);
  const record = renderBusiness(updated, urls);
  // The body is sent for days (retries): its photo links are signed to outlast them.
  const data = renderBusiness(updated, urls.lasting(WEBHOOK_FILE_URL_TTL_SECONDS));
  await enqueueEvent(trx, { ...scope, type: change.to === 'cancelled' ? 'business.cancelled' : 'business.completed', data }, now);
  return record;
}
