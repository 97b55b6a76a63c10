import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { isUuid } from '../accounts/service.js';
import { consentOf, type Consent } from '../consent/consent.js';
import type { FileStore } from '../files/store.js';
import { normalizePhone } from '../identities/matching.js';
import { eraseScreenings, findScreeningsOf, knownPersonOf, type ScreeningOfSubject } from '../screening/privacy.js';
import { anonymiseSessions, findSessionSubjects, type SessionHit } from '../sessions/privacy.js';
import { keyringOf } from '../platform/crypto/fields.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { anonymiseVerifications, erasePartyColumns, VERIFICATION_KINDS, VERIFICATION_TABLES, type VerificationKind } from './anonymise.js';
import './tables.js';

/**
 * Data-subject requests (issue 12, point 3; docs/data-protection.md): everything Vouch holds about
 * one person, found by their BVN, NIN, phone or email, across every organization (the operator)
 * or one (`orgId`: what the portal will offer a customer), exported as one JSON document or
 * erased. Every request is recorded in `subject_requests` with the blind indexes of the
 * identifiers asked for, never the identifiers.
 *
 * How each table is searched:
 * - `registry_records`: by blind index (the BVN or NIN key, the phone). Not by email (no index).
 * - the four verification tables, `outbox_messages`, `idempotency_keys`, `upstream_cache`: their
 *   personal columns are encrypted with random IVs and have no blind index of every person they
 *   name, so they are read in batches and decrypted, and the values compared in memory (cost:
 *   one AES-GCM decryption per personal column of every row in scope; see the docs).
 * - photos, field-app answers, webhook deliveries, usage and ledger rows: through the
 *   verifications found.
 */

export const IDENTIFIER_KINDS = ['bvn', 'nin', 'phone', 'email'] as const;
export type IdentifierKind = (typeof IDENTIFIER_KINDS)[number];

export interface SubjectIdentifier {
  kind: IdentifierKind;
  /** Normalised: digits for BVN and NIN, E.164 for a phone, lower case for an email. */
  value: string;
}

const SCAN_BATCH = 500;

/** The identifiers of a request, checked and normalised; VALIDATION_ERROR naming the bad one. */
export function parseIdentifiers(input: Partial<Record<IdentifierKind, string | undefined>>): SubjectIdentifier[] {
  const found: SubjectIdentifier[] = [];
  for (const kind of IDENTIFIER_KINDS) {
    const raw = input[kind];
    if (raw === undefined) continue;
    const text = raw.trim();
    if (kind === 'bvn' || kind === 'nin') {
      if (!/^\d{11}$/.test(text)) throw new ApiError('VALIDATION_ERROR', `--${kind} must be 11 digits`);
      found.push({ kind, value: text });
    } else if (kind === 'phone') {
      const phone = normalizePhone(text);
      if (!phone) throw new ApiError('VALIDATION_ERROR', '--phone must be a valid phone number (e.g. 08031234567 or +2348031234567)');
      found.push({ kind, value: phone });
    } else {
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text) || text.length > 320) throw new ApiError('VALIDATION_ERROR', '--email must be an email address');
      found.push({ kind, value: text.toLowerCase() });
    }
  }
  if (found.length === 0) throw new ApiError('VALIDATION_ERROR', 'name the person: at least one of --bvn, --nin, --phone, --email');
  return found;
}

/** Every identifier a stored value names, as "kind:value" (normalised as parseIdentifiers does). */
export function identifiersIn(value: unknown, out = new Set<string>(), key?: string): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) identifiersIn(item, out, key);
  } else if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (typeof object.idType === 'string' && (typeof object.idNumber === 'string' || typeof object.idNumber === 'number')) {
      out.add(`${object.idType.toLowerCase()}:${String(object.idNumber).trim()}`);
    }
    for (const [name, item] of Object.entries(object)) identifiersIn(item, out, name);
  } else if ((typeof value === 'string' || typeof value === 'number') && key) {
    const text = String(value).trim();
    const name = key.toLowerCase();
    if (name === 'bvn' || name === 'nin') out.add(`${name}:${text}`);
    else if (name.includes('email') || (name === 'recipient' && text.includes('@'))) out.add(`email:${text.toLowerCase()}`);
    else if (name.includes('phone') || name === 'recipient') {
      const phone = normalizePhone(text);
      if (phone) out.add(`phone:${phone}`);
    }
  }
  return out;
}

