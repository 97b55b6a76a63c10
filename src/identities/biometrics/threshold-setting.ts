import type { ColumnType, Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { audit, type Actor } from '../../portal/audit.js';
import { distanceToScore, MATCH_SCORE_BOUNDS, MATCH_THRESHOLD, scoreToDistance } from './score.js';

/**
 * An organization's face-match threshold (issue 50): the lowest score its face matches call a
 * match, set by an operator in the console within MATCH_SCORE_BOUNDS, or the default. The
 * biometrics endpoint and a session's face match read it at each match, and their records'
 * `matchingThreshold` is the one that applied.
 */

/** One row per organization that set one (0044); null or no row: the default. */
export interface FaceMatchSettingsTable {
  org_id: string;
  matching_threshold: number | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

declare module '../../platform/db/schema.js' {
  interface DB {
    face_match_settings: FaceMatchSettingsTable;
  }
}

/** The default threshold as a score (MATCH_THRESHOLD is a distance). */
export const DEFAULT_MATCHING_THRESHOLD = distanceToScore(MATCH_THRESHOLD);

export interface ThresholdSetting {
  orgId: string;
  /** The threshold in force, a score out of 100. */
  matchingThreshold: number;
  /** Whether an operator set it for the organization (false: the default). */
  custom: boolean;
  defaultThreshold: number;
  bounds: { min: number; max: number };
  /** When an operator last set or reset it; null when none ever did. */
  updatedAt: string | null;
}

/**
 * The distance the organization's face matches are decided at (what `photoMatching` takes): its
 * threshold, or MATCH_THRESHOLD. Its score is `distanceToScore` of it.
 */
export async function matchThresholdOf(db: Kysely<DB>, orgId: string): Promise<number> {
  const row = await db.selectFrom('face_match_settings').select('matching_threshold').where('org_id', '=', orgId).executeTakeFirst();
  return row?.matching_threshold == null ? MATCH_THRESHOLD : scoreToDistance(row.matching_threshold);
}

/** The organization's threshold setting. NOT_FOUND_ERROR for an unknown organization. */
export async function getThresholdSetting(db: Kysely<DB>, orgId: string): Promise<ThresholdSetting> {
  const row = await db
    .selectFrom('organizations as o')
    .leftJoin('face_match_settings as f', 'f.org_id', 'o.id')
    .select(['o.id', 'f.matching_threshold', 'f.updated_at'])
    .where('o.id', '=', orgId)
    .executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId.slice(0, 40)}`);
  const set = row.matching_threshold ?? null;
  return {
    orgId,
    matchingThreshold: set ?? DEFAULT_MATCHING_THRESHOLD,
    custom: set !== null,
    defaultThreshold: DEFAULT_MATCHING_THRESHOLD,
    bounds: { min: MATCH_SCORE_BOUNDS.min, max: MATCH_SCORE_BOUNDS.max },
    updatedAt: row.updated_at ? new Date(row.updated_at).toISOString() : null,
  };
}

/** VALIDATION_ERROR unless the value is a whole score within the bounds (null, the default, always is). */
export function checkThreshold(value: number | null): void {
  if (value === null) return;
  if (!Number.isInteger(value) || value < MATCH_SCORE_BOUNDS.min || value > MATCH_SCORE_BOUNDS.max) {
    throw new ApiError('VALIDATION_ERROR', `matchingThreshold must be a whole number from ${MATCH_SCORE_BOUNDS.min} to ${MATCH_SCORE_BOUNDS.max}, or "default" (${DEFAULT_MATCHING_THRESHOLD})`);
  }
}

/**
 * Sets the organization's threshold (a score within the bounds, or null for the default), audited
 * (`organization.face_match_threshold_changed`, the threshold before and after) in the same
 * transaction. The next face match of the organization is decided at it.
 */
export async function setThreshold(db: Kysely<DB>, orgId: string, value: number | null, actor: Actor): Promise<ThresholdSetting> {
  checkThreshold(value);
  return db.transaction().execute(async (trx) => {
    const before = await getThresholdSetting(trx, orgId);
    const now = new Date();
    await trx
      .insertInto('face_match_settings')
      .values({ org_id: orgId, matching_threshold: value, updated_at: now })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ matching_threshold: value, updated_at: now }))
      .execute();
    const after = await getThresholdSetting(trx, orgId);
    const pick = (setting: ThresholdSetting) => ({ matchingThreshold: setting.matchingThreshold, default: !setting.custom });
    await audit(trx, { orgId, actor, action: 'organization.face_match_threshold_changed', target: 'face match threshold', before: pick(before), after: pick(after) });
    return after;
  });
}
