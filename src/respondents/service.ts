import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config.js';
import type { DB } from '../platform/db/schema.js';
import type { Scope } from '../platform/pagination.js';
import type { RespondentHandler } from './handler.js';
import { issueLink, randomToken, type TokenGenerator } from './links.js';
import { smtpTransport, type MailTransport } from './mailer.js';
import { findMessage, markFailed, markSent, queueMessage } from './outbox.js';
import type { RespondentKind } from './tables.js';

export interface MessageContent {
  subject: string;
  text: string;
  html: string;
}

export interface Invitation {
  kind: RespondentKind;
  /** The outbox message kind, e.g. `guarantor_request`. */
  messageKind: string;
  scope: Scope;
  verificationId: number;
  to: string;
  compose(link: string, expiresAt: Date): MessageContent;
}

export interface RespondentsOptions {
  /** Links point at `${publicUrl}/respond/<token>`. */
  publicUrl: string;
  mailFrom: string;
  /** Without one, messages stay in the outbox for an operator (`vouch outbox list`). */
  transport?: MailTransport | undefined;
  log?: { error(details: object, message: string): void } | undefined;
  clock?: () => Date;
  newToken?: TokenGenerator;
}

/**
 * Invites respondents: a single-use link and a message in the outbox, written in the caller's
 * transaction; after the commit, `dispatch` sends the message by SMTP when a transport is set.
 * Also the registry of respondent kinds the pages serve.
 */
export class Respondents {
  private readonly handlers = new Map<RespondentKind, RespondentHandler>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    readonly db: Kysely<DB>,
    private readonly options: RespondentsOptions,
  ) {}

  now(): Date {
    return this.options.clock?.() ?? new Date();
  }

  register(handler: RespondentHandler): void {
    this.handlers.set(handler.kind, handler);
  }

  handler(kind: RespondentKind): RespondentHandler | undefined {
    return this.handlers.get(kind);
  }

  /** Issues the link and queues the message; returns the outbox message id for `dispatch`. */
  async invite(trx: Transaction<DB>, invitation: Invitation): Promise<number> {
    const now = this.now();
    const { token, expiresAt } = await issueLink(
      trx,
      { kind: invitation.kind, scope: invitation.scope, verificationId: invitation.verificationId, now },
      this.options.newToken ?? randomToken,
    );
    const link = `${this.options.publicUrl}/respond/${token}`;
    const content = invitation.compose(link, expiresAt);
    return queueMessage(
      trx,
      { scope: invitation.scope, kind: invitation.messageKind, verificationId: invitation.verificationId, to: invitation.to, link, ...content },
      now,
    );
  }

  /**
   * Sends committed messages in the background: the API answers without waiting for the mail
   * server, and a failure is kept on the message (`error`) for the operator to see and resend.
   */
  dispatch(messageIds: readonly number[]): void {
    if (!this.options.transport) return;
    for (const id of messageIds) {
      const sending = this.send(id).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }

  /** Sends one message now; true when the mail server accepted it. */
  async send(messageId: number): Promise<boolean> {
    const transport = this.options.transport;
    if (!transport) throw new Error('no mail transport: set SMTP_URL to send respondent messages');
    const message = await findMessage(this.db, messageId);
    if (!message) throw new RangeError(`no outbox message ${messageId}`);
    try {
      await transport.send({
        from: this.options.mailFrom,
        to: message.recipient,
        subject: message.subject,
        text: message.text,
        html: message.html ?? undefined,
      });
      await markSent(this.db, messageId, this.now());
      return true;
    } catch (err) {
      const reason = (err as Error)?.message ?? String(err);
      this.options.log?.error({ outboxMessageId: messageId, reason }, 'respondent message not sent');
      await markFailed(this.db, messageId, reason).catch(() => {});
      return false;
    }
  }

  /** Waits for the messages being sent (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async close(): Promise<void> {
    await this.drain();
    this.options.transport?.close();
  }
}

/** The respondents of an app: SMTP when SMTP_URL is set, the outbox alone otherwise. */
export function respondentsFor(db: Kysely<DB>, config: Pick<Config, 'publicUrl' | 'mailFrom' | 'smtpUrl'>, log: RespondentsOptions['log']): Respondents {
  return new Respondents(db, {
    publicUrl: config.publicUrl,
    mailFrom: config.mailFrom,
    transport: config.smtpUrl ? smtpTransport(config.smtpUrl) : undefined,
    log,
  });
}
