import { sql, type Kysely } from 'kysely';
import type { Static } from 'typebox';
import { getAddressVerification } from '../../addresses/service.js';
import { getBusinessVerification } from '../../businesses/service.js';
import type { EmploymentService } from '../../employments/service.js';
import type { FileUrls } from '../../files/urls.js';
import { findGuarantor } from '../../guarantors/repository.js';
import type { GuarantorService } from '../../guarantors/service.js';
import { maskIdentityNumbers } from '../../identities/personal-fields.js';
import type { DB } from '../../platform/db/schema.js';
import type { Scope } from '../../platform/pagination.js';
import type { StatusTriple } from '../../platform/state-machine.js';
import { explorerStatusOf, KIND_TABLES, type VerificationKind } from './kinds.js';
import type { Detail, DeliveryRow, TimelineEntry } from './schemas.js';

type Fact = { label: string; value: string };
type Json = Record<string, unknown>;
type DetailBody = Static<typeof Detail>;
type TimelineEvent = Static<typeof TimelineEntry>['event'];

export interface DetailDeps {
  db: Kysely<DB>;
  urls: FileUrls;
  guarantors: GuarantorService;
  employments: EmploymentService;
}

/** The timestamps and answers a timeline is made of, straight from the verification's row. */
interface Moments {
  raw_state: string;
  created_at: Date;
  touched_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  answer: string | null;
  parent_kind: string | null;
  parent_id: string | null;
}

const str = (value: unknown): string => (typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '');
const yesNo = (value: unknown): string => (value === true ? 'Yes' : value === false ? 'No' : '');
const join = (...parts: unknown[]) => parts.map(str).filter(Boolean).join(' ');
const place = (record: Json) => [record.street, record.city, record.lga, record.state].map(str).filter(Boolean).join(', ');
const facts = (...pairs: [string, string][]): Fact[] => pairs.filter(([, value]) => value !== '').map(([label, value]) => ({ label, value }));

/**
 * The portal shows identity numbers masked, like the lookups list: people browsing the portal
 * (viewers too) need to recognise a record, not read a BVN or NIN off the screen. Every
 * identity-number field at any depth, by the list the webhook delivery log masks by too.
 */
export function maskRecord(record: Json): Json {
  return maskIdentityNumbers(record);
}

/** The record exactly as the kind's GET endpoint answers it (404 with the domain's message when it is not the scope's). */
export async function recordOf(deps: DetailDeps, kind: VerificationKind, scope: Scope, id: number): Promise<Json> {
  switch (kind) {
    case 'address':
      return { ...(await getAddressVerification(deps.db, scope, id, deps.urls)) };
    case 'business':
      return { ...(await getBusinessVerification(deps.db, scope, id, deps.urls)) };
    case 'guarantor':
      return { ...(await deps.guarantors.get(scope, id)) };
    case 'employment':
      return { ...(await deps.employments.get(scope, id)) };
  }
}

async function momentsOf(db: Kysely<DB>, kind: VerificationKind, scope: Scope, id: number): Promise<Moments> {
  const spec = KIND_TABLES[kind];
  const field = kind === 'address' || kind === 'business';
  const touched = field ? sql`visit_started_at` : sql`responded_at`;
  // The answer is encrypted (docs/data-protection.md): read whole, under its own column name so it is decrypted.
  const answer = kind === 'guarantor' ? sql`response` : kind === 'employment' ? sql`attestation as response` : sql`null as response`;
  const parent = kind === 'address' ? sql`parent_kind, parent_id` : sql`null as parent_kind, null as parent_id`;
  const { rows } = await sql<Omit<Moments, 'answer'> & { response: { decision?: unknown } | null }>`
    select ${sql.ref(spec.stateColumn)} as raw_state, created_at, ${touched} as touched_at, completed_at, cancelled_at,
           ${answer}, ${parent}
    from ${sql.table(spec.table)} where org_id = ${scope.orgId} and mode = ${scope.mode} and id = ${id}`.execute(db);
  const { response, ...moments } = rows[0]!;
  return { ...moments, answer: typeof response?.decision === 'string' ? response.decision : null };
}

/** When the request went out: a field agent's assignment, or the respondent's first link. */
async function dispatchedAt(db: Kysely<DB>, kind: VerificationKind, scope: Scope, id: number): Promise<Date | null> {
  if (kind === 'address' || kind === 'business') {
    const task = await db
      .selectFrom('field_tasks')
      .select('assigned_at')
      .where('kind', '=', kind)
      .where('verification_id', '=', id)
      .where('org_id', '=', scope.orgId)
      .where('mode', '=', scope.mode)
      .executeTakeFirst();
    return task?.assigned_at ?? null;
  }
  const link = await db
    .selectFrom('respondent_links')
    .select((eb) => eb.fn.min('created_at').as('first'))
    .where('kind', '=', kind === 'guarantor' ? 'guarantor' : 'employer')
    .where('verification_id', '=', id)
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .executeTakeFirst();
  return (link?.first as Date | null | undefined) ?? null;
}

