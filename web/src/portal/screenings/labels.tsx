import { Badge } from '@mantine/core';
import type { operations } from '../../api/schema';

export type Screening = operations['portalGetScreening']['responses'][200]['content']['application/json'];
export type Hit = Screening['hits'][number];
export type ScreeningState = 'pending_review' | 'confirmed_match' | 'cleared' | 'clear';

/** The status filter's choices, in the order a compliance officer works through them. */
export const STATE_LABELS: Record<ScreeningState, string> = {
  pending_review: 'Pending review',
  confirmed_match: 'Confirmed match',
  cleared: 'Cleared',
  clear: 'Clear',
};

/** The record's status (CLEAR, PENDING_REVIEW, CONFIRMED_MATCH, CLEARED) in words and colour. */
const STATUS: Record<string, { label: string; colour: string }> = {
  CLEAR: { label: 'Clear', colour: 'teal' },
  PENDING_REVIEW: { label: 'Pending review', colour: 'orange' },
  CONFIRMED_MATCH: { label: 'Confirmed match', colour: 'red' },
  CLEARED: { label: 'Cleared', colour: 'gray' },
};

export function ScreeningStatus({ status }: { status: Screening['status'] }) {
  const known = STATUS[status.status] ?? { label: status.status, colour: 'gray' };
  return (
    <Badge variant="light" color={known.colour}>
      {known.label}
    </Badge>
  );
}

export function MonitoredBadge() {
  return (
    <Badge variant="outline" color="blue">
      Monitored
    </Badge>
  );
}

/** "0.93" as "93 %": how the score reads on the page. */
export function formatScore(score: number): string {
  return `${Math.round(score * 100)} %`;
}

/** A list of values for a cell, or a dash when there is none. */
export function joined(values: readonly string[] | undefined, empty = '—'): string {
  return values && values.length > 0 ? values.join(', ') : empty;
}
