import type { Kysely, Transaction } from 'kysely';
import type { FileStore } from '../files/store.js';
import type { FileUrls } from '../files/urls.js';
import { gpsReviewReason, kmOutsideState } from '../locations/geo.js';
import type { DB, Mode } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import type { Scope } from '../platform/pagination.js';
import { audit, type Actor } from '../portal/audit.js';
import { isLate, visitDueAt } from './due.js';
import type { FieldTaskRef } from './service.js';
import type { FieldTaskKind } from './tables.js';
import type { FieldTaskSource, ReportOutcome, TaskPlace } from './tasks.js';
import type { BusinessFindings, Neighbor, VisitReport } from './visit.js';

/**
 * The review check and the review queue. Every agent's report goes through `holdOrComplete`
 * (each FieldTaskSource's `complete` calls it, whichever route took the report). A report the
 * system flags is held on its task instead of completing the verification: the verification stays
 * open and the customer hears nothing yet. An operator then approves it (the verification
 * completes with that report, exactly as an unflagged one would, still marked flaggedForReview
 * with the reason), sends it back (discarded, photos deleted, the same agent goes again with the
 * operator's note) or reassigns it (discarded, another agent goes).
 *
 * What is flagged (docs/field-agents.md):
 *   - the GPS position lies more than 50 km outside the place's state (src/locations/geo.ts);
 *   - an address reported **verified** with fewer than 2 photos (the building and its street or
 *     landmark: one photo cannot show that the building is at that address);
 *   - the report is filed after the visit was due (72 hours after the verification was made).
 */

/** A verified address needs at least this many photos; fewer is flagged. */
export const MIN_VERIFIED_ADDRESS_PHOTOS = 2;

/** How long an operator's note to an agent may be. */
export const MAX_NOTE_LENGTH = 1000;

export interface ReviewSubject {
  kind: FieldTaskKind;
  /** The canonical state of the place. */
  state: string;
  /** When the verification (and its task) was made. */
  createdAt: Date;
  /**
   * Set (to the note, or '') when an operator sent an earlier report back or reassigned it: the
   * visit's lateness was judged then, so a report filed again is not held for it once more.
   */
  reviewNote?: string | null;
}

/** Every reason to hold a report for review, in a fixed order; empty when it may complete at once (report.ts joins them). */
export function reviewReasons(subject: ReviewSubject, report: Pick<VisitReport, 'outcome' | 'latitude' | 'longitude' | 'photoIds'>, now: Date): string[] {
  const reasons: string[] = [];
  if (report.latitude !== undefined && report.longitude !== undefined) {
    const gps = gpsReviewReason(subject.state, report.latitude, report.longitude);
    if (gps) reasons.push(gps);
  }
  if (subject.kind === 'address' && report.outcome === 'verified' && report.photoIds.length < MIN_VERIFIED_ADDRESS_PHOTOS) {
    const count = report.photoIds.length;
    reasons.push(`${count === 1 ? 'Only 1 photo' : `${count} photos`} for a verified address (at least ${MIN_VERIFIED_ADDRESS_PHOTOS}: the building and its street or landmark)`);
  }
  const reviewed = subject.reviewNote !== undefined && subject.reviewNote !== null;
  if (isLate(subject.createdAt, now) && !reviewed) {
    const hours = Math.ceil((now.getTime() - visitDueAt(subject.createdAt).getTime()) / 3_600_000);
    reasons.push(`Filed ${hours} hour${hours === 1 ? '' : 's'} after the visit was due`);
  }
  return reasons;
}

/**
 * Applies an agent's report to its verification, inside the caller's transaction: a report the
 * review check flagged (its `reviewReason`, set by `visitReviewReason` in report.ts) is held on
 * the task, any other completes the verification through the source. A held report marks the
 * visit started (an agent went: a cancellation is no longer refunded) and takes the task off the
 * agent's list until the operator decides. Locks the verification before the task, as completion
 * and cancellation do.
 */
