import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config.js';
import type { DB } from '../platform/db/schema.js';
import { smtpTransport, type MailTransport } from '../respondents/mailer.js';

/** A mail to a person (verification, reset, invitation, a decision about their account). */
export interface PersonMail {
  kind: string;
  to: string;
  subject: string;
  text: string;
  /** An HTML alternative; the text part always carries the same links. */
  html?: string;
}

/**
 * Mail to people: stored in `mail_messages` inside the transaction that needs it, then sent by
 * SMTP after the commit when SMTP_URL is set. Without SMTP the mails wait in the table, readable
 * with `vouch mail list` (a development setup needs no mail server).
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
    const row = await trx
      .insertInto('mail_messages')
      .values({ kind: mail.kind, recipient: mail.to, subject: mail.subject, text: mail.text, html: mail.html ?? null })
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
  sentAt: string | null;
  error: string | null;
}

/** The newest mails first, for `vouch mail list` and tests. */
export async function listMail(db: Kysely<DB>, options: { to?: string; limit?: number } = {}): Promise<MailListEntry[]> {
  let query = db.selectFrom('mail_messages').selectAll().orderBy('id', 'desc').limit(options.limit ?? 50);
  if (options.to) query = query.where('recipient', '=', options.to.trim().toLowerCase());
  const rows = await query.execute();
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    to: row.recipient,
    subject: row.subject,
    text: row.text,
    createdAt: row.created_at.toISOString(),
    sentAt: row.sent_at?.toISOString() ?? null,
    error: row.error,
  }));
}