class Matcher {
  private readonly wanted: Set<string>;
  constructor(identifiers: readonly SubjectIdentifier[]) {
    this.wanted = new Set(identifiers.map((id) => `${id.kind}:${id.value}`));
  }
  matches(value: unknown): boolean {
    for (const found of identifiersIn(value)) if (this.wanted.has(found)) return true;
    return false;
  }
}

/** Who is whom in a verification row: the applicant's column, and the other parties' columns. */
const PARTIES: Record<VerificationKind, Record<string, readonly string[]>> = {
  address: { applicant: ['applicant'], neighbour: ['neighbor'] },
  business: { applicant: ['applicant'], neighbour: ['neighbor'] },
  guarantor: { applicant: ['applicant'], guarantor: ['firstname', 'lastname', 'phone', 'email', 'address', 'response'] },
  employment: { applicant: ['applicant'], employer: ['employer_email', 'employer_phone'] },
};

type Row = Record<string, unknown>;

export interface VerificationHit {
  kind: VerificationKind;
  id: number;
  orgId: string;
  mode: string;
  reference: string;
  /** applicant, neighbour, guarantor or employer. */
  roles: string[];
  /** The consent the customer recorded with it (0021), or null. */
  consent: Consent | null;
  record: Row;
}

export interface SubjectScope {
  /** One organization; absent: every organization, and the operator's registry and cache too. */
  orgId?: string | undefined;
}

/** What was found about a person, table by table. */
export interface SubjectFindings {
  registry: { type: string; key: string; record: unknown }[];
  upstreamCache: { type: string; keyHash: string; source: string; expiresAt: Date; record: unknown }[];
  verifications: VerificationHit[];
  /** Verification sessions naming the person (src/sessions/privacy.ts); their frames are in `photos`. */
  sessions: SessionHit[];
  /** Screenings of a person by one of the names the records above give them (src/screening/privacy.ts). */
  screenings: ScreeningOfSubject[];
  photos: { id: string; verification: string; contentType: string; size: number; sha256: string; createdAt: Date }[];
  heldReports: { verification: string; heldAt: Date | null; report: unknown }[];
  /** Held reports (waiting for review) whose neighbour is the person, on verifications not otherwise found. */
  heldNeighbours: { kind: 'address' | 'business'; verificationId: number }[];
  fieldReportKeys: { verification: string; createdAt: Date }[];
  outbox: { id: number; kind: string; verificationId: number; recipient: unknown; subject: unknown; text: unknown; createdAt: Date; sentAt: Date | null }[];
  webhookDeliveries: { id: number; orgId: string; mode: string; eventType: string; status: string; createdAt: Date; payload: unknown }[];
  idempotentAnswers: { orgId: string; mode: string; key: string; createdAt: Date; expiresAt: Date; body: unknown }[];
  usage: { id: number; orgId: string; mode: string; type: string; subject: string; outcome: string; price: number; createdAt: Date; ledgerEntry: { id: number; kind: string; amount: number; description: string } | null }[];
}

export type SubjectCounts = Record<string, number>;

export function countsOf(findings: SubjectFindings): SubjectCounts {
  const counts: SubjectCounts = {
    registry_records: findings.registry.length,
    upstream_cache: findings.upstreamCache.length,
  };
  for (const kind of VERIFICATION_KINDS) counts[VERIFICATION_TABLES[kind]] = findings.verifications.filter((hit) => hit.kind === kind).length;
  counts.verification_sessions = findings.sessions.length;
  counts.screenings = findings.screenings.length;
  Object.assign(counts, {
    uploaded_files: findings.photos.length,
    held_reports: findings.heldReports.length,
    field_report_keys: findings.fieldReportKeys.length,
    outbox_messages: findings.outbox.length,
    webhook_deliveries: findings.webhookDeliveries.length,
    idempotency_keys: findings.idempotentAnswers.length,
    usage_events: findings.usage.length,
  });
  return counts;
}

