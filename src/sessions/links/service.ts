import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { DB, Mode, RiskLevel } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { Problems, text } from '../../respondents/fields.js';
import { checkCreateSession, type CreateSessionInput } from '../input.js';
import { createSession } from '../service.js';
import type { SessionIdType } from '../tables.js';
import { checkSpendLimit, sessionPriceIn, spentBy, spentOut, type LinkSpend } from './spend.js';
import type { LinkRow, VerificationLinksTable } from './tables.js';

/**
 * Verification links (docs/sessions.md, "Verification links"): a public link a customer shares
 * without writing code. Each visitor who presses "Start verification" gets a new session of the
 * link's organization and mode, made by the same `createSession` as POST /v1/verifications/sessions
 * (price check, billing at completion, webhooks, test/live), counted against the link's limit in
 * the session's own transaction.
 */

export const MAX_LINK_NAME = 100;
export const MAX_SESSION_LIMIT = 100_000;
/** A link lives at most a year: a forgotten poster should stop working on its own. */
export const MAX_LINK_DAYS = 366;
export const MAX_REFERENCE_PREFIX = 40;
/** Each session's metadata names its link under this key; the link's own metadata may not use it. */
export const LINK_METADATA_KEY = 'verificationLink';
const MAX_LINK_METADATA_KEYS = 19;

export interface Scope {
  orgId: string;
  mode: Mode;
}

export interface CreateLinkInput {
  name?: string | undefined;
  idTypes?: string[] | undefined;
  checks?: { liveness?: boolean | undefined; faceMatch?: boolean | undefined } | undefined;
  redirectUrl?: string | undefined;
  sessionLimit?: number | undefined;
  expiresAt?: string | undefined;
  referencePrefix?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** Kobo the link's sessions may cost in all; absent or null: no cap. */
  spendLimit?: number | null | undefined;
}

export interface LinkView {
  id: string;
  name: string;
  mode: Mode;
  url: string;
  idTypes: SessionIdType[];
  checks: { liveness: boolean; faceMatch: boolean };
  redirectUrl: string | null;
  referencePrefix: string | null;
  metadata: Record<string, string>;
  sessionLimit: number;
  sessionsStarted: number;
  /** The owner's cap on what the link's sessions may cost in all (kobo); null: none. */
  spendLimit: number | null;
  /** What the link's sessions have paid (kobo). */
  spent: number;
  expiresAt: string;
  disabledAt: string | null;
  createdAt: string;
  /** active, disabled, expired, full or spent: what a visitor gets now. */
  status: LinkStatus;
}

/** `spent`: the spend cap cannot pay one more session. */
export type LinkStatus = 'active' | 'disabled' | 'expired' | 'full' | 'spent';

export const linkNotFound = () => new ApiError('NOT_FOUND_ERROR', 'No such verification link in this mode');

/** The link's public address. */
export function linkUrl(publicUrl: string, code: string): string {
  return `${publicUrl}/l/${code}`;
}

/** 128 random bits, base64url (22 characters). */
export function randomLinkCode(): string {
  return randomBytes(16).toString('base64url');
}

/** Whether a path segment could be a link code (anything else is "not found" without a query). */
export function isLinkCodeShaped(code: string): boolean {
  return /^[A-Za-z0-9_-]{22}$/.test(code);
}

/** What a visitor gets now; without `spend` (what the sessions paid), a spend cap is not looked at. */
export function statusOf(row: Pick<LinkRow, 'disabled_at' | 'expires_at' | 'sessions_started' | 'session_limit' | 'spend_limit'>, now = new Date(), spend?: LinkSpend): LinkStatus {
  if (row.disabled_at) return 'disabled';
  if (row.expires_at.getTime() <= now.getTime()) return 'expired';
  if (row.sessions_started >= row.session_limit) return 'full';
  if (spend && spentOut(row, spend)) return 'spent';
  return 'active';
}

export function renderLink(row: LinkRow, publicUrl: string, spend: LinkSpend, now = new Date()): LinkView {
  return {
    id: row.public_id,
    name: row.name,
    mode: row.mode,
    url: linkUrl(publicUrl, row.code),
    idTypes: row.id_types,
    checks: { liveness: row.check_liveness, faceMatch: row.check_face_match },
    redirectUrl: row.redirect_url,
    referencePrefix: row.reference_prefix,
    metadata: row.metadata,
    sessionLimit: row.session_limit,
    sessionsStarted: row.sessions_started,
    spendLimit: row.spend_limit === null ? null : Number(row.spend_limit),
    spent: spend.spent,
    expiresAt: row.expires_at.toISOString(),
    disabledAt: row.disabled_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    status: statusOf(row, now, spend),
  };
}

