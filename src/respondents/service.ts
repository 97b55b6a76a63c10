import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config.js';
import type { DB, Mode } from '../platform/db/schema.js';
import type { Scope } from '../platform/pagination.js';
import type { RespondentHandler } from './handler.js';
import { issueLink, randomToken, type TokenGenerator } from './links.js';
import { takeMailAllowance } from './mail-cap.js';
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

declare const allowed: unique symbol;

/**
 * Leave to queue one message, from `allowMessage`: `invite` takes nothing else, so no create can
 * queue a message without having passed the live mail cap before it charged or stored anything.
 */
export interface MessageAllowance {
  readonly scope: Scope;
  readonly [allowed]: true;
}

/** A message in the outbox: a live one is sent by `dispatch`, a test one never leaves the sandbox. */
export interface QueuedMessage {
  id: number;
  mode: Mode;
}

/** `send` of a test-mode message: test mode never mails anyone (the portal's sandbox outbox shows it). */
export class SandboxMessageError extends Error {
  constructor(readonly messageId: number) {
    super(`message ${messageId} is a test-mode message: test mode never sends mail; it stays in the organization's sandbox outbox`);
    this.name = 'SandboxMessageError';
  }
}

export interface RespondentsOptions {
  /** Links point at `${publicUrl}/respond/<token>`. */
  publicUrl: string;
  mailFrom: string;
  /** VOUCH_MAIL_CAP_PER_HOUR: live messages (and invitations) one organization may cause in an hour. */
  mailCapPerHour: number;
  /** Without one, messages stay in the outbox for an operator (`vouch outbox list`). */
  transport?: MailTransport | undefined;
  log?: { error(details: object, message: string): void } | undefined;
  clock?: () => Date;
  newToken?: TokenGenerator;
}

/**
 * Invites respondents: a single-use link and a message in the outbox, written in the caller's
 * transaction; after the commit, `dispatch` sends a live message by SMTP when a transport is set.
 * Test-mode messages are never sent to anyone: they stay in the outbox, where the organization's
 * members read them (the portal's sandbox outbox). Also the registry of respondent kinds the pages serve.
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

  /** The asking organization's name, for a test-mode page's banner; empty when it no longer exists. */
  async organizationName(orgId: string): Promise<string> {
    const row = await this.db.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirst();
    return row?.name ?? '';
  }

  /**
   * The first step of a create that will invite a respondent, before it charges or stores
   * anything: in live mode it takes one of the organization's mails of the hour, or throws the
   * 429 (RATE_LIMITED, Retry-After) that rolls the transaction back. Test mode sends no mail, so
   * it is not counted.
   */
  async allowMessage(trx: Transaction<DB>, scope: Scope, messageKind: string): Promise<MessageAllowance> {
    if (scope.mode === 'live') await takeMailAllowance(trx, scope.orgId, messageKind, this.options.mailCapPerHour, this.now());
    return { scope } as MessageAllowance;
  }

  /** Issues the link and queues the message; returns the outbox message for `dispatch`. */
  async invite(trx: Transaction<DB>, allowance: MessageAllowance, invitation: Invitation): Promise<QueuedMessage> {
    if (allowance.scope.orgId !== invitation.scope.orgId || allowance.scope.mode !== invitation.scope.mode) {
      throw new Error('a message allowance is for the organization and mode it was taken for');
    }
    const now = this.now();
    const { token, expiresAt } = await issueLink(
      trx,
      { kind: invitation.kind, scope: invitation.scope, verificationId: invitation.verificationId, now },
      this.options.newToken ?? randomToken,
    );
    const link = `${this.options.publicUrl}/respond/${token}`;
    const content = invitation.compose(link, expiresAt);
    const id = await queueMessage(
      trx,
      { scope: invitation.scope, kind: invitation.messageKind, verificationId: invitation.verificationId, to: invitation.to, link, ...content },
      now,
    );
    return { id, mode: invitation.scope.mode };
  }

  /**
   * Sends committed live messages in the background: the API answers without waiting for the
   * mail server, and a failure is kept on the message (`error`) for the operator to see and
   * resend. Test-mode messages are skipped: they stay in the sandbox outbox.
   */
  dispatch(messages: readonly QueuedMessage[]): void {
    if (!this.options.transport) return;
    for (const message of messages) {
      if (message.mode !== 'live') continue;
      const sending = this.send(message.id)
        .catch((err: unknown) => {
          this.options.log?.error({ outboxMessageId: message.id, err: (err as Error)?.message ?? String(err) }, 'respondent message not sent');
          return false;
        })
        .finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }

  /** Sends one live message now; true when the mail server accepted it. A test-mode message is refused (SandboxMessageError). */
  async send(messageId: number): Promise<boolean> {
    const transport = this.options.transport;
    if (!transport) throw new Error('no mail transport: set SMTP_URL to send respondent messages');
    const message = await findMessage(this.db, messageId);
    if (!message) throw new RangeError(`no outbox message ${messageId}`);
    if (message.mode !== 'live') throw new SandboxMessageError(messageId);
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
      // The log gets the reason as an error (its recipient's address redacted); the message keeps it whole, encrypted.
      this.options.log?.error({ outboxMessageId: messageId, err: reason }, 'respondent message not sent');
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
export function respondentsFor(db: Kysely<DB>, config: Pick<Config, 'publicUrl' | 'mailFrom' | 'smtpUrl' | 'mailCapPerHour'>, log: RespondentsOptions['log']): Respondents {
  return new Respondents(db, {
    publicUrl: config.publicUrl,
    mailFrom: config.mailFrom,
    mailCapPerHour: config.mailCapPerHour,
    transport: config.smtpUrl ? smtpTransport(config.smtpUrl) : undefined,
    log,
  });
}
