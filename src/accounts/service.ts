import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { invalidateAuthCache } from '../platform/auth.js';
import { credit } from '../platform/billing.js';
import { nameProblem } from '../platform/input.js';
import type { DB, Mode, OrganizationsTable, PayloadType, RiskLevel } from '../platform/db/schema.js';
import { generateSecret, hashSecret, secretHint, type SecretGenerator } from '../platform/secrets.js';
import { notFound } from '../platform/not-found.js';

export const RISK_LEVELS: readonly RiskLevel[] = ['NONE', 'LOW', 'MEDIUM', 'HIGH'];
export const PAYLOAD_TYPES: readonly PayloadType[] = ['FULL', 'HALF'];

export interface OrganizationView {
  id: string;
  name: string;
  email: string | null;
  riskLevel: RiskLevel;
  payloadType: PayloadType;
  enabled: boolean;
  balance: number;
}

export interface CreatedOrganization extends OrganizationView {
  testSecret: string;
  liveSecret: string;
}

export interface CreateOrganizationInput {
  name: string;
  email?: string | undefined;
  riskLevel?: RiskLevel | undefined;
  payloadType?: PayloadType | undefined;
  enabled?: boolean | undefined;
  fund?: number | undefined;
}

export interface AccountsDeps {
  newId?: () => string;
  newSecret?: SecretGenerator;
  now?: () => Date;
}

/** After a roll the old secret may keep working this long at most. */
export const MAX_SECRET_OVERLAP_HOURS = 24;

export interface RollOptions {
  /** How long the old secret keeps working, in whole hours (0 to 24); 0 when absent. */
  overlapHours?: number;
  /** The portal person who rolled it; absent for the command line. */
  createdBy?: string | null;
  /** Runs inside the roll's transaction, after the new secret is written. */
  within?: (trx: Transaction<DB>, rolled: RolledSecret) => Promise<void>;
}

export interface RolledSecret {
  mode: Mode;
  /** The new plain secret. */
  secret: string;
  hint: string;
  /** The old secret's hint; null when the mode had no secret. */
  previousHint: string | null;
  /** Until when the old secret works (the roll's time when there is no overlap). */
  previousExpiresAt: Date;
}

/** A domain error of account administration (CLI and operator console), with a message for people. */
export class AccountError extends Error {
  override name = 'AccountError';
}

/** The columns an OrganizationView is made of. */
const VIEW_COLUMNS = ['id', 'name', 'email', 'risk_level', 'payload_type', 'enabled', 'balance'] as const;

function organizationView(row: Pick<Selectable<OrganizationsTable>, (typeof VIEW_COLUMNS)[number]>): OrganizationView {
  return { id: row.id, name: row.name, email: row.email, riskLevel: row.risk_level, payloadType: row.payload_type, enabled: row.enabled, balance: row.balance };
}

export class AccountsService {
  private readonly newId: () => string;
  private readonly newSecret: SecretGenerator;
  private readonly now: () => Date;

  constructor(
    private readonly db: Kysely<DB>,
    deps: AccountsDeps = {},
  ) {
    this.newId = deps.newId ?? randomUUID;
    this.newSecret = deps.newSecret ?? generateSecret;
    this.now = deps.now ?? (() => new Date());
  }

  /** Creates the organization with both secrets; the plain secrets are returned here and never again. */
  async create(input: CreateOrganizationInput): Promise<CreatedOrganization> {
    if (input.fund !== undefined && (!Number.isSafeInteger(input.fund) || input.fund < 0)) {
      throw new AccountError('fund must be a whole number of kobo, 0 or more');
    }
    const id = this.newId();
    const secrets = await this.db.transaction().execute((trx) => this.insert(trx, id, input));
    if (input.fund) await credit(this.db, id, input.fund, 'initial funding');
    const org = await this.get(id);
    return { ...org, testSecret: secrets.test, liveSecret: secrets.live };
  }

  /**
   * Inserts the organization and its two secrets inside the caller's transaction (sign-up makes
   * its owner in the same one); returns the plain secrets, which are never available again.
   */
  async insert(trx: Transaction<DB>, id: string, input: CreateOrganizationInput): Promise<Record<Mode, string>> {
    const name = input.name.trim();
    if (!name) throw new AccountError('name must not be empty');
    // Written into mails (invitations, decisions) and pages in the organization's name.
    const problem = nameProblem(name, 'name');
    if (problem) throw new AccountError(problem);
    const secrets = { test: this.newSecret('test'), live: this.newSecret('live') };
    await trx
      .insertInto('organizations')
      .values({
        id,
        name,
        email: input.email?.trim() || null,
        risk_level: input.riskLevel ?? 'NONE',
        payload_type: input.payloadType ?? 'FULL',
        enabled: input.enabled ?? false,
      })
      .execute();
    for (const mode of ['test', 'live'] as const) {
      await trx
        .insertInto('api_secrets')
        .values({
          id: this.newId(),
          org_id: id,
          mode,
          secret_hash: hashSecret(secrets[mode]),
          hint: secretHint(secrets[mode]),
          test_value: mode === 'test' ? secrets.test : null,
        })
        .execute();
    }
    return secrets;
  }