interface CheckedLink {
  name: string;
  idTypes: SessionIdType[];
  liveness: boolean;
  faceMatch: boolean;
  redirectUrl: string | null;
  referencePrefix: string | null;
  metadata: Record<string, string>;
  sessionLimit: number;
  spendLimit: number | null;
  expiresAt: Date;
}

const EXPIRES_FORMAT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** The field checks that creating and editing share; each adds its problems and answers the value. */
function checkName(raw: string | undefined, problems: Problems): string | undefined {
  const name = text(raw);
  if (name === undefined) problems.add('name is required: a name only your team sees, e.g. "Agent onboarding, Kano"');
  else if (name.length > MAX_LINK_NAME) problems.add(`name must be at most ${MAX_LINK_NAME} characters`);
  else if (/[\u0000-\u001f\u007f]/.test(name)) problems.add('name must not contain control characters');
  else return name;
  return undefined;
}

function checkSessionLimit(limit: number | undefined, problems: Problems): number | undefined {
  if (limit === undefined) problems.add('sessionLimit is required: how many sessions the link may start in all');
  else if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SESSION_LIMIT) problems.add(`sessionLimit must be a whole number from 1 to ${MAX_SESSION_LIMIT.toLocaleString('en')}`);
  else return limit;
  return undefined;
}

function checkExpiry(raw: string | undefined, now: Date, problems: Problems): Date | undefined {
  const value = text(raw);
  if (value === undefined) {
    problems.add('expiresAt is required: when the link stops starting sessions');
    return undefined;
  }
  const time = EXPIRES_FORMAT.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time)) problems.add('expiresAt must be an ISO 8601 date-time with a time zone, e.g. 2026-12-31T23:59:00Z');
  else if (time <= now.getTime()) problems.add('expiresAt must be in the future');
  else if (time > now.getTime() + MAX_LINK_DAYS * 86_400_000) problems.add(`expiresAt must be within ${MAX_LINK_DAYS} days`);
  else return new Date(time);
  return undefined;
}

/** null: no prefix (generated references). */
function checkPrefix(raw: string | null | undefined, problems: Problems): string | null {
  const prefix = text(raw);
  if (prefix === undefined) return null;
  if (prefix.length > MAX_REFERENCE_PREFIX || !/^[A-Za-z0-9_.-]+$/.test(prefix)) {
    problems.add(`referencePrefix must be 1 to ${MAX_REFERENCE_PREFIX} letters, digits, dots, dashes or underscores`);
  }
  return prefix;
}

function checkLinkMetadataKeys(metadata: Record<string, unknown>, problems: Problems): void {
  if (Object.keys(metadata).length > MAX_LINK_METADATA_KEYS) problems.add(`metadata may hold at most ${MAX_LINK_METADATA_KEYS} keys (each session also gets "${LINK_METADATA_KEY}")`);
  if (Object.hasOwn(metadata, LINK_METADATA_KEY)) problems.add(`metadata.${LINK_METADATA_KEY} is set by Vouch on each session (the link's id); choose another key`);
}

/** The session settings, by the sessions' own rules (their messages name the same fields), so a link never holds settings a session would refuse. */
function checkSessionSettings(input: Pick<CreateLinkInput, 'idTypes' | 'checks' | 'redirectUrl' | 'metadata'>, now: Date, problems: Problems) {
  try {
    return checkCreateSession({ idTypes: input.idTypes, checks: input.checks, redirectUrl: input.redirectUrl, metadata: input.metadata }, { riskLevel: 'NONE', consentRequired: false, now });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    for (const message of err.message.split('; ')) problems.add(message);
    return undefined;
  }
}

/**
 * Validates a new link (every problem named in one 400). The session settings are checked by the
 * sessions' own rules, so a link can never hold settings a session would refuse.
 */
