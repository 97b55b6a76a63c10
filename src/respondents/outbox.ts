import type { Kysely, Transaction } from 'kysely';
import type { DB, Mode } from '../platform/db/schema.js';
import type { Scope } from '../platform/pagination.js';

/** A message to a respondent, as composed by the verification that needs the answer. */
export interface OutgoingMessage {
  scope: Scope;
  /** What the message asks, e.g. `guarantor_request`. */
  kind: string;
  verificationId: number;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The respondent's link; also inside the text and the HTML. */
  link: string;
}

/** An outbox row as `vouch outbox list` shows it. */
export interface OutboxEntry {
  id: number;
  orgId: string;
  mode: Mode;
  kind: string;
  verificationId: number;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  link: string;
  createdAt: string;
  sentAt: string | null;
  error: string | null;
}

/** Stores the message with the verification that needs it: it exists if and only if that commits. */
export async function queueMessage(trx: Transaction<DB>, message: OutgoingMessage, now: Date): Promise<number> {
  const row = await trx
    .insertInto('outbox_messages')
    .values({
      org_id: message.scope.orgId,
      mode: message.scope.mode,
      kind: message.kind,
      verification_id: message.verificationId,
      recipient: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      link: message.link,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export interface ListOptions {
  limit: number;
  /** Only live messages not sent yet (what an operator still has to pass on; test-mode ones never are). */
  unsent?: boolean;
  orgId?: string;
}

/** Newest first. */
export async function listMessages(db: Kysely<DB>, options: ListOptions): Promise<OutboxEntry[]> {
  let query = db.selectFrom('outbox_messages').selectAll().orderBy('id', 'desc').limit(options.limit);
  if (options.unsent) query = query.where('sent_at', 'is', null).where('mode', '=', 'live');
  if (options.orgId) query = query.where('org_id', '=', options.orgId);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: Number(row.id),
    orgId: row.org_id,
    mode: row.mode,
    kind: row.kind,
    verificationId: Number(row.verification_id),
    to: row.recipient,
    subject: row.subject,
    text: row.text,
    html: row.html,
    link: row.link,
    createdAt: row.created_at.toISOString(),
    sentAt: row.sent_at?.toISOString() ?? null,
    error: row.error,
  }));
}

/** A test-mode message as the organization's sandbox outbox shows it. */
export interface SandboxMessage {
  id: number;
  kind: string;
  verificationId: number;
  to: string;
  subject: string;
  text: string;
  link: string;
  createdAt: string;
}

/** One organization's test-mode messages, newest first: what Vouch would have sent in live mode. */
export async function listSandboxMessages(db: Kysely<DB>, orgId: string, page: { limit: number; offset: number }): Promise<{ rows: SandboxMessage[]; total: number }> {
  const scoped = db.selectFrom('outbox_messages').where('org_id', '=', orgId).where('mode', '=', 'test');
  const [rows, count] = await Promise.all([
    scoped.select(['id', 'kind', 'verification_id', 'recipient', 'subject', 'text', 'link', 'created_at']).orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    scoped.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return {
    rows: rows.map((row) => ({
      id: Number(row.id),
      kind: row.kind,
      verificationId: Number(row.verification_id),
      to: row.recipient,
      subject: row.subject,
      text: row.text,
      link: row.link,
      createdAt: row.created_at.toISOString(),
    })),
    total: Number(count.total),
  };
}

export async function findMessage(db: Kysely<DB>, id: number) {
  return db.selectFrom('outbox_messages').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function markSent(db: Kysely<DB>, id: number, now: Date): Promise<void> {
  await db.updateTable('outbox_messages').set({ sent_at: now, error: null }).where('id', '=', id).execute();
}

export async function markFailed(db: Kysely<DB>, id: number, error: string): Promise<void> {
  await db.updateTable('outbox_messages').set({ error: error.slice(0, 500) }).where('id', '=', id).execute();
}