const ANSWERS: Record<string, string> = {
  accepted: 'The guarantor accepted',
  declined: 'The respondent declined',
  confirmed: 'The employer confirmed the employment',
  not_employee: 'The employer said the person is not an employee',
};

function timelineOf(kind: VerificationKind, moments: Moments, dispatched: Date | null, status: StatusTriple): Static<typeof TimelineEntry>[] {
  const field = kind === 'address' || kind === 'business';
  const outcome = [status.status, status.subStatus && status.subStatus.toLowerCase() !== status.status.toLowerCase() ? `(${status.subStatus})` : ''].filter(Boolean).join(' ');
  const events: { event: TimelineEvent; at: Date | null; detail?: string }[] = [
    { event: 'created', at: moments.created_at },
    field
      ? { event: 'assigned', at: dispatched, detail: 'A field agent was assigned' }
      : { event: 'sent', at: dispatched, detail: `The request link was sent to the ${kind === 'guarantor' ? 'guarantor' : 'employer'}` },
    field
      ? { event: 'visited', at: moments.touched_at, detail: 'The agent started the visit' }
      : { event: 'answered', at: moments.touched_at, detail: ANSWERS[moments.answer ?? ''] ?? 'The respondent answered' },
    { event: 'completed', at: moments.completed_at, detail: outcome },
    { event: 'cancelled', at: moments.cancelled_at },
  ];
  return events
    .map((entry, order) => ({ ...entry, order }))
    .filter((entry): entry is typeof entry & { at: Date } => entry.at !== null)
    .sort((a, b) => a.at.getTime() - b.at.getTime() || a.order - b.order)
    .map(({ event, at, detail }) => (detail ? { event, at: at.toISOString(), detail } : { event, at: at.toISOString() }));
}

function neighbourFindings(record: Json): Fact[] {
  const neighbor = (record.neighbor ?? {}) as Json;
  return facts(['Neighbour', str(neighbor.name)], ['Neighbour said', str(neighbor.comment)], ['Neighbour’s phone', str(neighbor.phone)]);
}

/** What was asked and what was found, per kind, from the API record (and the guarantor's answer). */
async function describe(deps: DetailDeps, kind: VerificationKind, scope: Scope, id: number, record: Json): Promise<{ facts: Fact[]; findings: Fact[]; subject: string }> {
  const applicant = (record.applicant ?? {}) as Json;
  const applicantName = join(applicant.firstname, applicant.middlename, applicant.lastname);
  const idDoc = join(applicant.idType, applicant.idNumber);
  switch (kind) {
    case 'address':
      return {
        subject: applicantName,
        facts: facts(['Applicant', applicantName], ['ID', idDoc], ['Phone', str(applicant.phone)], ['Address', place(record)], ['Landmark', str(record.landmark)]),
        findings: neighbourFindings(record),
      };
    case 'business': {
      const business = (record.business ?? {}) as Json;
      return {
        subject: str(business.name),
        facts: facts(
          ['Business', str(business.name)],
          ['Type', str(business.type)],
          ['RC number', str(business.rcNumber)],
          ['Contact person', applicantName],
          ['ID', idDoc],
          ['Phone', str(applicant.phone)],
          ['Address', place(record)],
          ['Landmark', str(record.landmark)],
        ),
        findings: [
          ...facts(
            ['Business known in the area', yesNo(business.isBusinessKnown)],
            ['Owner known', yesNo(business.isBusinessOwnerKnown)],
            ['Owner visits often', yesNo(business.ownerVisitsFrequently)],
            ['Name on the premises is correct', yesNo(record.isCorrectBusinessName)],
            ['Name found', str(record.businessNameFound)],
            ['Business area', str(record.businessArea)],
          ),
          ...neighbourFindings(record),
        ],
      };
    }
    case 'guarantor': {
      const row = await findGuarantor(deps.db, scope, id);
      const response = row?.response;
      const address = (record.address ?? {}) as Json;
      const guarantor = join(record.firstname, record.lastname);
      const matches = response?.matches;
      return {
        subject: [guarantor, applicantName && `for ${applicantName}`].filter(Boolean).join(' '),
        facts: facts(
          ['Guarantor', guarantor],
          ['Guarantor’s phone', str(record.phone)],
          ['Guarantor’s email', str(record.email)],
          ['Guarantor’s address', str(address.formattedAddress)],
          ['IDs accepted', Array.isArray(record.acceptableIdType) ? record.acceptableIdType.map(str).join(', ') : ''],
          ['Applicant', applicantName],
          ['Applicant’s ID', idDoc],
          ['Address visit', record.verifyAddress === true ? 'Requested' : ''],
        ),
        findings: response
          ? facts(
              ['Answer', response.decision === 'accepted' ? 'Accepted' : 'Declined'],
              ['ID given', join(response.idType, response.idNumber)],
              ['ID found in the registry', yesNo(response.found)],
              ['First name matches', yesNo(matches?.firstname)],
              ['Last name matches', yesNo(matches?.lastname)],
              ['Date of birth matches', yesNo(matches?.dob)],
              ['Answered through', response.via === 'test_helper' ? 'The test helper' : 'The guarantor’s page'],
              ['Address visit', row?.address_outcome ? row.address_outcome.replace(/^\w/, (c) => c.toUpperCase()) : ''],
            )
          : [],
      };
    }
    case 'employment': {
      const employee = join(applicant.firstname, applicant.middlename, applicant.lastname);
      const claimed = (record.claimed ?? {}) as Json;
      const answered = str(record.employerRespondedAt) !== '';
      return {
        subject: [employee, str(record.employerName) && `at ${str(record.employerName)}`].filter(Boolean).join(' '),
        facts: facts(
          ['Employee', employee],
          ['Employer', str(record.employerName)],
          ['Employer’s email', str(record.employerEmail)],
          ['Employer’s phone', str(record.employerPhone)],
          ['Claimed title', str(claimed.title)],
          ['Claimed start', str(claimed.startDate)],
          ['Claimed end', str(claimed.endDate) || (answered ? '' : 'Still employed')],
        ),
        findings: answered
          ? facts(
              ['Employer consented', yesNo(record.employerConsented)],
              ['Confirmed by the employer', yesNo(record.verifiedPoc && record.employerConsented)],
              ['Title', str(record.title)],
              ['Start', str(record.startDate)],
              ['End', str(record.endDate) || (record.currentlyEmployed === true ? 'Still employed' : '')],
              ['Employment type', str(record.employmentType)],
              ['Would rehire', record.employerConsented === true ? yesNo(record.rehire) : ''],
              ['Comment', str(record.comment)],
              ['Attested by', join(record.attestatorName, record.attestatorTitle && `(${str(record.attestatorTitle)})`)],
            )
          : [],
      };
    }
  }
}

