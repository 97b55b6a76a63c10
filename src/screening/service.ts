import type { Kysely, Transaction } from 'kysely';
import type { PageViewer } from '../access-log/service.js';
import type { AuthContext } from '../platform/auth.js';
import { chargeUsage } from '../platform/billing.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { nextSequence, type Page, type Scope } from '../platform/pagination.js';
import { addMonth, SCREENING_BILLABLES } from './billing.js';
import type { EntityMatch, ScreeningSubject } from './entity.js';
import { renderScreening } from './render.js';
import { findScreening, hitsOf, insertHits, insertScreening, listScreenings, lockScreening, SCREENING_SEQUENCE, updateScreening } from './repository.js';
import type { ScreeningRecordData } from './schemas.js';
import type { ScreenedList } from './tables.js';
import { screeningSubjectOf, validateScreening } from './validate.js';
import type { CreateScreeningBody } from './schemas.js';

/** What screens: the matcher's index (src/screening/matching), seen through the one call used here. */
export interface ScreeningMatcher {
  screen(subject: ScreeningSubject, options?: { threshold?: number; sources?: ReadonlySet<string>; limit?: number }): EntityMatch[];
}

/** The lists a screening is answered from: the index over them, and each source's version. */
export interface ListSnapshot {
  index: ScreeningMatcher;
  lists: readonly ScreenedList[];
}

export interface ScreeningDeps {
  db: Kysely<DB>;
  /** The operator's lists (src/screening/lists' provider): live mode. */
  live: { current(): ListSnapshot };
  /** The built-in sandbox list: test mode, which never sees the operator's lists. */
  sandbox: () => ListSnapshot;
  /** The matcher's documented default threshold. */
  defaultThreshold: number;
  now?: () => Date;
}

/** Hits a screening reports at most: past this the threshold is too low to review anything. */
export const MAX_HITS = 50;

export const screeningNotFound = () => new ApiError('NOT_FOUND_ERROR', 'Screening not found');

/** Screenings: made through the API, answered at once from the lists in memory, stored with their hits. */
export class ScreeningService {
  readonly now: () => Date;
  constructor(private readonly deps: ScreeningDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** The source names a caller may ask for: the operator's loaded lists, and in test mode `sandbox` too (still only the sandbox is screened). */
  knownLists(scope: Scope): Set<string> {
    const names = new Set(this.deps.live.current().lists.map((list) => list.source));
    if (scope.mode === 'test') for (const list of this.deps.sandbox().lists) names.add(list.source);
    return names;
  }

  /**
   * Screens the subject and stores the screening with its hits, charging a live wallet, in one
   * transaction (402 stores nothing). A monitored screening ends the monitoring of the scope's
   * monitored screenings under the same reference (`replaced`).
   */
  async create(auth: AuthContext, body: CreateScreeningBody, inTransaction?: (trx: Kysely<DB>, record: ScreeningRecordData) => Promise<void>): Promise<ScreeningRecordData> {
    const scope: Scope = { orgId: auth.orgId, mode: auth.mode };
    const now = this.now();
    const input = validateScreening(body, { now, knownLists: this.knownLists(scope), consentRequired: auth.consentRequired });
    const snapshot = scope.mode === 'test' ? this.deps.sandbox() : this.deps.live.current();
    // Test mode accepts the operator's list names, but screens the sandbox list only.
    const asked = scope.mode === 'test' || input.lists === undefined ? undefined : new Set(input.lists);
    const lists = snapshot.lists.filter((list) => !asked || asked.has(list.source)).map(({ source, version }) => ({ source, version }));
    if (lists.length === 0) throw new ApiError('SERVICE_UNAVAILABLE', 'No watchlist is loaded yet: the operator loads them with `vouch lists import`');
    const threshold = input.threshold ?? this.deps.defaultThreshold;
    const matches = snapshot.index.screen(screeningSubjectOf(input.subject), { threshold, limit: MAX_HITS, ...(asked ? { sources: asked } : {}) });
    const { row, hits } = await this.deps.db.transaction().execute(async (trx) => {
      if (input.monitor) await endMonitoringOf(trx, scope, input.reference, 'replaced', now);
      const usage = await chargeUsage(trx, { ...scope, billable: SCREENING_BILLABLES.screening, subject: `reference ${input.reference}` });
      if (!usage.paid) throw new ApiError('PAYMENT_REQUIRED', 'Insufficient balance: the account must be funded before this screening can run');
      const seq = await nextSequence(trx, scope, SCREENING_SEQUENCE);
      const row = await insertScreening(trx, scope, {
        seq,
        input,
        lists,
        threshold,
        state: matches.length > 0 ? 'pending_review' : 'clear',
        price: usage.price,
        monitoringPaidUntil: input.monitor && scope.mode === 'live' ? addMonth(now) : null,
        now,
      });
      const hits = await insertHits(trx, Number(row.id), matches, { now, fromMonitoring: false });
      await inTransaction?.(trx, renderScreening(row, hits));
      return { row, hits };
    });
    return renderScreening(row, hits);
  }

  async get(scope: Scope, id: number): Promise<ScreeningRecordData> {
    const row = await findScreening(this.deps.db, scope, id);
    if (!row) throw screeningNotFound();
    const hits = await hitsOf(this.deps.db, [id]);
    return renderScreening(row, hits.get(id) ?? []);
  }

  /** A page of the scope's screenings; with a `viewer`, its records are logged as shown to them (src/access-log). */
  async list(scope: Scope, page: Page, viewer?: PageViewer): Promise<{ records: ScreeningRecordData[]; total: number }> {
    const { rows, total } = await listScreenings(this.deps.db, scope, page, viewer);
    const hits = await hitsOf(this.deps.db, rows.map((row) => Number(row.id)));
    return { records: rows.map((row) => renderScreening(row, hits.get(Number(row.id)) ?? [])), total };
  }

  /** Ends the screening's monitoring (DELETE); the screening and its hits stay. Ending it again is no change. */
  async endMonitoring(scope: Scope, id: number): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await lockScreening(trx, scope, id);
      if (!row) throw screeningNotFound();
      if (row.monitored) await updateScreening(trx, scope, id, { monitored: false, monitoring_ended_at: this.now(), monitoring_end_reason: 'deleted', updated_at: this.now() });
    });
  }
}

/** Ends the monitoring of the scope's monitored screenings under `reference`. */
async function endMonitoringOf(trx: Transaction<DB>, scope: Scope, reference: string, reason: string, now: Date): Promise<void> {
  await trx
    .updateTable('screenings')
    .set({ monitored: false, monitoring_ended_at: now, monitoring_end_reason: reason, updated_at: now })
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('reference', '=', reference)
    .where('monitored', '=', true)
    .execute();
}
