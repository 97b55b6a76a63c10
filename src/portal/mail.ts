import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Config } from '../config.js';
import type { DB } from '../platform/db/schema.js';
import { smtpTransport, type MailTransport } from '../respondents/mailer.js';
import type { MailMessagesTable } from './tables.js';

/** A mail to a person (verification, reset, invitation, a decision about their account). */
export interface PersonMail {
  kind: string;
  to: string;
  subject: string;
  text: string;
  /** An HTML alternative; the text part always carries the same links. */
  html?: string;
  /**
   * When the mail's link stops working (its token's expiry): the retention job deletes the mail
   * then. A mail without a token (a decision, a notice) leaves it out and is kept MAIL_KEEP_DAYS.
   */
  expiresAt?: Date;
}

/** How long a mail without an expiring link is kept (its recipient, names and amounts). */
export const MAIL_KEEP_DAYS = 30;

/** Rows read per batch when the mails to one address are looked for (addresses are encrypted). */
const SCAN_BATCH = 200;

/**
 * Mail to people: stored in `mail_messages` inside the transaction that needs it, then sent by
 * SMTP after the commit when SMTP_URL is set. Without SMTP the mails wait in the table, readable
 * with `vouch mail list` (a development setup needs no mail server). The recipient, subject and
 * bodies are encrypted at rest (PROTECTED_COLUMNS): they carry sign-in links and people's
 * addresses. Each mail is deleted by the retention job once its link expired (`expiresAt`).
 */
export class PeopleMail {
  private readonly transport: MailTransport | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly config: Pick<Config, 'smtpUrl' | 'mailFrom'>,
    private readonly log: Pick<FastifyBaseLogger, 'info' | 'error'>,
    transport?: MailTransport,
  ) {
    this.transport = transport ?? (config.smtpUrl ? smtpTransport(config.smtpUrl) : undefined);
  }

  async queue(trx: Transaction<DB> | Kysely<DB>, mail: PersonMail): Promise<number> {
    const expiresAt = mail.expiresAt ?? new Date(Date.now() + MAIL_KEEP_DAYS * 86_400_000);
    const row = await trx
      .insertInto('mail_messages')
      .values({ kind: mail.kind, recipient: mail.to, subject: mail.subject, text: mail.text, html: mail.html ?? null, expires_at: expiresAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  /**
   * Sends a queued mail, after its transaction committed. Never throws and is never awaited by a
   * request: a slow or failing SMTP server must not hold up the answer (the row keeps the error).
   */
  async dispatch(id: number): Promise<void> {
    try {
      const mail = await this.db.selectFrom('mail_messages').selectAll().where('id', '=', id).executeTakeFirst();
      if (!mail) return;
      if (!this.transport) {
        // The recipient's domain only: mails carry sign-in links and addresses are personal data.
        this.log.info({ mailId: id, kind: mail.kind, domain: mail.recipient.split('@')[1] }, 'mail waiting (no SMTP_URL): read it with `npx vouch mail list`');
        return;
      }
      try {
        await this.transport.send({ from: this.config.mailFrom, to: mail.recipient, subject: mail.subject, text: mail.text, html: mail.html ?? undefined });
        await this.db.updateTable('mail_messages').set({ sent_at: new Date(), error: null }).where('id', '=', id).execute();
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        this.log.error({ mailId: id, kind: mail.kind }, 'mail could not be sent');
        await this.db.updateTable('mail_messages').set({ error: error.slice(0, 500) }).where('id', '=', id).execute();
      }
    } catch (err) {
      this.log.error({ mailId: id, err: err instanceof Error ? err.message : String(err) }, 'mail could not be dispatched');
    }
  }

  close(): void {
    this.transport?.close();
  }
}

export interface MailListEntry {
  id: number;
  kind: string;
  to: string;
  subject: string;
  text: string;
  createdAt: string;
  /** When its link stops working; the mail is deleted then. */
  expiresAt: string;
  sentAt: string | null;
  error: string | null;
}

type MailRow = Selectable<MailMessagesTable>;

/**
 * The newest mails first, decrypted, for `vouch mail list` and tests. With `to`, the mails to
 * that address: recipients are encrypted, so the newest rows are read in batches and compared
 * here (the table holds only mails whose links have not expired yet, so it stays small).
 */
export async function listMail(db: Kysely<DB>, options: { to?: string; limit?: number } = {}): Promise<MailListEntry[]> {
  const limit = options.limit ?? 50;
  const to = options.to?.trim().toLowerCase();
  const rows: MailRow[] = [];
  let before: number | undefined;
  for (;;) {
    let query = db.selectFrom('mail_messages').selectAll().orderBy('id', 'desc').limit(to ? SCAN_BATCH : limit);
    if (before !== undefined) query = query.where('id', '<', before);
    const batch = await query.execute();
    rows.push(...(to ? batch.filter((row) => row.recipient.toLowerCase() === to) : batch));
    if (!to || batch.length < SCAN_BATCH || rows.length >= limit) break;
    before = Number(batch.at(-1)!.id);
  }
  return rows.slice(0, limit).map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    to: row.recipient,
    subject: row.subject,
    text: row.text,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    sentAt: row.sent_at?.toISOString() ?? null,
    error: row.error,
  }));
}
