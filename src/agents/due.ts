/**
 * When a field visit is due: a fixed service level from the moment the verification was made.
 * The field app lists tasks by it (when the phone shares no location) and a report filed after
 * it is late, which the review queue shows.
 */
export const VISIT_DUE_MS = 72 * 60 * 60 * 1000;

export function visitDueAt(createdAt: Date): Date {
  return new Date(createdAt.getTime() + VISIT_DUE_MS);
}

/** Whether a report filed at `at` is past the visit's due time. */
export function isLate(createdAt: Date, at: Date): boolean {
  return at.getTime() > visitDueAt(createdAt).getTime();
}
