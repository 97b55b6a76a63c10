import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { invalidateAuthCache } from '../../platform/auth.js';
import type { DB, PayloadType, RiskLevel } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { audit, type Actor } from '../audit.js';
import type { PeopleMail, PersonMail } from '../mail.js';

export interface AccessRequestView {
  id: string;
  status: 'pending' | 'approved' | 'declined';
  riskLevel: RiskLevel;
  payloadType: PayloadType;
  useCase: string | null;
  decidedRiskLevel: RiskLevel | null;
  decidedPayloadType: PayloadType | null;
  declineReason: string | null;
  createdAt: string;
  decidedAt: string | null;
}

/** A request with its organization, for operators (`vouch access list`, the console). */
export interface AccessRequestEntry extends AccessRequestView {
  orgId: string;
  orgName: string;
}

export type AccessRequestStatus = AccessRequestView['status'];

export interface AccessRequestsOptions {
  /** Mails the member who asked when an account manager decides; without it nobody is mailed. */
  mail?: PeopleMail | undefined;
  /** The portal's address, for the link in those mails. */
  publicUrl?: string | undefined;
}

/** How many requests an organization's history shows: the newest. */
const HISTORY_SIZE = 50;

type AccessRequestRow = {
  id: string;
  status: AccessRequestStatus;
  risk_level: RiskLevel;
  payload_type: PayloadType;
  use_case: string | null;
  decided_risk_level: RiskLevel | null;
  decided_payload_type: PayloadType | null;
  decline_reason: string | null;
  created_at: Date;
  decided_at: Date | null;
};

function view(row: AccessRequestRow): AccessRequestView {
  return {
    id: row.id,
    status: row.status,
    riskLevel: row.risk_level,
    payloadType: row.payload_type,
    useCase: row.use_case,
    decidedRiskLevel: row.decided_risk_level,
    decidedPayloadType: row.decided_payload_type,
    declineReason: row.decline_reason,
    createdAt: row.created_at.toISOString(),
    decidedAt: row.decided_at?.toISOString() ?? null,
  };
}

/**
 * The spec's enablement as a flow: a customer asks for API access, an account manager decides.
 * The portal, the CLI (`vouch org enable` / `org decline`) and the operator console all call
 * these methods, each with its own actor.
 */