  async get(id: string): Promise<OrganizationView> {
    if (!isUuid(id)) throw notFound(new AccountError(`no organization with id ${id}`));
    const row = await this.db.selectFrom('organizations').select(VIEW_COLUMNS).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(new AccountError(`no organization with id ${id}`));
    return organizationView(row);
  }

  /** Every organization, oldest first (the CLI's `org list`). */
  async list(): Promise<OrganizationView[]> {
    const rows = await this.db.selectFrom('organizations').select(VIEW_COLUMNS).orderBy('created_at').orderBy('id').execute();
    return rows.map(organizationView);
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('organizations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Grants API access (live mode) with the risk level and NIN payload type the account manager chose. */
  async enable(id: string, riskLevel: RiskLevel, payloadType: PayloadType): Promise<OrganizationView> {
    await this.get(id);
    await this.db
      .updateTable('organizations')
      .set({ enabled: true, risk_level: riskLevel, payload_type: payloadType })
      .where('id', '=', id)
      .execute();
    invalidateAuthCache();
    return this.get(id);
  }

  /**
   * The organization's own requests per minute for each of its secrets, or null for the server's
   * default (VOUCH_RATE_LIMIT). Other processes apply it within their auth cache's 5 seconds.
   */
  async setRateLimit(id: string, perMinute: number | null): Promise<{ id: string; rateLimitPerMinute: number | null }> {
    if (perMinute !== null && (!Number.isSafeInteger(perMinute) || perMinute < 1 || perMinute > 100_000_000)) {
      throw new AccountError('the rate limit must be a whole number of requests per minute from 1 to 100000000, or "default"');
    }
    await this.get(id);
    await this.db.updateTable('organizations').set({ rate_limit_per_minute: perMinute }).where('id', '=', id).execute();
    invalidateAuthCache();
    return { id, rateLimitPerMinute: perMinute };
  }

  async fund(id: string, kobo: number): Promise<OrganizationView> {
    if (!Number.isSafeInteger(kobo) || kobo <= 0) throw new AccountError('amount must be a positive whole number of kobo');
    await this.get(id);
    await credit(this.db, id, kobo, 'funding');
    return this.get(id);
  }

  /** Replaces the secret of one mode: the old one stops working at once. Returns the new plain secret. */
  async rotateSecret(id: string, mode: Mode): Promise<string> {
    return (await this.rollSecret(id, mode)).secret;
  }

  /**
   * Replaces the secret of one mode. The old one keeps working for `overlapHours` (0 to 24; 0 =
   * it stops at once): its `revoked_at` is set to the end of the overlap. One old secret at a
   * time: one still in an earlier overlap stops now. `within` runs inside the roll's transaction
   * (the portal writes its audit row there). Returns the new plain secret, never available again
   * for a live secret (a test secret stays readable in `test_value`).
   */
  async rollSecret(id: string, mode: Mode, options: RollOptions = {}): Promise<RolledSecret> {
    const overlapHours = options.overlapHours ?? 0;
    if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > MAX_SECRET_OVERLAP_HOURS) {
      throw new AccountError(`overlap must be a whole number of hours from 0 to ${MAX_SECRET_OVERLAP_HOURS}`);
    }
    await this.get(id);
    const secret = this.newSecret(mode);
    const now = this.now();
    const previousExpiresAt = new Date(now.getTime() + overlapHours * 3_600_000);
    const rolled = await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('api_secrets')
        .set({ revoked_at: now })
        .where('org_id', '=', id)
        .where('mode', '=', mode)
        .where('revoked_at', '>', now)
        .execute();
      const old = await trx
        .updateTable('api_secrets')
        .set({ revoked_at: previousExpiresAt, test_value: null })
        .where('org_id', '=', id)
        .where('mode', '=', mode)
        .where('revoked_at', 'is', null)
        .returning('hint')
        .executeTakeFirst();
      await trx
        .insertInto('api_secrets')
        .values({
          id: this.newId(),
          org_id: id,
          mode,
          secret_hash: hashSecret(secret),
          hint: secretHint(secret),
          test_value: mode === 'test' ? secret : null,
          created_by: options.createdBy ?? null,
        })
        .execute();
      const result: RolledSecret = { mode, secret, hint: secretHint(secret), previousHint: old?.hint ?? null, previousExpiresAt };
      await options.within?.(trx, result);
      return result;
    });
    invalidateAuthCache();
    return rolled;
  }
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
