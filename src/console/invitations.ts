import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB, Mode } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { audit, type Actor } from '../portal/audit.js';
import type { Respondents } from '../respondents/service.js';

/** The verifications that invite a respondent, as the API names them. */
export type InvitationKind = 'guarantor' | 'employment';
export type InvitationStatus = 'pending' | 'expired';

/** Expired invitations are listed and counted this long after they expire; older ones are history. */
export const EXPIRED_WINDOW_DAYS = 30;

export interface InvitationView {
  kind: InvitationKind;
  verificationId: number;
  reference: string;
  orgId: string;
  orgName: string;
  mode: Mode;
  status: InvitationStatus;
  /** The respondent's address, masked: the first letter and the domain. */
  recipient: string | null;
  createdAt: string;
  /** When the mail server took the message; null when it was not sent (no SMTP_URL, or it failed). */
  sentAt: string | null;
  /** Why the last send failed, if it did. */
  sendError: string | null;
  expiresAt: string;
}

export interface InvitationCounts {
  orgId: string;
  orgName: string;
  mode: Mode;
  pending: number;
  expired: number;
}

/** `ada.obi@firm.ng` → `a•••@firm.ng`: enough to tell two respondents and a bounce's domain apart. */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 1) return '•••';
  return `${address[0]}•••${address.slice(at)}`;
}

const LINK_KIND = { guarantor: 'guarantor', employment: 'employer' } as const;
const MESSAGE_KIND = { guarantor: 'guarantor_request', employer: 'employer_request' } as const;

/**
 * Unanswered respondent links with their verification: pending while the link is open and the
 * verification waits for the answer; expired once the link ran out unanswered (the sweep ends
 * the verification NO_RESPONSE; until it runs, the verification is still in progress). Links
 * of cancelled verifications, and those answered or closed, are not invitations any more.
 */
function unanswered(db: Kysely<DB>, now: Date) {
  const since = new Date(now.getTime() - EXPIRED_WINDOW_DAYS * 24 * 60 * 60 * 1000);
  return db
    .selectFrom('respondent_links as l')
    .innerJoin('organizations as o', 'o.id', 'l.org_id')
    .leftJoin('guarantor_verifications as g', (join) => join.on('l.kind', '=', 'guarantor').onRef('g.id', '=', 'l.verification_id'))
    .leftJoin('employment_verifications as e', (join) => join.on('l.kind', '=', 'employer').onRef('e.id', '=', 'l.verification_id'))
    .where('l.used_at', 'is', null)
    .where('l.expires_at', '>', since)
    .where((eb) =>
      eb.or([
        eb.and([eb('l.expires_at', '>', now), eb(sql`coalesce(g.state, e.state)`, '=', 'in_progress')]),
        eb.and([
          eb('l.expires_at', '<=', now),
          eb.or([eb(sql`coalesce(g.state, e.state)`, '=', 'in_progress'), eb(sql`coalesce(g.reason, e.reason)`, '=', 'NO_RESPONSE')]),
        ]),
      ]),
    );
}

function statusOf(now: Date): RawBuilder<InvitationStatus> {
  return sql<InvitationStatus>`case when l.expires_at > ${now} then 'pending' else 'expired' end`;
}