export class AccessRequests {
  private readonly sending = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: AccessRequestsOptions = {},
  ) {}

  /** An organization's requests, newest first. */
  async list(orgId: string): Promise<AccessRequestView[]> {
    const rows = await this.db.selectFrom('access_requests').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').limit(HISTORY_SIZE).execute();
    return rows.map(view);
  }

  /** Every organization's requests, newest first (pending ones only when asked), for operators. */
  async listAll(filter: { status?: AccessRequestStatus | undefined; limit: number }): Promise<AccessRequestEntry[]> {
    let query = this.db
      .selectFrom('access_requests as r')
      .innerJoin('organizations as o', 'o.id', 'r.org_id')
      .selectAll('r')
      .select('o.name as org_name')
      .orderBy('r.created_at', 'desc')
      .limit(filter.limit);
    if (filter.status) query = query.where('r.status', '=', filter.status);
    const rows = await query.execute();
    return rows.map((row) => ({ ...view(row), orgId: row.org_id, orgName: row.org_name }));
  }

  /** Waits for the decision mails still being sent (the CLI, before it closes the database). */
  async flush(): Promise<void> {
    await Promise.all([...this.sending]);
  }

  async request(orgId: string, input: { riskLevel: RiskLevel; payloadType: PayloadType; useCase?: string | undefined }, actor: Actor): Promise<string> {
    const id = randomUUID();
    try {
      await this.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('access_requests')
          .values({ id, org_id: orgId, risk_level: input.riskLevel, payload_type: input.payloadType, use_case: input.useCase?.trim() || null, requested_by: actor.personId ?? null })
          .execute();
        await audit(trx, { orgId, actor, action: 'access.requested', after: { riskLevel: input.riskLevel, payloadType: input.payloadType } });
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new ApiError('CONFLICT', 'A request for API access is already pending; an account manager will decide on it');
      throw err;
    }
    return id;
  }

  /**
   * Enables the organization with the given values and marks its pending request (if any)
   * approved with them, in one transaction, with the audit row. Returns the request's id.
   */
  async approve(orgId: string, values: { riskLevel: RiskLevel; payloadType: PayloadType }, actor: Actor): Promise<string | undefined> {
    const { requestId, mailIds } = await this.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('organizations').select(['enabled', 'risk_level', 'payload_type']).where('id', '=', orgId).forUpdate().executeTakeFirst();
      if (!before) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId}`);
      await trx.updateTable('organizations').set({ enabled: true, risk_level: values.riskLevel, payload_type: values.payloadType }).where('id', '=', orgId).execute();
      const request = await trx
        .updateTable('access_requests')
        .set({ status: 'approved', decided_risk_level: values.riskLevel, decided_payload_type: values.payloadType, decided_by: actor.personId ?? null, decided_at: new Date() })
        .where('org_id', '=', orgId)
        .where('status', '=', 'pending')
        .returning(['id', 'requested_by'])
        .executeTakeFirst();
      await audit(trx, {
        orgId,
        actor,
        action: 'access.approved',
        target: request ? `access request ${request.id}` : undefined,
        before: { enabled: before.enabled, riskLevel: before.risk_level, payloadType: before.payload_type },
        after: { enabled: true, ...values },
      });
      // Enabling an organization that never asked (the command line alone) mails nobody.
      const mailIds = request ? await this.queueDecisionMail(trx, orgId, request.requested_by, { approved: values }) : [];
      return { requestId: request?.id, mailIds };
    });
    invalidateAuthCache();
    for (const id of mailIds) this.dispatch(id);
    return requestId;
  }

  /** Declines the pending request with a reason the customer sees; API access stays as it is. */
  async decline(orgId: string, reason: string, actor: Actor): Promise<string> {
    const text = reason.trim();
    if (!text) throw new ApiError('VALIDATION_ERROR', 'reason must say why, for the customer');
    if (text.length > MAX_REASON_LENGTH) throw new ApiError('VALIDATION_ERROR', `reason must be at most ${MAX_REASON_LENGTH} characters`);
    const { requestId, mailIds } = await this.db.transaction().execute(async (trx) => {
      const request = await trx
        .updateTable('access_requests')
        .set({ status: 'declined', decline_reason: text, decided_by: actor.personId ?? null, decided_at: new Date() })
        .where('org_id', '=', orgId)
        .where('status', '=', 'pending')
        .returning(['id', 'requested_by'])
        .executeTakeFirst();
      if (!request) throw new ApiError('NOT_FOUND_ERROR', `organization ${orgId} has no pending access request`);
      await audit(trx, { orgId, actor, action: 'access.declined', target: `access request ${request.id}`, before: { status: 'pending' }, after: { status: 'declined', reason: text } });
      return { requestId: request.id, mailIds: await this.queueDecisionMail(trx, orgId, request.requested_by, { declined: text }) };
    });
    for (const id of mailIds) this.dispatch(id);
    return requestId;
  }

  /**
   * Mails the member who asked; when they have left the organization (or the request was made
   * without a person), its owners instead.
   */
  private async queueDecisionMail(trx: Kysely<DB>, orgId: string, requesterId: string | null, decision: Decision): Promise<number[]> {
    const mail = this.options.mail;
    if (!mail) return [];
    const members = trx
      .selectFrom('memberships as m')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .innerJoin('organizations as o', 'o.id', 'm.org_id')
      .select(['p.email', 'p.name', 'o.name as orgName'])
      .where('m.org_id', '=', orgId);
    let recipients = requesterId ? await members.where('m.person_id', '=', requesterId).execute() : [];
    if (recipients.length === 0) recipients = await members.where('m.role', '=', 'owner').execute();
    const link = this.options.publicUrl ? `${this.options.publicUrl.replace(/\/$/, '')}/api-access` : undefined;
    const ids: number[] = [];
    for (const person of recipients) ids.push(await mail.queue(trx, decisionMail(person, decision, link)));
    return ids;
  }

  private dispatch(mailId: number): void {
    const mail = this.options.mail;
    if (!mail) return;
    const sent = mail.dispatch(mailId).finally(() => this.sending.delete(sent));
    this.sending.add(sent);
  }
}

/** A decline's reason is shown to the customer and mailed: a few sentences at most. */
export const MAX_REASON_LENGTH = 1000;

type Decision = { approved: { riskLevel: RiskLevel; payloadType: PayloadType } } | { declined: string };

function decisionMail(person: { email: string; name: string; orgName: string }, decision: Decision, link: string | undefined): PersonMail {
  const see = link ? `\n\nSee it in the portal: ${link}` : '';
  if ('approved' in decision) {
    const { riskLevel, payloadType } = decision.approved;
    return {
      kind: 'access_approved',
      to: person.email,
      subject: `${person.orgName} can now use the live Vouch API`,
      text:
        `Hello ${person.name},\n\nAn account manager approved live API access for ${person.orgName}, with risk level ${riskLevel} and identity payload type ${payloadType}. ` +
        `Your live secret works from now on; live checks are charged to the wallet.${see}\n`,
    };
  }
  return {
    kind: 'access_declined',
    to: person.email,
    subject: `Your request for live Vouch API access was declined`,
    text:
      `Hello ${person.name},\n\nAn account manager declined the request of ${person.orgName} for live API access.\n\nReason: ${decision.declined}\n\n` +
      `You may ask again once you have what the reason asks for. Test mode keeps working meanwhile.${see}\n`,
  };
}