/** A verification's or a session's webhook deliveries, newest first (at most 50). */
export async function deliveriesOf(db: Kysely<DB>, kind: VerificationKind | 'session', scope: Scope, id: number): Promise<Static<typeof DeliveryRow>[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'event_type', 'status', 'attempts', 'last_status_code', 'created_at', 'delivered_at'])
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('resource_kind', '=', kind)
    .where('resource_id', '=', id)
    .orderBy('id', 'desc')
    .limit(50)
    .execute();
  return rows.map((row) => ({
    id: Number(row.id),
    type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    createdAt: row.created_at.toISOString(),
    deliveredAt: row.delivered_at ? row.delivered_at.toISOString() : null,
  }));
}

function gpsOf(record: Json): { latitude: number; longitude: number } | null {
  const latitude = Number.parseFloat(str(record.lattitude));
  const longitude = Number.parseFloat(str(record.longitude));
  return Number.isFinite(latitude) && Number.isFinite(longitude) ? { latitude, longitude } : null;
}

/** Everything the detail page shows about one verification of the scope; 404 when it is not the scope's. */
export async function verificationDetail(deps: DetailDeps, kind: VerificationKind, scope: Scope, id: number): Promise<DetailBody> {
  const record = await recordOf(deps, kind, scope, id);
  const status = record.status as StatusTriple;
  const [moments, dispatched, described, deliveries] = await Promise.all([
    momentsOf(deps.db, kind, scope, id),
    dispatchedAt(deps.db, kind, scope, id),
    describe(deps, kind, scope, id, maskRecord(record)),
    deliveriesOf(deps.db, kind, scope, id),
  ]);
  const explorerStatus = explorerStatusOf(moments.raw_state);
  const ended = moments.completed_at ?? moments.cancelled_at;
  const related: DetailBody['related'] = [];
  if (typeof record.addressVerificationId === 'number') related.push({ kind: 'address', id: record.addressVerificationId, label: 'The visit to the guarantor’s address' });
  if (moments.parent_kind === 'guarantor' && moments.parent_id) related.push({ kind: 'guarantor', id: Number(moments.parent_id), label: 'The guarantor verification this visit is for' });
  return {
    kind,
    id,
    reference: str(record.reference),
    status: explorerStatus,
    statusText: status.status,
    subStatus: status.subStatus.toLowerCase() === status.status.toLowerCase() ? '' : status.subStatus,
    subject: described.subject,
    createdAt: moments.created_at.toISOString(),
    completedAt: ended ? ended.toISOString() : null,
    cancellable: explorerStatus === 'in_progress',
    facts: described.facts,
    findings: described.findings,
    photos: Array.isArray(record.photos) ? record.photos.map(str) : [],
    gps: gpsOf(record),
    flaggedForReview: record.flaggedForReview === true ? str(record.reviewReason) || 'The visit was flagged for review' : null,
    related,
    timeline: timelineOf(kind, moments, dispatched, status),
    deliveries,
    record: maskRecord(record),
  };
}
