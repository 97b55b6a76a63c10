import type { Kysely } from 'kysely';
import { visitDueAt } from '../agents/due.js';
import { BUSINESS_FINDINGS } from '../agents/report.js';
import { openTasksOf, type FieldTask } from '../agents/service.js';
import type { FieldTaskSource, TaskPlace, TaskSummary } from '../agents/tasks.js';
import type { FieldTaskKind } from '../agents/tables.js';
import { MAX_PHOTOS } from '../files/service.js';
import { distanceKm, stateCentre } from '../locations/geo.js';
import type { DB } from '../platform/db/schema.js';

/**
 * The field app's task list: an agent's open tasks with what a visit on the road needs — a link
 * that opens the phone's maps app, what to capture, when it is due — nearest first when the phone
 * shares its position, else the soonest due first.
 *
 * Nearest is measured to the centre of the place's state: addresses are not geocoded, and no
 * vetted coordinate set of the LGAs exists (ng-states repeats one point per state), so the order
 * separates states, not streets; within a state the soonest due comes first.
 */

export interface Position {
  latitude: number;
  longitude: number;
}

export interface Capture {
  photos: { min: number; max: number };
  /** What to photograph and ask, in the order of a visit. */
  checklist: string[];
  /** The report's fields that this kind of visit takes (besides outcome, position and photos). */
  findings: string[];
  /** The reasons a failed outcome may give; the first is the default. */
  failReasons: string[];
}

export interface FieldTaskView extends TaskSummary {
  kind: FieldTaskKind;
  id: number;
  assignedAt: string;
  dueAt: string;
  overdue: boolean;
  mapsUrl: string;
  /** Km from the phone to the centre of the place's state; null without a position. */
  distanceKm: number | null;
  capture: Capture;
}

const NEIGHBOUR = ['neighborName', 'neighborComment', 'neighborPhone'];

const CHECKLISTS: Record<FieldTaskKind, string[]> = {
  address: [
    'Photograph the front of the building, with its number or gate',
    'Photograph the street, or the landmark nearest the building',
    'Ask a neighbour whether the applicant lives here: note their name, what they said and their phone',
  ],
  business: [
    'Photograph the shop front or signboard with the business name',
    'Photograph the premises inside, and the street',
    'Ask around whether the business and its owner are known, and how often the owner is there',
    'Note the name on site and the kind of area (commercial, residential, market...)',
  ],
};

function captureFor(source: FieldTaskSource): Capture {
  return {
    photos: { min: 1, max: MAX_PHOTOS },
    checklist: CHECKLISTS[source.kind],
    findings: source.kind === 'business' ? [...NEIGHBOUR, ...BUSINESS_FINDINGS] : NEIGHBOUR,
    failReasons: [source.defaultReason, ...source.reasons.filter((reason) => reason !== source.defaultReason)],
  };
}

/** A search link that opens the maps app on Android and iOS (and Google Maps in a browser). */
export function mapsUrlOf(place: TaskPlace, businessName?: string): string {
  const parts = [businessName, place.street, place.city, place.lga, place.state, place.country || 'Nigeria'].map((part) => part?.trim()).filter(Boolean);
  return `https://www.google.com/maps/search/?api=1&query=${encodeURIComponent(parts.join(', '))}`;
}

/** Km from the position to the centre of the state, to 0.1 km; null for an unknown state. */
function kmToState(position: Position, state: string): number | null {
  const centre = stateCentre(state);
  if (!centre) return null;
  return Math.round(distanceKm(position.latitude, position.longitude, centre.latitude, centre.longitude) * 10) / 10;
}

export async function fieldTasksOf(
  db: Kysely<DB>,
  sources: readonly FieldTaskSource[],
  agentId: string,
  position?: Position,
  now = new Date(),
  shown?: (tasks: readonly FieldTask[]) => Promise<void>,
): Promise<FieldTaskView[]> {
  const tasks = await openTasksOf(db, agentId);
  await shown?.(tasks);
  const views: FieldTaskView[] = [];
  for (const source of sources) {
    const own = tasks.filter((task) => task.kind === source.kind);
    const summaries = await source.summarize(db, own);
    const capture = captureFor(source);
    for (const task of own) {
      const summary = summaries.get(task.verificationId);
      if (!summary) continue;
      const due = visitDueAt(task.createdAt);
      views.push({
        kind: task.kind,
        id: task.verificationId,
        ...summary,
        assignedAt: task.assignedAt?.toISOString() ?? '',
        dueAt: due.toISOString(),
        overdue: due.getTime() < now.getTime(),
        mapsUrl: mapsUrlOf(summary.place, summary.business?.name),
        distanceKm: position ? kmToState(position, task.state) : null,
        capture,
      });
    }
  }
  const far = Number.POSITIVE_INFINITY;
  return views.sort(
    (a, b) =>
      (position ? (a.distanceKm ?? far) - (b.distanceKm ?? far) : 0) ||
      a.dueAt.localeCompare(b.dueAt) ||
      a.kind.localeCompare(b.kind) ||
      a.id - b.id,
  );
}
