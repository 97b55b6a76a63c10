import { formatTimestamp } from '../respondents/fields.js';
import type { ScreeningHitData, ScreeningRecordData } from './schemas.js';
import { displayStatus } from './states.js';
import type { ScreeningHitRow, ScreeningRow } from './tables.js';

export function renderHit(row: ScreeningHitRow): ScreeningHitData {
  const hit: ScreeningHitData = {
    id: Number(row.id),
    entityId: row.entity_id,
    source: row.source,
    listVersion: row.list_version,
    schema: row.schema,
    name: row.name,
    matchedName: row.matched_name,
    score: row.score,
    aliases: row.entity.aliases,
    topics: row.entity.topics,
    birthDates: row.entity.birthDates,
    nationalities: row.entity.nationalities,
    programs: row.entity.programs,
    explanation: row.explanation,
    foundBy: row.from_monitoring ? 'monitoring' : 'screening',
    createdAt: formatTimestamp(row.created_at),
  };
  if (row.review) hit.review = { decision: row.review.decision, note: row.review.note, by: row.review.by, at: row.review.at.slice(0, 19) };
  return hit;
}

/** The screening as GET returns it and the `screening.match` webhook carries it; hits best first. */
export function renderScreening(row: ScreeningRow, hits: readonly ScreeningHitRow[]): ScreeningRecordData {
  const s = row.subject;
  const sorted = [...hits].sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id));
  return {
    id: Number(row.id),
    reference: row.reference,
    subject: {
      type: s.type,
      name: s.name,
      firstname: s.firstname ?? '',
      middlename: s.middlename ?? '',
      lastname: s.lastname ?? '',
      dob: s.dob ?? '',
      gender: s.gender ?? '',
      nationality: s.nationality ?? '',
      aliases: s.aliases,
    },
    status: displayStatus(row.state, hits.filter((hit) => hit.decision === null).length),
    hits: sorted.map(renderHit),
    lists: row.lists,
    threshold: row.threshold,
    monitored: row.monitored,
    monitoringEndedAt: formatTimestamp(row.monitoring_ended_at),
    monitoringEndReason: row.monitoring_end_reason ?? '',
    metadata: row.metadata,
    createdAt: formatTimestamp(row.created_at),
  };
}