export async function holdOrComplete(
  trx: Transaction<DB>,
  source: Pick<FieldTaskSource, 'kind' | 'summarize' | 'startVisit' | 'finish'>,
  scope: Scope,
  id: number,
  report: VisitReport,
  now: Date,
): Promise<ReportOutcome> {
  if (report.reviewReason === undefined) {
    await source.finish(trx, scope, id, report, now);
    return 'completed';
  }
  const summary = (await source.summarize(trx, [{ kind: source.kind, verificationId: id, ...scope }])).get(id);
  if (!summary) throw new ApiError('NOT_FOUND_ERROR', 'No such open task assigned to you');
  if (summary.visitStartedAt === '') await source.startVisit(trx, scope, id, now);
  const held = await trx
    .updateTable('field_tasks')
    .set({ held_report: JSON.stringify(report), held_at: now, review_note: null })
    .where('kind', '=', source.kind)
    .where('verification_id', '=', id)
    .where('closed_at', 'is', null)
    .where('held_at', 'is', null)
    .returning('verification_id')
    .executeTakeFirst();
  if (!held) throw new ApiError('CONFLICT', 'This visit is no longer open for a report');
  return 'held';
}

/** A held report as the review queue shows it, with its evidence. */
export interface HeldVisit {
  kind: FieldTaskKind;
  id: number;
  reference: string;
  orgId: string;
  orgName: string;
  mode: Mode;
  place: TaskPlace;
  contact: { name: string; phone: string };
  business?: { name: string; type: string; rcNumber: string } | undefined;
  agent: { id: string; name: string; active: boolean } | null;
  reviewReason: string;
  reasons: string[];
  createdAt: string;
  dueAt: string;
  assignedAt: string | null;
  visitStartedAt: string;
  filedAt: string;
  late: boolean;
  report: {
    outcome: 'verified' | 'failed';
    reason: string | null;
    latitude: number | null;
    longitude: number | null;
    /** How far (km, rounded) the position lies outside the place's state; 0 inside. */
    kmOutsideState: number | null;
    neighbor: Neighbor;
    findings: BusinessFindings;
    /** Signed links to the photos (the same as records carry). */
    photos: string[];
  };
}

export interface ReviewQueueOptions {
  store: FileStore;
  sources: readonly FieldTaskSource[];
  urls: FileUrls;
}

interface HeldRow {
  kind: FieldTaskKind;
  verification_id: number;
  org_id: string;
  mode: Mode;
  state: string;
  agent_id: string | null;
  created_at: Date;
  assigned_at: Date | null;
  held_at: Date | null;
  held_report: VisitReport | null;
}

const invalid = (message: string) => new ApiError('VALIDATION_ERROR', message);

