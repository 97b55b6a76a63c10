import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { ActorKind } from './tables.js';

export interface Actor {
  kind: ActorKind;
  /** The person who acted; absent for the command line and the system. */
  personId?: string | undefined;
}

export interface AuditEntry {
  orgId: string | null;
  actor: Actor;
  /** A dotted verb, e.g. `member.role_changed`, `secret.rolled`, `access.approved`. */
  action: string;
  /** What was acted on, e.g. a member's email or `live secret`. */
  target?: string | undefined;
  before?: unknown;
  after?: unknown;
}

/** Writes an audit event; call it inside the transaction of the change it records. */
export async function audit(db: Kysely<DB> | Transaction<DB>, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      org_id: entry.orgId,
      actor_id: entry.actor.personId ?? null,
      actor_kind: entry.actor.kind,
      action: entry.action,
      target: entry.target ?? null,
      before: entry.before === undefined ? null : JSON.stringify(entry.before),
      after: entry.after === undefined ? null : JSON.stringify(entry.after),
    })
    .execute();
}
