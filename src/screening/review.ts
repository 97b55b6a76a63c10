import type { Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import type { Scope } from '../platform/pagination.js';
import { audit, type Actor } from '../portal/audit.js';
import { renderScreening } from './render.js';
import { hitsOf, lockScreening, updateScreening } from './repository.js';
import type { ScreeningRecordData } from './schemas.js';
import { screeningNotFound } from './service.js';
import { stateOf } from './states.js';
import type { HitReview } from './tables.js';

export const MAX_REVIEW_NOTE = 2000;

export interface HitReviewInput {
  decision: HitReview['decision'];
  /** Why: what the reviewer compared (documents seen, dates, ...). */
  note: string;
  /** Who decided: the audit's actor, and the name the record shows. */
  by: { actor: Actor; label: string };
}

const hitNotFound = () => new ApiError('NOT_FOUND_ERROR', 'Hit not found on this screening');

/**
 * Records a reviewer's decision on one hit (docs/screening.md, "Review"), audited in the same
 * transaction. A hit confirmed a true match is final (409 on a second review); a false positive
 * may be reviewed again. The screening's status follows its hits (states.ts).
 */
export async function reviewHit(db: Kysely<DB>, scope: Scope, screeningId: number, hitId: number, input: HitReviewInput, now = new Date()): Promise<ScreeningRecordData> {
  if (input.decision !== 'true_match' && input.decision !== 'false_positive') throw new ApiError('VALIDATION_ERROR', 'decision must be true_match or false_positive');
  const note = input.note.trim();
  if (note.length > MAX_REVIEW_NOTE) throw new ApiError('VALIDATION_ERROR', `note must be at most ${MAX_REVIEW_NOTE} characters`);
  if (input.decision === 'false_positive' && note === '') throw new ApiError('VALIDATION_ERROR', 'note is required to clear a hit: say why it is not the subject');
  return db.transaction().execute(async (trx) => {
    const row = await lockScreening(trx, scope, screeningId);
    if (!row) throw screeningNotFound();
    const hit = await trx.selectFrom('screening_hits').selectAll().where('screening_id', '=', screeningId).where('id', '=', hitId).executeTakeFirst();
    if (!hit) throw hitNotFound();
    if (hit.decision === 'true_match') throw new ApiError('CONFLICT', 'This hit was confirmed a true match: that decision is final');
    const review: HitReview = { decision: input.decision, note, by: input.by.label, at: now.toISOString() };
    await trx.updateTable('screening_hits').set({ decision: input.decision, review: JSON.stringify(review), reviewed_at: now }).where('id', '=', hitId).execute();
    const hits = (await hitsOf(trx, [screeningId])).get(screeningId) ?? [];
    const updated = await updateScreening(trx, scope, screeningId, { state: stateOf(hits.map((h) => h.decision)), updated_at: now });
    // The audit names the hit by its list entry, never the subject, and keeps no note (free text).
    await audit(trx, {
      orgId: scope.orgId,
      actor: input.by.actor,
      action: 'screening.hit_reviewed',
      target: `${scope.mode} screening ${screeningId} hit ${hitId} (${hit.source} ${hit.entity_id})`,
      before: { decision: hit.decision },
      after: { decision: input.decision, screeningStatus: updated.state },
    });
    return renderScreening(updated, hits);
  });
}