/** The operator's side of held reports: the queue and its three decisions, each audited with the operator. */
export class ReviewQueue {
  private readonly sourceOf: Map<FieldTaskKind, FieldTaskSource>;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: ReviewQueueOptions,
  ) {
    this.sourceOf = new Map(options.sources.map((source) => [source.kind, source]));
  }

  private source(kind: FieldTaskKind): FieldTaskSource {
    const source = this.sourceOf.get(kind);
    if (!source) throw new ApiError('NOT_FOUND_ERROR', `no ${kind} visits here`);
    return source;
  }

  /** Held reports, oldest first (the longest wait on top). */
  async list(limit = 200): Promise<HeldVisit[]> {
    const rows = await this.db
      .selectFrom('field_tasks as t')
      .innerJoin('organizations as o', 'o.id', 't.org_id')
      .leftJoin('field_agents as a', 'a.id', 't.agent_id')
      .select([
        't.kind', 't.verification_id', 't.org_id', 't.mode', 't.state', 't.agent_id', 't.created_at', 't.assigned_at', 't.held_at', 't.held_report',
        'o.name as org_name', 'a.name as agent_name', 'a.active as agent_active',
      ])
      .where('t.held_at', 'is not', null)
      .where('t.closed_at', 'is', null)
      .orderBy('t.held_at')
      .orderBy('t.verification_id')
      .limit(limit)
      .execute();
    const summaries = new Map<FieldTaskKind, Awaited<ReturnType<FieldTaskSource['summarize']>>>();
    for (const source of this.options.sources) {
      const refs: FieldTaskRef[] = rows.filter((row) => row.kind === source.kind).map((row) => ({ kind: row.kind, verificationId: Number(row.verification_id), orgId: row.org_id, mode: row.mode }));
      summaries.set(source.kind, await source.summarize(this.db, refs));
    }
    return rows.flatMap((row) => {
      const id = Number(row.verification_id);
      const summary = summaries.get(row.kind)?.get(id);
      const report = row.held_report;
      if (!summary || !report || !row.held_at) return [];
      const km = report.latitude !== undefined && report.longitude !== undefined ? kmOutsideState(row.state, report.latitude, report.longitude) : undefined;
      const reviewReason = report.reviewReason ?? '';
      return [
        {
          kind: row.kind,
          id,
          reference: summary.reference,
          orgId: row.org_id,
          orgName: row.org_name,
          mode: row.mode,
          place: summary.place,
          contact: summary.contact,
          business: summary.business,
          agent: row.agent_id && row.agent_name ? { id: row.agent_id, name: row.agent_name, active: row.agent_active ?? false } : null,
          reviewReason,
          reasons: reviewReason ? reviewReason.split('; ') : [],
          createdAt: row.created_at.toISOString(),
          dueAt: visitDueAt(row.created_at).toISOString(),
          assignedAt: row.assigned_at?.toISOString() ?? null,
          visitStartedAt: summary.visitStartedAt,
          filedAt: row.held_at.toISOString(),
          late: isLate(row.created_at, row.held_at),
          report: {
            outcome: report.outcome,
            reason: report.reason ?? null,
            latitude: report.latitude ?? null,
            longitude: report.longitude ?? null,
            kmOutsideState: km === undefined ? null : Math.round(km),
            neighbor: report.neighbor,
            findings: report.findings,
            photos: report.photoIds.map((photo) => this.options.urls.url(photo)),
          },
        },
      ];
    });
  }

  /** The held task, unlocked (approval locks the verification first, as completion does). */
  private async held(db: Kysely<DB>, kind: FieldTaskKind, id: number, lock: boolean): Promise<HeldRow & { report: VisitReport; heldAt: Date }> {
    let query = db
      .selectFrom('field_tasks')
      .select(['kind', 'verification_id', 'org_id', 'mode', 'state', 'agent_id', 'created_at', 'assigned_at', 'held_at', 'held_report'])
      .where('kind', '=', kind)
      .where('verification_id', '=', id)
      .where('closed_at', 'is', null);
    if (lock) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) throw new ApiError('NOT_FOUND_ERROR', `no open ${kind} visit ${id}`);
    if (!row.held_at || !row.held_report) throw new ApiError('CONFLICT', `The ${kind} visit ${id} has no report waiting for review (already decided?)`);
    return { ...row, report: row.held_report, heldAt: row.held_at };
  }

  private async reference(trx: Transaction<DB>, row: HeldRow): Promise<string> {
    const summary = (await this.source(row.kind).summarize(trx, [{ kind: row.kind, verificationId: Number(row.verification_id), orgId: row.org_id, mode: row.mode }])).get(Number(row.verification_id));
    return summary?.reference ?? String(row.verification_id);
  }

  /**
   * Approves a held report: the verification completes with it through the same code an
   * unflagged report takes (record, task closed, the customer's webhook), still flagged with its
   * reason so the customer knows an operator looked.
   */
  async approve(kind: FieldTaskKind, id: number, actor: Actor, now = new Date()): Promise<void> {
    const source = this.source(kind);
    await this.db.transaction().execute(async (trx) => {
      const row = await this.held(trx, kind, id, false);
      const scope = { orgId: row.org_id, mode: row.mode };
      await source.finish(trx, scope, id, row.report, now);
      // Only the report read above: a decision that got in first (sent back) rolls this one back.
      const cleared = await trx
        .updateTable('field_tasks')
        .set({ held_report: null, held_at: null })
        .where('kind', '=', kind)
        .where('verification_id', '=', id)
        .where('held_at', '=', row.heldAt)
        .returning('verification_id')
        .executeTakeFirst();
      if (!cleared) throw new ApiError('CONFLICT', `The ${kind} visit ${id} was decided by someone else meanwhile`);
      await audit(trx, {
        orgId: row.org_id,
        actor,
        action: 'field_visit.approved',
        target: `${kind} ${await this.reference(trx, row)}`,
        before: { reviewReason: row.report.reviewReason, agentId: row.agent_id, filedAt: row.heldAt.toISOString() },
        after: { outcome: row.report.outcome, reason: row.report.reason ?? null, flaggedForReview: true },
      });
    });
  }

  /** Sends a held report back: discarded (photos deleted), the same agent visits again and sees the note. */
  async sendBack(kind: FieldTaskKind, id: number, note: string, actor: Actor, now = new Date()): Promise<void> {
    const text = checkNote(note, true)!;
    await this.discard(kind, id, actor, now, async (trx, row) => {
      if (!row.agent_id) throw new ApiError('CONFLICT', 'Nobody filed this report; reassign it instead');
      const agent = await trx.selectFrom('field_agents').select(['active', 'name']).where('id', '=', row.agent_id).executeTakeFirstOrThrow();
      if (!agent.active) throw new ApiError('CONFLICT', `${agent.name} is deactivated: reassign the visit to another agent`);
      return { agentId: row.agent_id, note: text, action: 'field_visit.sent_back' };
    });
  }

  /** Reassigns a held report's visit: discarded (photos deleted), another active agent visits (with the note, if any). */
  async reassign(kind: FieldTaskKind, id: number, agentId: string, note: string | undefined, actor: Actor, now = new Date()): Promise<void> {
    const text = checkNote(note ?? '', false);
    await this.discard(kind, id, actor, now, async (trx) => {
      const agent = /^[0-9a-f-]{36}$/i.test(agentId)
        ? await trx.selectFrom('field_agents').select(['active', 'name']).where('id', '=', agentId).forNoKeyUpdate().executeTakeFirst()
        : undefined;
      if (!agent) throw invalid(`agentId: no agent ${agentId}`);
      if (!agent.active) throw new ApiError('CONFLICT', `${agent.name} is deactivated`);
      // '' rather than null: the visit has been reviewed, with nothing to tell the agent.
      return { agentId, note: text ?? '', action: 'field_visit.reassigned', assignedAt: now };
    });
  }

  private async discard(
    kind: FieldTaskKind,
    id: number,
    actor: Actor,
    now: Date,
    decide: (trx: Transaction<DB>, row: HeldRow) => Promise<{ agentId: string; note: string | null; action: string; assignedAt?: Date }>,
  ): Promise<void> {
    this.source(kind);
    const photoIds = await this.db.transaction().execute(async (trx) => {
      const row = await this.held(trx, kind, id, true);
      const next = await decide(trx, row);
      await trx
        .updateTable('field_tasks')
        .set({ held_report: null, held_at: null, review_note: next.note, agent_id: next.agentId, ...(next.assignedAt ? { assigned_at: next.assignedAt } : {}) })
        .where('kind', '=', kind)
        .where('verification_id', '=', id)
        .execute();
      const photos = row.report.photoIds;
      if (photos.length > 0) await trx.deleteFrom('uploaded_files').where('id', 'in', photos).where('org_id', '=', row.org_id).execute();
      await audit(trx, {
        orgId: row.org_id,
        actor,
        action: next.action,
        target: `${kind} ${await this.reference(trx, row)}`,
        before: { reviewReason: row.report.reviewReason, agentId: row.agent_id, filedAt: row.heldAt.toISOString(), photos: photos.length },
        after: { agentId: next.agentId, note: next.note, at: now.toISOString() },
      });
      return photos;
    });
    // After the commit: the report is gone, so are its photos (a failed delete leaves an unreferenced file, never a broken record).
    await Promise.all(photoIds.map((photo) => this.options.store.delete(photo).catch(() => undefined)));
  }
}

function checkNote(note: string, required: boolean): string | undefined {
  const text = note.trim();
  if (!text) {
    if (required) throw invalid('note: say what the agent must do differently (the agent sees it)');
    return undefined;
  }
  if (text.length > MAX_NOTE_LENGTH) throw invalid(`note: at most ${MAX_NOTE_LENGTH} characters`);
  return text;
}