/** An organization that exists, for a scope; NOT_FOUND_ERROR otherwise. */
async function checkScope(db: Kysely<DB>, scope: SubjectScope): Promise<void> {
  if (scope.orgId === undefined) return;
  const found = isUuid(scope.orgId) ? await db.selectFrom('organizations').select('id').where('id', '=', scope.orgId).executeTakeFirst() : undefined;
  if (!found) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${scope.orgId.slice(0, 40)}`);
}

/** Reads a table in id order, a batch at a time, through the decrypting plugin. */
async function* scan(db: Kysely<DB>, table: string, scope: SubjectScope, where = sql`true`): AsyncGenerator<Row> {
  let last = 0;
  for (;;) {
    const org = scope.orgId ? sql`and org_id = ${scope.orgId}` : sql``;
    const { rows } = await sql<Row>`select * from ${sql.table(table)} where id > ${last} ${org} and ${where} order by id limit ${SCAN_BATCH}`.execute(db);
    for (const row of rows) yield row;
    if (rows.length < SCAN_BATCH) return;
    last = Number(rows[rows.length - 1]!.id);
  }
}

const label = (kind: string, id: number) => `${kind}/${id}`;

/** Finds everything held about the person the identifiers name, within the scope. */
export async function findSubject(db: Kysely<DB>, identifiers: readonly SubjectIdentifier[], scope: SubjectScope = {}): Promise<SubjectFindings> {
  await checkScope(db, scope);
  const keyring = keyringOf(db);
  const matcher = new Matcher(identifiers);
  const findings: SubjectFindings = { registry: [], upstreamCache: [], verifications: [], sessions: [], screenings: [], photos: [], heldReports: [], heldNeighbours: [], fieldReportKeys: [], outbox: [], webhookDeliveries: [], idempotentAnswers: [], usage: [] };

  if (!scope.orgId) {
    // The embedded registry, by blind index.
    for (const identifier of identifiers) {
      if (identifier.kind === 'email') continue;
      const index = keyring.blindIndex(identifier.kind, identifier.value);
      const query = db.selectFrom('registry_records').select(['type', 'key', 'record']);
      const rows = identifier.kind === 'phone' ? await query.where('phone', '=', index).execute() : await query.where('type', '=', identifier.kind).where('key', '=', index).execute();
      for (const row of rows) if (!findings.registry.some((r) => r.type === row.type && r.key === row.key)) findings.registry.push(row);
    }
    // The upstream cache: small (its TTLs), read whole.
    let after = { type: '', key: '' };
    for (;;) {
      const rows = await db
        .selectFrom('upstream_cache')
        .select(['type', 'key_hash', 'source', 'expires_at', 'record'])
        .where((eb) => eb.or([eb('type', '>', after.type), eb.and([eb('type', '=', after.type), eb('key_hash', '>', after.key)])]))
        .orderBy('type')
        .orderBy('key_hash')
        .limit(SCAN_BATCH)
        .execute();
      for (const row of rows) if (matcher.matches(row.record)) findings.upstreamCache.push({ type: row.type, keyHash: row.key_hash, source: row.source, expiresAt: row.expires_at, record: row.record });
      if (rows.length < SCAN_BATCH) break;
      after = { type: rows[rows.length - 1]!.type, key: rows[rows.length - 1]!.key_hash };
    }
  }

  // Verifications of every kind, decrypted batch by batch.
  for (const kind of VERIFICATION_KINDS) {
    for await (const row of scan(db, VERIFICATION_TABLES[kind], scope)) {
      const roles = Object.entries(PARTIES[kind])
        .filter(([, columns]) => matcher.matches(Object.fromEntries(columns.map((column) => [column, row[column]]))))
        .map(([role]) => role);
      if (roles.length === 0) continue;
      findings.verifications.push({ kind, id: Number(row.id), orgId: String(row.org_id), mode: String(row.mode), reference: String(row.reference), roles, consent: consentOf(row), record: row });
    }
  }

  // Verification sessions, with their frames and webhook deliveries.
  const sessions = await findSessionSubjects(db, (value) => matcher.matches(value), scope);
  findings.sessions = sessions.sessions;
  findings.photos.push(...sessions.frames);
  findings.webhookDeliveries.push(...sessions.webhookDeliveries);

  // Screenings hold no ID number: found by the names the person's records give them, with the events sent about them.
  const person = knownPersonOf([
    ...findings.registry.map((row) => row.record),
    ...findings.upstreamCache.map((row) => row.record),
    ...findings.verifications.filter((hit) => hit.roles.includes('applicant')).map((hit) => hit.record.applicant),
  ]);
  findings.screenings = await findScreeningsOf(db, person, scope);
  if (findings.screenings.length > 0) {
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .select(['id', 'org_id', 'mode', 'event_type', 'status', 'created_at', 'payload'])
      .where('resource_kind', '=', 'screening')
      .where('resource_id', 'in', findings.screenings.map((screening) => screening.id))
      .orderBy('id')
      .execute();
    for (const d of deliveries) findings.webhookDeliveries.push({ id: Number(d.id), orgId: d.org_id, mode: d.mode, eventType: d.event_type, status: d.status, createdAt: d.created_at, payload: d.payload });
  }

  // What hangs off the verifications found.
  for (const kind of VERIFICATION_KINDS) {
    const hits = findings.verifications.filter((hit) => hit.kind === kind);
    if (hits.length === 0) continue;
    const ids = hits.map((hit) => hit.id);
    if (kind === 'address' || kind === 'business') {
      // Photos are of the applicant's place: theirs.
      const photoIds = hits.filter((hit) => hit.roles.includes('applicant')).flatMap((hit) => ((hit.record.photo_ids as string[] | null) ?? []).map((id) => ({ id, verification: label(kind, hit.id) })));
      const tasks = await db.selectFrom('field_tasks').select(['verification_id', 'held_at', 'held_report', 'closed_at']).where('kind', '=', kind).where('verification_id', 'in', ids).execute();
      for (const task of tasks) {
        if (!task.held_report) continue;
        findings.heldReports.push({ verification: label(kind, Number(task.verification_id)), heldAt: task.held_at, report: task.held_report });
        for (const id of task.held_report.photoIds ?? []) photoIds.push({ id, verification: label(kind, Number(task.verification_id)) });
      }
      if (photoIds.length > 0) {
        const files = await db.selectFrom('uploaded_files').select(['id', 'content_type', 'size', 'sha256', 'created_at']).where('id', 'in', photoIds.map((photo) => photo.id)).execute();
        for (const file of files) {
          if (findings.photos.some((photo) => photo.id === file.id)) continue;
          findings.photos.push({ id: file.id, verification: photoIds.find((photo) => photo.id === file.id)!.verification, contentType: file.content_type, size: file.size, sha256: file.sha256, createdAt: file.created_at });
        }
      }
      const keys = await db.selectFrom('field_report_keys').select(['verification_id', 'created_at']).where('kind', '=', kind).where('verification_id', 'in', ids).execute();
      for (const key of keys) findings.fieldReportKeys.push({ verification: label(kind, Number(key.verification_id)), createdAt: key.created_at });
    }
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .select(['id', 'org_id', 'mode', 'event_type', 'status', 'created_at', 'payload'])
      .where('resource_kind', '=', kind)
      .where('resource_id', 'in', ids)
      .orderBy('id')
      .execute();
    for (const d of deliveries) findings.webhookDeliveries.push({ id: Number(d.id), orgId: d.org_id, mode: d.mode, eventType: d.event_type, status: d.status, createdAt: d.created_at, payload: d.payload });
    // What the verifications were charged: the usage row names the customer's reference.
    for (const hit of hits) {
      const usage = await db
        .selectFrom('usage_events as u')
        .leftJoin('ledger_entries as l', 'l.id', 'u.ledger_entry_id')
        .select(['u.id', 'u.org_id', 'u.mode', 'u.type', 'u.subject', 'u.outcome', 'u.price', 'u.created_at', 'l.id as entry_id', 'l.kind as entry_kind', 'l.amount as entry_amount', 'l.description as entry_description'])
        .where('u.org_id', '=', hit.orgId)
        .where('u.mode', '=', hit.mode as 'test' | 'live')
        .where('u.subject', '=', `reference ${hit.reference}`)
        .execute();
      for (const u of usage) {
        findings.usage.push({
          id: Number(u.id), orgId: u.org_id, mode: u.mode, type: u.type, subject: u.subject, outcome: u.outcome, price: Number(u.price), createdAt: u.created_at,
          ledgerEntry: u.entry_id === null ? null : { id: Number(u.entry_id), kind: String(u.entry_kind), amount: Number(u.entry_amount), description: String(u.entry_description) },
        });
      }
    }
  }

  // A report held for review names a neighbour before the verification does: the person may be that neighbour.
  const heldTasks = db
    .selectFrom('field_tasks')
    .select(['kind', 'verification_id', 'held_at', 'held_report'])
    .where('held_report', 'is not', null)
    .$if(scope.orgId !== undefined, (query) => query.where('org_id', '=', scope.orgId!));
  for (const task of await heldTasks.execute()) {
    const name = label(task.kind, Number(task.verification_id));
    if (!task.held_report || findings.heldReports.some((held) => held.verification === name)) continue;
    if (!matcher.matches({ neighbor: task.held_report.neighbor })) continue;
    findings.heldReports.push({ verification: name, heldAt: task.held_at, report: task.held_report });
    findings.heldNeighbours.push({ kind: task.kind, verificationId: Number(task.verification_id) });
  }

  // Messages to respondents: sent to the person, or about a verification found.
  const messageOf = new Set(findings.verifications.filter((hit) => hit.kind === 'guarantor' || hit.kind === 'employment').map((hit) => `${hit.kind === 'guarantor' ? 'guarantor' : 'employer'}:${hit.id}`));
  for await (const row of scan(db, 'outbox_messages', scope)) {
    const about = messageOf.has(`${String(row.kind).split('_')[0]}:${Number(row.verification_id)}`);
    if (!about && !matcher.matches({ recipient: row.recipient })) continue;
    findings.outbox.push({ id: Number(row.id), kind: String(row.kind), verificationId: Number(row.verification_id), recipient: row.recipient, subject: row.subject, text: row.text, createdAt: row.created_at as Date, sentAt: (row.sent_at as Date | null) ?? null });
  }

  // Stored idempotent answers (an identity lookup's answer holds the record), while they last (24 hours).
  let after = { org: '00000000-0000-0000-0000-000000000000', mode: '', key: '' };
  for (;;) {
    const org = scope.orgId ? sql`and org_id = ${scope.orgId}` : sql``;
    const { rows } = await sql<Row>`
      select org_id, mode, key, body, created_at, expires_at from idempotency_keys
       where (org_id, mode, key) > (${after.org}::uuid, ${after.mode}, ${after.key}) and body is not null ${org}
       order by org_id, mode, key limit ${SCAN_BATCH}`.execute(db);
    for (const row of rows) {
      let body: unknown = row.body;
      try {
        body = JSON.parse(String(row.body));
      } catch {
        continue;
      }
      if (matcher.matches(body)) findings.idempotentAnswers.push({ orgId: String(row.org_id), mode: String(row.mode), key: String(row.key), createdAt: row.created_at as Date, expiresAt: row.expires_at as Date, body });
    }
    if (rows.length < SCAN_BATCH) break;
    const lastRow = rows[rows.length - 1]!;
    after = { org: String(lastRow.org_id), mode: String(lastRow.mode), key: String(lastRow.key) };
  }
  return findings;
}

/** Who ran a request: `cli:<operating system user>` from the command line, `person:<id>` from the portal later. */
export type SubjectActor = string;

export interface SubjectRequestRecord {
  id: string;
  kind: 'export' | 'erase';
  createdAt: Date;
  orgId: string | null;
  actor: string;
  identifiers: { kind: IdentifierKind; index: string }[];
  found: SubjectCounts;
  erased: SubjectCounts | null;
}

async function recordRequest(db: Kysely<DB>, input: Omit<SubjectRequestRecord, 'id' | 'createdAt'>, now: Date): Promise<SubjectRequestRecord> {
  const id = randomUUID();
  await db
    .insertInto('subject_requests')
    .values({ id, kind: input.kind, identifiers: JSON.stringify(input.identifiers), org_id: input.orgId, actor: input.actor, found: JSON.stringify(input.found), erased: input.erased ? JSON.stringify(input.erased) : null, created_at: now })
    .execute();
  return { id, createdAt: now, ...input };
}

/** The identifiers as the request log keeps them: blind indexes (the registry's, for BVN, NIN and phone). */
function indexesOf(db: Kysely<DB>, identifiers: readonly SubjectIdentifier[]) {
  const keyring = keyringOf(db);
  return identifiers.map((identifier) => ({ kind: identifier.kind, index: keyring.blindIndex(identifier.kind, identifier.value) }));
}

export interface SubjectExport {
  request: SubjectRequestRecord;
  scope: { orgId: string | null };
  found: SubjectCounts;
  data: SubjectFindings;
}

/** Gathers everything about the person into one document, and records the request. */
export async function exportSubject(db: Kysely<DB>, identifiers: readonly SubjectIdentifier[], scope: SubjectScope, actor: SubjectActor, now = new Date()): Promise<SubjectExport> {
  const data = await findSubject(db, identifiers, scope);
  const found = countsOf(data);
  const request = await recordRequest(db, { kind: 'export', orgId: scope.orgId ?? null, actor, identifiers: indexesOf(db, identifiers), found, erased: null }, now);
  return { request, scope: { orgId: scope.orgId ?? null }, found, data };
}

export interface SubjectErasure {
  request: SubjectRequestRecord;
  found: SubjectCounts;
  erased: SubjectCounts;
}

const ERASE_BATCH = 100;

/**
 * Erases everything about the person within the scope: registry and cache rows deleted (operator
 * scope only), verifications where they are the applicant anonymised whole (photos deleted from
 * the store; open ones ended: cancelled, SUBJECT_ERASED), their columns blanked where they are
 * another party (neighbour, guarantor, employer contact), messages to them, webhook deliveries
 * and stored idempotent answers naming them deleted. Usage and ledger rows stay (money; they name
 * the customer's reference only). In batches, each in its own transaction; a second erasure finds
 * nothing. The request is recorded with what was found and erased.
 */
export async function eraseSubject(
  db: Kysely<DB>,
  store: FileStore,
  identifiers: readonly SubjectIdentifier[],
  scope: SubjectScope,
  actor: SubjectActor,
  now = new Date(),
): Promise<SubjectErasure> {
  const data = await findSubject(db, identifiers, scope);
  const found = countsOf(data);
  const erased: SubjectCounts = {};
  const bump = (name: string, by: number) => (erased[name] = (erased[name] ?? 0) + by);

  for (const row of data.registry) bump('registry_records', Number((await db.deleteFrom('registry_records').where('type', '=', row.type).where('key', '=', row.key).executeTakeFirst()).numDeletedRows));
  for (const row of data.upstreamCache) bump('upstream_cache', Number((await db.deleteFrom('upstream_cache').where('type', '=', row.type as never).where('key_hash', '=', row.keyHash).executeTakeFirst()).numDeletedRows));

  for (const kind of VERIFICATION_KINDS) {
    const hits = data.verifications.filter((hit) => hit.kind === kind);
    const whole = hits.filter((hit) => hit.roles.includes('applicant')).map((hit) => hit.id);
    for (let i = 0; i < whole.length; i += ERASE_BATCH) {
      const done = await anonymiseVerifications(db, store, kind, whole.slice(i, i + ERASE_BATCH), { now, erasure: true });
      bump(VERIFICATION_TABLES[kind], done.verifications);
      bump('uploaded_files', done.photos);
      bump('outbox_messages', done.outbox);
      bump('field_report_keys', done.fieldReportKeys);
      bump('webhook_deliveries', done.webhookDeliveries);
    }
    for (const party of ['neighbour', 'guarantor', 'employer']) {
      const ids = hits.filter((hit) => !hit.roles.includes('applicant') && hit.roles.includes(party)).map((hit) => hit.id);
      for (let i = 0; i < ids.length; i += ERASE_BATCH) {
        const batch = ids.slice(i, i + ERASE_BATCH);
        bump(VERIFICATION_TABLES[kind], await erasePartyColumns(db, kind, party, batch, now));
        // The events sent about those verifications carried the party's data too.
        bump('webhook_deliveries', Number((await db.deleteFrom('webhook_deliveries').where('resource_kind', '=', kind).where('resource_id', 'in', batch).executeTakeFirst()).numDeletedRows));
      }
    }
  }
  for (let i = 0; i < data.sessions.length; i += ERASE_BATCH) {
    const done = await anonymiseSessions(db, store, data.sessions.slice(i, i + ERASE_BATCH).map((hit) => hit.id), { now, erasure: true });
    bump('verification_sessions', done.sessions);
    bump('uploaded_files', done.frames);
    bump('webhook_deliveries', done.webhookDeliveries);
  }
  const screenings = await eraseScreenings(db, data.screenings.map((screening) => screening.id));
  bump('screenings', screenings.screenings);
  bump('webhook_deliveries', screenings.webhookDeliveries);
  // The person named as the neighbour in a report still held for review: that part of the report is blanked.
  for (const held of data.heldNeighbours) {
    await db.transaction().execute(async (trx) => {
      const task = await trx
        .selectFrom('field_tasks')
        .select('held_report')
        .where('kind', '=', held.kind)
        .where('verification_id', '=', held.verificationId)
        .forUpdate()
        .executeTakeFirst();
      if (!task?.held_report) return;
      const report = { ...task.held_report, neighbor: { name: '', comment: '', phone: '' } };
      await trx.updateTable('field_tasks').set({ held_report: JSON.stringify(report) }).where('kind', '=', held.kind).where('verification_id', '=', held.verificationId).execute();
      bump('held_reports', 1);
    });
  }
  // Photos of held reports that the anonymisation did not reach, and messages sent to the person.
  const leftPhotos = data.photos.map((photo) => photo.id);
  if (leftPhotos.length > 0) {
    const still = await db.selectFrom('uploaded_files').select('id').where('id', 'in', leftPhotos).execute();
    for (const { id } of still) await store.delete(id);
    if (still.length > 0) bump('uploaded_files', Number((await db.deleteFrom('uploaded_files').where('id', 'in', still.map((row) => row.id)).executeTakeFirst()).numDeletedRows));
  }
  const messages = data.outbox.map((message) => message.id);
  if (messages.length > 0) bump('outbox_messages', Number((await db.deleteFrom('outbox_messages').where('id', 'in', messages).executeTakeFirst()).numDeletedRows));
  for (const answer of data.idempotentAnswers) {
    const gone = await db.deleteFrom('idempotency_keys').where('org_id', '=', answer.orgId).where('mode', '=', answer.mode as 'test' | 'live').where('key', '=', answer.key).executeTakeFirst();
    bump('idempotency_keys', Number(gone.numDeletedRows));
  }
  const request = await recordRequest(db, { kind: 'erase', orgId: scope.orgId ?? null, actor, identifiers: indexesOf(db, identifiers), found, erased }, now);
  return { request, found, erased };
}

/** Writes the photos found to `dir` as `<id>.<ext>` (decrypted); returns the paths. */
export async function writePhotos(store: FileStore, photos: SubjectFindings['photos'], dir: string): Promise<Record<string, string>> {
  const fs = await import('node:fs/promises');
  const path = await import('node:path');
  await fs.mkdir(dir, { recursive: true });
  const written: Record<string, string> = {};
  for (const photo of photos) {
    const bytes = await store.get(photo.id);
    if (!bytes) continue;
    const ext = photo.contentType === 'image/png' ? 'png' : photo.contentType === 'image/webp' ? 'webp' : 'jpg';
    const file = path.join(dir, `${photo.id}.${ext}`);
    await fs.writeFile(file, bytes, { mode: 0o600 });
    written[photo.id] = file;
  }
  return written;
}