export function checkCreateLink(input: CreateLinkInput, options: { riskLevel: RiskLevel; now: Date }): CheckedLink {
  const problems = new Problems();
  const { now } = options;
  // Above NONE every session needs the applicant's name (and at HIGH the date of birth) from the
  // customer's backend; a public link has no applicant to send.
  if (options.riskLevel !== 'NONE') {
    problems.add(
      `This account's risk level (${options.riskLevel}) needs the applicant's name on every session, which a shared link cannot carry: create sessions from your backend (POST /v1/verifications/sessions) instead`,
    );
  }
  const name = checkName(input.name, problems);
  const limit = checkSessionLimit(input.sessionLimit, problems);
  const expiresAt = checkExpiry(input.expiresAt, now, problems);
  const prefix = checkPrefix(input.referencePrefix, problems);
  const spendLimit = checkSpendLimit(input.spendLimit, problems);
  checkLinkMetadataKeys(input.metadata ?? {}, problems);
  const session = checkSessionSettings(input, now, problems);
  problems.throwIfAny();
  return {
    name: name!,
    idTypes: session!.idTypes,
    liveness: session!.liveness,
    faceMatch: session!.faceMatch,
    redirectUrl: session!.redirectUrl,
    referencePrefix: prefix,
    metadata: session!.metadata,
    sessionLimit: limit!,
    spendLimit: spendLimit ?? null,
    expiresAt: expiresAt!,
  };
}

/** What an edit may change; a field left out keeps its value, null (or blank) clears the optional ones. */
export interface EditLinkInput {
  name?: string | undefined;
  sessionLimit?: number | undefined;
  expiresAt?: string | undefined;
  redirectUrl?: string | null | undefined;
  referencePrefix?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
  spendLimit?: number | null | undefined;
}

const EDITABLE = ['name', 'sessionLimit', 'expiresAt', 'redirectUrl', 'referencePrefix', 'metadata', 'spendLimit'] as const;

/**
 * Edits a link (its row locked): every problem named in one 400, including a session limit below
 * the sessions already started (counted under the same lock as the starts' guarded UPDATE, so a
 * limit lowered to the count means no more starts). The row before and after, or undefined when
 * there is no such link in the scope; `before === after` when nothing changed.
 */
export async function editLink(trx: Transaction<DB>, scope: Scope, publicId: string, input: EditLinkInput, now = new Date()): Promise<{ before: LinkRow; after: LinkRow } | undefined> {
  const before = await findLink(trx, scope, publicId, true);
  if (!before) return undefined;
  const problems = new Problems();
  if (!EDITABLE.some((field) => input[field] !== undefined)) problems.add(`Send at least one of ${EDITABLE.join(', ')} to change`);
  const change: Updateable<VerificationLinksTable> = {};
  if (input.name !== undefined) {
    const name = checkName(input.name, problems);
    if (name !== undefined && name !== before.name) change.name = name;
  }
  if (input.sessionLimit !== undefined) {
    const limit = checkSessionLimit(input.sessionLimit, problems);
    if (limit !== undefined && limit < before.sessions_started) {
      problems.add(`sessionLimit cannot be below the ${before.sessions_started.toLocaleString('en')} sessions already started from this link`);
    } else if (limit !== undefined && limit !== before.session_limit) change.session_limit = limit;
  }
  if (input.spendLimit !== undefined) {
    const cap = checkSpendLimit(input.spendLimit, problems);
    // Read under the link's lock, which every paying ID step of the link takes: no charge lands between.
    const spent = cap ? ((await spentBy(trx, [Number(before.id)])).get(Number(before.id)) ?? 0) : 0;
    if (cap && cap < spent) problems.add(`spendLimit cannot be below the ${spent.toLocaleString('en')} kobo the link's sessions have already paid`);
    else if (cap !== undefined && cap !== before.spend_limit) change.spend_limit = cap;
  }
  if (input.expiresAt !== undefined) {
    const expiresAt = checkExpiry(input.expiresAt, now, problems);
    if (expiresAt && expiresAt.getTime() !== before.expires_at.getTime()) change.expires_at = expiresAt;
  }
  if (input.referencePrefix !== undefined) {
    const prefix = checkPrefix(input.referencePrefix, problems);
    if (prefix !== before.reference_prefix) change.reference_prefix = prefix;
  }
  if (input.metadata !== undefined) checkLinkMetadataKeys(input.metadata, problems);
  if (input.redirectUrl !== undefined || input.metadata !== undefined) {
    const session = checkSessionSettings(
      { idTypes: before.id_types, checks: { liveness: before.check_liveness, faceMatch: before.check_face_match }, redirectUrl: input.redirectUrl ?? undefined, metadata: input.metadata },
      now,
      problems,
    );
    if (session && input.redirectUrl !== undefined && session.redirectUrl !== before.redirect_url) change.redirect_url = session.redirectUrl;
    if (session && input.metadata !== undefined && JSON.stringify(session.metadata) !== JSON.stringify(before.metadata)) change.metadata = JSON.stringify(session.metadata);
  }
  problems.throwIfAny();
  if (Object.keys(change).length === 0) return { before, after: before };
  const after = await trx.updateTable('verification_links').set(change).where('id', '=', Number(before.id)).returningAll().executeTakeFirstOrThrow();
  return { before, after };
}