/** A page of invitations: pending ones expiring soonest first, expired ones latest first. */
export async function listInvitations(
  db: Kysely<DB>,
  filter: { status: InvitationStatus; orgId?: string | undefined; limit: number; offset: number },
  now = new Date(),
): Promise<{ rows: InvitationView[]; total: number }> {
  let query = unanswered(db, now).where('l.expires_at', filter.status === 'pending' ? '>' : '<=', now);
  if (filter.orgId) query = query.where('l.org_id', '=', filter.orgId);
  const [rows, count] = await Promise.all([
    query
      // The invitation's message (the latest, should there be more than one).
      .leftJoinLateral(
        (eb) =>
          eb
            .selectFrom('outbox_messages as m')
            .select(['m.recipient', 'm.sent_at', 'm.error'])
            .whereRef('m.verification_id', '=', 'l.verification_id')
            .whereRef('m.org_id', '=', 'l.org_id')
            .where('m.kind', '=', sql<string>`case l.kind when 'guarantor' then 'guarantor_request' else 'employer_request' end`)
            .orderBy('m.id', 'desc')
            .limit(1)
            .as('m'),
        (join) => join.onTrue(),
      )
      .select([
        'm.recipient',
        'm.sent_at',
        'm.error as send_error',
        'l.kind',
        'l.verification_id',
        'l.org_id',
        'o.name',
        'l.mode',
        'l.created_at',
        'l.expires_at',
        sql<string>`coalesce(g.reference, e.reference)`.as('reference'),
        statusOf(now).as('status'),
      ])
      .orderBy('l.expires_at', filter.status === 'pending' ? 'asc' : 'desc')
      .orderBy('l.verification_id')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return {
    total: Number(count.n),
    rows: rows.map((row) => ({
      kind: row.kind === 'employer' ? 'employment' : 'guarantor',
      verificationId: Number(row.verification_id),
      reference: row.reference,
      orgId: row.org_id,
      orgName: row.name,
      mode: row.mode,
      status: row.status,
      recipient: row.recipient ? maskEmail(row.recipient) : null,
      createdAt: row.created_at.toISOString(),
      sentAt: row.sent_at ? new Date(row.sent_at).toISOString() : null,
      sendError: row.send_error,
      expiresAt: row.expires_at.toISOString(),
    })),
  };
}

/** Pending and (recently) expired invitations per organization and mode, most pending first. */
export async function invitationCounts(db: Kysely<DB>, now = new Date()): Promise<InvitationCounts[]> {
  const rows = await unanswered(db, now)
    .select([
      'l.org_id',
      'o.name',
      'l.mode',
      sql<string>`count(*) filter (where l.expires_at > ${now})`.as('pending'),
      sql<string>`count(*) filter (where l.expires_at <= ${now})`.as('expired'),
    ])
    .groupBy(['l.org_id', 'o.name', 'l.mode'])
    .execute();
  return rows
    .map((row) => ({ orgId: row.org_id, orgName: row.name, mode: row.mode, pending: Number(row.pending), expired: Number(row.expired) }))
    .sort((a, b) => b.pending - a.pending || b.expired - a.expired || a.orgName.localeCompare(b.orgName));
}

/**
 * Sends a pending invitation's message again through SMTP_URL (what `vouch outbox send` does),
 * the same link and expiry. Audited with the operator and the outcome; the message keeps the
 * mail server's error when it refuses.
 */
export async function resendInvitation(
  db: Kysely<DB>,
  respondents: Respondents,
  input: { kind: InvitationKind; verificationId: number; mailConfigured: boolean },
  actor: Actor,
  now = new Date(),
): Promise<{ sent: boolean; error: string | null }> {
  const linkKind = LINK_KIND[input.kind];
  const invitation = await unanswered(db, now)
    .where('l.kind', '=', linkKind)
    .where('l.verification_id', '=', input.verificationId)
    .select(['l.org_id', 'l.mode', 'l.expires_at', sql<string>`coalesce(g.reference, e.reference)`.as('reference')])
    .orderBy('l.expires_at', 'desc')
    .executeTakeFirst();
  if (!invitation) throw new ApiError('NOT_FOUND_ERROR', `No unanswered ${input.kind} invitation for verification ${input.verificationId}`);
  if (invitation.expires_at <= now) {
    throw new ApiError('CONFLICT', 'This invitation has expired: its link no longer works, so sending it again would not help. The customer can start a new verification.');
  }
  if (!input.mailConfigured) {
    throw new ApiError('CONFLICT', 'No mail server is set (SMTP_URL): pass the link on by hand; `vouch outbox list` shows it');
  }
  if (invitation.mode !== 'live') {
    throw new ApiError('CONFLICT', 'This is a test-mode invitation: test mode never mails anyone, so the customer reads it in the portal\'s sandbox outbox');
  }
  const message = await db
    .selectFrom('outbox_messages')
    .select(['id', 'recipient'])
    .where('verification_id', '=', input.verificationId)
    .where('kind', '=', MESSAGE_KIND[linkKind])
    .where('org_id', '=', invitation.org_id)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!message) throw new ApiError('NOT_FOUND_ERROR', `No message was stored for ${input.kind} verification ${input.verificationId}`);
  const sent = await respondents.send(Number(message.id));
  const row = sent ? undefined : await db.selectFrom('outbox_messages').select('error').where('id', '=', message.id).executeTakeFirst();
  const error = sent ? null : (row?.error ?? 'the mail server refused it');
  await audit(db, {
    orgId: invitation.org_id,
    actor,
    action: 'invitation.resent',
    target: `${input.kind} ${input.verificationId} (${invitation.reference})`,
    after: { mode: invitation.mode, to: maskEmail(message.recipient), sent, ...(error ? { error } : {}) },
  });
  return { sent, error };
}
