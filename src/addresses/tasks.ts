import type { Kysely } from 'kysely';
import type { FieldTaskRef } from '../agents/service.js';
import { holdOrComplete } from '../agents/review.js';
import { visitResults, type FieldTaskSource, type TaskSummary } from '../agents/tasks.js';
import type { FileUrls } from '../files/urls.js';
import type { DB } from '../platform/db/schema.js';
import { applyAddressTransition } from './service.js';
import { ADDRESS_FAILURE_REASONS, DEFAULT_ADDRESS_FAILURE } from './states.js';

/** Address verifications as field tasks: what the agent sees, and how a visit report applies. */
export function addressTaskSource(urls: FileUrls): FieldTaskSource {
  const source: FieldTaskSource = {
    kind: 'address',
    reasons: ADDRESS_FAILURE_REASONS,
    defaultReason: DEFAULT_ADDRESS_FAILURE,
    async summarize(db: Kysely<DB>, tasks: readonly FieldTaskRef[]) {
      const out = new Map<number, TaskSummary>();
      if (tasks.length === 0) return out;
      const rows = await db
        .selectFrom('address_verifications')
        .select(['id', 'org_id', 'mode', 'reference', 'applicant', 'street', 'city', 'landmark', 'lga', 'state', 'country', 'visit_started_at'])
        .where('id', 'in', tasks.map((task) => task.verificationId))
        .execute();
      const expected = new Map(tasks.map((task) => [task.verificationId, task]));
      for (const row of rows) {
        const task = expected.get(Number(row.id));
        // The task names the organization and mode; a row elsewhere is not this task's.
        if (!task || task.orgId !== row.org_id || task.mode !== row.mode) continue;
        const name = [row.applicant.firstname, row.applicant.middlename, row.applicant.lastname].filter(Boolean).join(' ');
        out.set(Number(row.id), {
          reference: row.reference,
          place: { street: row.street, city: row.city, landmark: row.landmark, lga: row.lga, state: row.state, country: row.country },
          contact: { name, phone: row.applicant.phone ?? '' },
          visitStartedAt: row.visit_started_at?.toISOString() ?? '',
        });
      }
      return out;
    },
    async startVisit(trx, scope, id, now) {
      await applyAddressTransition(trx, scope, id, { to: 'visiting' }, urls, now);
    },
    // A report goes through the review check: held for the operator, or finished at once.
    async complete(trx, scope, id, report, now) {
      return holdOrComplete(trx, source, scope, id, report, now);
    },
    async finish(trx, scope, id, report, now) {
      const to = report.outcome === 'verified' ? 'verified' : 'not_verified';
      await applyAddressTransition(trx, scope, id, { to, report }, urls, now);
    },
    results: (db, tasks) => visitResults(db, 'address_verifications', tasks),
  };
  return source;
}