function randomPublicId(): string {
  return `vl_${randomBytes(10).toString('hex')}`;
}

export async function createLink(
  trx: Kysely<DB> | Transaction<DB>,
  scope: Scope,
  checked: CheckedLink,
  options: { createdBy: string | null; now?: Date },
): Promise<LinkRow> {
  return trx
    .insertInto('verification_links')
    .values({
      public_id: randomPublicId(),
      code: randomLinkCode(),
      org_id: scope.orgId,
      mode: scope.mode,
      name: checked.name,
      id_types: JSON.stringify(checked.idTypes),
      check_liveness: checked.liveness,
      check_face_match: checked.faceMatch,
      redirect_url: checked.redirectUrl,
      reference_prefix: checked.referencePrefix,
      metadata: JSON.stringify(checked.metadata),
      session_limit: checked.sessionLimit,
      spend_limit: checked.spendLimit,
      expires_at: checked.expiresAt,
      created_by: options.createdBy,
      ...(options.now ? { created_at: options.now } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A link of the scope by its public id, locked when in a transaction that asks; undefined when none. */
export async function findLink(db: Kysely<DB> | Transaction<DB>, scope: Scope, publicId: string, lock = false): Promise<LinkRow | undefined> {
  if (!/^vl_[0-9a-f]{20}$/.test(publicId)) return undefined;
  let query = db.selectFrom('verification_links').selectAll().where('public_id', '=', publicId).where('org_id', '=', scope.orgId).where('mode', '=', scope.mode);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function listLinks(db: Kysely<DB>, scope: Scope, page: { limit: number; offset: number }): Promise<{ rows: LinkRow[]; total: number }> {
  const base = db.selectFrom('verification_links').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Disables (`disabled: true`) or enables a link; the row before and after, or undefined when there is no such link. */
export async function setLinkDisabled(
  trx: Transaction<DB>,
  scope: Scope,
  publicId: string,
  disabled: boolean,
  now = new Date(),
): Promise<{ before: LinkRow; after: LinkRow } | undefined> {
  const before = await findLink(trx, scope, publicId, true);
  if (!before) return undefined;
  if (Boolean(before.disabled_at) === disabled) return { before, after: before };
  const after = await trx
    .updateTable('verification_links')
    .set({ disabled_at: disabled ? now : null })
    .where('id', '=', Number(before.id))
    .returningAll()
    .executeTakeFirstOrThrow();
  return { before, after };
}

/** What a visitor of /l/<code> gets. */
export type VisitOutcome =
  | { kind: 'started'; url: string; sessionId: string }
  | { kind: 'unavailable'; reason: 'unknown' }
  | { kind: 'unavailable'; reason: LinkStatus | 'organization' | 'payment' | 'settings'; link: LinkRow; orgName: string };

export interface LinkForVisit {
  link: LinkRow;
  orgName: string;
  orgEnabled: boolean;
  riskLevel: RiskLevel;
  /** What its sessions paid and what one more costs; undefined when the link has no spend cap. */
  spend: LinkSpend | undefined;
}

/** The spend of a link with a cap (undefined without one), for its status. */
async function capSpend(db: Kysely<DB>, link: LinkRow): Promise<LinkSpend | undefined> {
  if (link.spend_limit === null) return undefined;
  const [price, spent] = await Promise.all([sessionPriceIn(db, link.mode), spentBy(db, [Number(link.id)])]);
  return { price, spent: spent.get(Number(link.id)) ?? 0 };
}

/** The link of a public code with its organization; undefined when there is none. */
export async function linkByCode(db: Kysely<DB>, code: string): Promise<LinkForVisit | undefined> {
  if (!isLinkCodeShaped(code)) return undefined;
  const row = await db
    .selectFrom('verification_links as l')
    .innerJoin('organizations as o', 'o.id', 'l.org_id')
    .selectAll('l')
    .select(['o.name as org_name', 'o.enabled as org_enabled', 'o.risk_level as org_risk_level'])
    .where('l.code', '=', code)
    .executeTakeFirst();
  if (!row) return undefined;
  const { org_name: orgName, org_enabled: orgEnabled, org_risk_level: riskLevel, ...rest } = row;
  const link = rest as LinkRow;
  return { link, orgName, orgEnabled, riskLevel, spend: await capSpend(db, link) };
}

/** Thrown inside the session's transaction when the link can no longer start one: the session is rolled back. */
class LinkClosed extends Error {
  constructor(
    readonly link: LinkRow | undefined,
    readonly spent = false,
  ) {
    super('verification link closed');
  }
}

/**
 * Starts a session from the link of `code`. The link's count goes up in the session's own
 * transaction by an UPDATE that only matches while the link is enabled, unexpired and under its
 * limit: concurrent visits wait on the row and see each other's count, so the limit is never
 * exceeded and no session survives a refused count.
 */
export async function startFromLink(db: Kysely<DB>, code: string, options: { publicUrl: string; now?: Date }): Promise<VisitOutcome> {
  const now = options.now ?? new Date();
  const found = await linkByCode(db, code);
  if (!found) return { kind: 'unavailable', reason: 'unknown' };
  const { link, orgName } = found;
  if (!found.orgEnabled) return { kind: 'unavailable', reason: 'organization', link, orgName };
  const status = statusOf(link, now, found.spend);
  if (status !== 'active') return { kind: 'unavailable', reason: status, link, orgName };
  const reference = link.reference_prefix ? `${link.reference_prefix}-${randomBytes(6).toString('hex')}` : undefined;
  const input: CreateSessionInput = {
    reference,
    idTypes: link.id_types,
    checks: { liveness: link.check_liveness, faceMatch: link.check_face_match },
    redirectUrl: link.redirect_url ?? undefined,
    metadata: { ...link.metadata, [LINK_METADATA_KEY]: link.public_id },
  };
  try {
    const record = await createSession(
      db,
      // The person's own consent is asked for and recorded by the hosted flow's first step; no
      // customer-side consent exists for a public link (docs/sessions.md).
      { orgId: link.org_id, mode: link.mode, riskLevel: found.riskLevel, consentRequired: false },
      input,
      {
        publicUrl: options.publicUrl,
        now,
        inTransaction: async (trx, created) => {
          const counted = await trx
            .updateTable('verification_links')
            .set((eb) => ({ sessions_started: eb('sessions_started', '+', 1) }))
            .where('id', '=', Number(link.id))
            .where('disabled_at', 'is', null)
            .where('expires_at', '>', now)
            .whereRef('sessions_started', '<', 'session_limit')
            .returningAll()
            .executeTakeFirst();
          if (!counted) throw new LinkClosed(await trx.selectFrom('verification_links').selectAll().where('id', '=', Number(link.id)).executeTakeFirst());
          // A session that could never pay its ID step is not started (the ID step checks the cap again, under this lock).
          const spend = await capSpend(trx, counted);
          if (spend && spentOut(counted, spend)) throw new LinkClosed(counted, true);
          await trx.updateTable('verification_sessions').set({ link_id: Number(link.id) }).where('public_id', '=', created.id).execute();
        },
      },
    );
    return { kind: 'started', url: record.url!, sessionId: record.id };
  } catch (err) {
    if (err instanceof LinkClosed) {
      const latest = err.link ?? link;
      const reason = err.spent ? 'spent' : statusOf(latest, now);
      return { kind: 'unavailable', reason: reason === 'active' ? 'full' : reason, link: latest, orgName };
    }
    if (err instanceof ApiError && err.code === 'PAYMENT_REQUIRED') return { kind: 'unavailable', reason: 'payment', link, orgName };
    // The organization's risk level was raised after the link was made: its sessions now need an applicant.
    if (err instanceof ApiError && err.code === 'VALIDATION_ERROR') return { kind: 'unavailable', reason: 'settings', link, orgName };
    throw err;
  }
}
