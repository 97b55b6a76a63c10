import { sql, type Kysely } from 'kysely';
import type { FileStore } from '../files/store.js';
import { openFileStore } from '../files/open-store.js';
import { repeatUntilStopped, type BackgroundTask } from '../platform/background.js';
import { protectionOf } from '../platform/crypto/fields.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { audit, type Actor } from '../portal/audit.js';
import { applyScreeningRetention } from '../screening/privacy.js';
import { applySessionRetention } from '../sessions/privacy.js';
import { anonymiseVerifications, deleteFiles, ENDED_STATUSES, STATUS_COLUMN, VERIFICATION_KINDS, VERIFICATION_TABLES, type AnonymiseCounts } from './anonymise.js';
import './tables.js';

/**
 * Storage limitation (issue 12, docs/data-protection.md "Retention"): how long each kind of
 * personal data is kept, per organization, and the worker job that purges or anonymises what is
 * older. The job is idempotent (what it did is not found again) and batched (a bounded number of
 * rows per transaction; a stopped run resumes where it left off, since it only looks at what is
 * still there).
 */

/** The settings an organization can change, in days. */
export const RETENTION_KEYS = ['lookupDays', 'verificationDays', 'photoDays', 'webhookDays'] as const;
export type RetentionKey = (typeof RETENTION_KEYS)[number];

/** The defaults (the webhook period's default is the server's VOUCH_WEBHOOK_RETENTION_DAYS). */
export const RETENTION_DEFAULTS = { lookupDays: 90, verificationDays: 730, photoDays: 365 } as const;
export const MIN_RETENTION_DAYS = 1;
export const MAX_RETENTION_DAYS = 3650;

/** Fixed periods that are not per organization. */
export const FIELD_REPORT_KEY_DAYS = 30;

const COLUMNS: Record<RetentionKey, 'lookup_days' | 'verification_days' | 'photo_days' | 'webhook_days'> = {
  lookupDays: 'lookup_days',
  verificationDays: 'verification_days',
  photoDays: 'photo_days',
  webhookDays: 'webhook_days',
};

export const RETENTION_LABELS: Record<RetentionKey, string> = {
  lookupDays: 'identity lookup records (the masked number on usage rows and ledger descriptions)',
  verificationDays: 'completed or cancelled verifications (personal fields blanked, the row kept)',
  photoDays: 'visit photos (file store)',
  webhookDays: 'ended webhook deliveries (their bodies)',
};

export interface RetentionSettings {
  orgId: string;
  lookupDays: number;
  verificationDays: number;
  photoDays: number;
  webhookDays: number;
  /** The default of each setting. */
  defaults: Record<RetentionKey, number>;
  /** Which settings the organization changed (the others follow the default). */
  custom: Record<RetentionKey, boolean>;
}

export type RetentionChange = Partial<Record<RetentionKey, number | null>>;

function defaultsFor(webhookDefaultDays: number): Record<RetentionKey, number> {
  return { ...RETENTION_DEFAULTS, webhookDays: webhookDefaultDays };
}

/** An organization's retention periods in force. NOT_FOUND_ERROR for an unknown organization. */
export async function getRetention(db: Kysely<DB>, orgId: string, webhookDefaultDays: number): Promise<RetentionSettings> {
  const org = await db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst();
  if (!org) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId.slice(0, 40)}`);
  const row = await db.selectFrom('retention_settings').selectAll().where('org_id', '=', orgId).executeTakeFirst();
  return settingsOf(orgId, row, webhookDefaultDays);
}

function settingsOf(orgId: string, row: Record<string, unknown> | undefined, webhookDefaultDays: number): RetentionSettings {
  const defaults = defaultsFor(webhookDefaultDays);
  const value = (key: RetentionKey) => (row?.[COLUMNS[key]] ?? null) as number | null;
  return {
    orgId,
    lookupDays: value('lookupDays') ?? defaults.lookupDays,
    verificationDays: value('verificationDays') ?? defaults.verificationDays,
    photoDays: value('photoDays') ?? defaults.photoDays,
    webhookDays: value('webhookDays') ?? defaults.webhookDays,
    defaults,
    custom: Object.fromEntries(RETENTION_KEYS.map((key) => [key, value(key) !== null])) as Record<RetentionKey, boolean>,
  };
}

/**
 * Checks a change: whole days from 1 to 3650, or null for the default; the webhook period at
 * most the server's (the server-wide retention deletes older deliveries anyway). VALIDATION_ERROR
 * naming the setting otherwise.
 */
export function checkRetentionChange(change: RetentionChange, webhookDefaultDays: number): void {
  const keys = Object.keys(change);
  if (keys.length === 0) throw new ApiError('VALIDATION_ERROR', `nothing to change: give at least one of ${RETENTION_KEYS.join(', ')}`);
  for (const key of keys) {
    if (!(RETENTION_KEYS as readonly string[]).includes(key)) throw new ApiError('VALIDATION_ERROR', `unknown retention setting ${key.slice(0, 40)}; one of ${RETENTION_KEYS.join(', ')}`);
    const value = change[key as RetentionKey];
    if (value === null || value === undefined) continue;
    const max = key === 'webhookDays' ? webhookDefaultDays : MAX_RETENTION_DAYS;
    if (!Number.isInteger(value) || value < MIN_RETENTION_DAYS || value > max) {
      throw new ApiError('VALIDATION_ERROR', `${key} must be a whole number of days from ${MIN_RETENTION_DAYS} to ${max}${key === 'webhookDays' ? ' (VOUCH_WEBHOOK_RETENTION_DAYS)' : ''}, or null for the default`);
    }
  }
}

/** Changes an organization's retention periods, audited (before and after) in the same transaction. */
export async function setRetention(db: Kysely<DB>, orgId: string, change: RetentionChange, actor: Actor, webhookDefaultDays: number): Promise<RetentionSettings> {
  checkRetentionChange(change, webhookDefaultDays);
  return db.transaction().execute(async (trx) => {
    const before = await getRetention(trx, orgId, webhookDefaultDays);
    const values = Object.fromEntries(Object.entries(change).map(([key, value]) => [COLUMNS[key as RetentionKey], value ?? null]));
    await trx
      .insertInto('retention_settings')
      .values({ org_id: orgId, ...values, updated_at: new Date() })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ ...values, updated_at: new Date() }))
      .execute();
    const after = await getRetention(trx, orgId, webhookDefaultDays);
    const pick = (settings: RetentionSettings) => Object.fromEntries(RETENTION_KEYS.map((key) => [key, settings[key]]));
    await audit(trx, { orgId, actor, action: 'organization.retention_changed', target: 'retention', before: pick(before), after: pick(after) });
    return after;
  });
}

// ---------------------------------------------------------------------------------------------
// The job

export interface RetentionRunOptions {
  /** The clock: everything is measured from it (tests pass a fixed one). */
  now: Date;
  /** The server's webhook retention (VOUCH_WEBHOOK_RETENTION_DAYS): the default of webhookDays. */
  webhookDefaultDays: number;
  /** Rows per transaction. */
  batchSize?: number;
  shouldStop?: () => boolean;
}

/** What one run purged or anonymised, per kind of data. */
export interface RetentionCounts {
  verifications: Record<string, number>;
  photos: number;
  lookupSubjects: number;
  webhookDeliveries: number;
  upstreamCache: number;
  idempotencyKeys: number;
  fieldReportKeys: number;
  heldReports: number;
  outboxMessages: number;
  /** Mail to people (`mail_messages`) whose links had expired. */
  mailMessages: number;
}

export const RETENTION_BATCH = 200;

/** `<now> - <org's days, or the default> days` for the row's organization (alias `r` is its retention_settings row). */
function cutoff(now: Date, column: string, defaultDays: number) {
  return sql`(${now}::timestamptz - make_interval(days => coalesce(${sql.ref(`r.${column}`)}, ${defaultDays}::int)))`;
}

/**
 * One pass of the retention job: every organization's data past its periods is purged or
 * anonymised, batch after batch, until nothing is left (or `shouldStop`). Running it again at the
 * same `now` changes nothing. Money stays: ledger and usage rows keep their amounts, only the
 * masked identity number in them goes.
 */
export async function applyRetention(db: Kysely<DB>, store: FileStore, options: RetentionRunOptions): Promise<RetentionCounts> {
  const { now, webhookDefaultDays, shouldStop } = options;
  const batch = options.batchSize ?? RETENTION_BATCH;
  const counts: RetentionCounts = {
    verifications: {},
    photos: 0,
    lookupSubjects: 0,
    webhookDeliveries: 0,
    upstreamCache: 0,
    idempotencyKeys: 0,
    fieldReportKeys: 0,
    heldReports: 0,
    outboxMessages: 0,
    mailMessages: 0,
  };
  const add = (part: AnonymiseCounts) => {
    counts.photos += part.photos;
    counts.outboxMessages += part.outbox;
    counts.fieldReportKeys += part.fieldReportKeys;
  };
  const stopped = () => shouldStop?.() === true;

  // 1. Verifications that ended before their organization's period: personal fields blanked.
  for (const kind of VERIFICATION_KINDS) {
    counts.verifications[kind] = 0;
    const table = VERIFICATION_TABLES[kind];
    const ended = sql.join(ENDED_STATUSES.map((status) => sql`${status}`));
    for (;;) {
      const { rows } = await sql<{ id: number }>`
        select v.id from ${sql.table(table)} v left join retention_settings r on r.org_id = v.org_id
         where v.anonymised_at is null and ${sql.ref(`v.${STATUS_COLUMN[kind]}`)} in (${ended})
           and coalesce(v.completed_at, v.cancelled_at) < ${cutoff(now, 'verification_days', RETENTION_DEFAULTS.verificationDays)}
         order by coalesce(v.completed_at, v.cancelled_at)
         limit ${batch}`.execute(db);
      const ids = rows.map((row) => Number(row.id));
      const done = await anonymiseVerifications(db, store, kind, ids, { now });
      counts.verifications[kind] += done.verifications;
      add(done);
      if (ids.length < batch || stopped()) break;
    }
  }

  // 1b. Verification sessions: frames (selfies) after 30 days or the photo period if shorter,
  //     ended sessions after the verification period (src/sessions/privacy.ts).
  const sessions = await applySessionRetention(db, store, { now, verificationDays: RETENTION_DEFAULTS.verificationDays, batchSize: batch, shouldStop });
  counts.verifications.session = sessions.sessions;
  counts.photos += sessions.frames;

  // 1c. Screenings no longer monitored, after the verification period from their last activity (src/screening/privacy.ts).
  counts.verifications.screening = await applyScreeningRetention(db, { now, verificationDays: RETENTION_DEFAULTS.verificationDays, batchSize: batch, shouldStop });

  // 2. Photos older than the period: the file, its row, and its id on the verification.
  for (;;) {
    const { rows } = await sql<{ id: string }>`
      select f.id from uploaded_files f left join retention_settings r on r.org_id = f.org_id
       where f.created_at < ${cutoff(now, 'photo_days', RETENTION_DEFAULTS.photoDays)}
       order by f.created_at
       limit ${batch}`.execute(db);
    const ids = rows.map((row) => row.id);
    if (ids.length > 0) {
      await deleteFiles(store, ids);
      const inList = sql.join(ids.map((id) => sql`${id}::uuid`));
      await db.transaction().execute(async (trx) => {
        for (const table of ['address_verifications', 'business_verifications'] as const) {
          await sql`update ${sql.table(table)} set photo_ids = array(select p from unnest(photo_ids) p where p not in (${inList}))
                     where photo_ids && array[${inList}]`.execute(trx);
        }
        const gone = await trx.deleteFrom('uploaded_files').where('id', 'in', ids).executeTakeFirst();
        counts.photos += Number(gone.numDeletedRows);
      });
    }
    if (ids.length < batch || stopped()) break;
  }

  // 3. Identity lookups: the masked number leaves the usage row and its ledger row's description.
  for (;;) {
    const { rows } = await sql<{ done: number }>`
      with picked as (
        select u.id, u.ledger_entry_id, u.type from usage_events u left join retention_settings r on r.org_id = u.org_id
         where u.subject like '%*%' and u.created_at < ${cutoff(now, 'lookup_days', RETENTION_DEFAULTS.lookupDays)}
         order by u.created_at
         limit ${batch}
         for update of u skip locked
      ), ledger as (
        update ledger_entries l set description = p.type from picked p where l.id = p.ledger_entry_id returning 1
      ), blanked as (
        update usage_events u set subject = '' from picked p where u.id = p.id returning 1
      )
      select count(*)::integer as done from blanked`.execute(db);
    const done = rows[0]?.done ?? 0;
    counts.lookupSubjects += done;
    if (done < batch || stopped()) break;
  }

  // 4. Ended webhook deliveries of organizations with a period shorter than the server's (the
  //    server-wide retention task deletes the rest: src/webhooks/retention.ts).
  for (;;) {
    const { rows } = await sql<{ deleted: number }>`
      with gone as (
        delete from webhook_deliveries where id in (
          select d.id from webhook_deliveries d join retention_settings r on r.org_id = d.org_id
           where r.webhook_days is not null and d.status <> 'pending'
             and coalesce(d.delivered_at, d.next_attempt_at) < ${cutoff(now, 'webhook_days', webhookDefaultDays)}
           limit ${batch}
           for update of d skip locked)
        and status <> 'pending'
        returning 1
      )
      select count(*)::integer as deleted from gone`.execute(db);
    const deleted = rows[0]?.deleted ?? 0;
    counts.webhookDeliveries += deleted;
    if (deleted < batch || stopped()) break;
  }

  // 5. Tenant-neutral stores with their own expiry: the upstream cache (its TTLs), stored
  //    idempotent answers (24 hours), the field app's stored answers of visits closed long ago.
  counts.upstreamCache = await deleteInBatches(db, batch, stopped, sql`
    delete from upstream_cache where (type, key_hash) in (select type, key_hash from upstream_cache where expires_at <= ${now} limit ${batch})`);
  counts.idempotencyKeys = await deleteInBatches(db, batch, stopped, sql`
    delete from idempotency_keys where (org_id, mode, key) in (
      select org_id, mode, key from idempotency_keys where expires_at <= ${now} and (state = 'done' or locked_until <= ${now}) limit ${batch})`);
  const keysBefore = new Date(now.getTime() - FIELD_REPORT_KEY_DAYS * 86_400_000);
  counts.fieldReportKeys += await deleteInBatches(db, batch, stopped, sql`
    delete from field_report_keys where (agent_id, key) in (
      select k.agent_id, k.key from field_report_keys k join field_tasks t on t.kind = k.kind and t.verification_id = k.verification_id
       where t.closed_at < ${keysBefore} limit ${batch})`);

  // 6. Reports held for review on visits that closed meanwhile (the customer cancelled): never
  //    approved, so neither their contents nor their photos have a purpose any more.
  for (;;) {
    const held = await db
      .selectFrom('field_tasks')
      .select(['kind', 'verification_id', 'held_report'])
      .where('closed_at', 'is not', null)
      .where('held_report', 'is not', null)
      .limit(batch)
      .execute();
    for (const task of held) {
      const table = VERIFICATION_TABLES[task.kind];
      const { rows } = await sql<{ photo_ids: string[] }>`select photo_ids from ${sql.table(table)} where id = ${task.verification_id}`.execute(db);
      const kept = new Set(rows[0]?.photo_ids ?? []);
      const orphans = (task.held_report?.photoIds ?? []).filter((id) => !kept.has(id));
      await deleteFiles(store, orphans);
      await db.transaction().execute(async (trx) => {
        if (orphans.length > 0) counts.photos += Number((await trx.deleteFrom('uploaded_files').where('id', 'in', orphans).executeTakeFirst()).numDeletedRows);
        await trx.updateTable('field_tasks').set({ held_report: null, held_at: null }).where('kind', '=', task.kind).where('verification_id', '=', task.verification_id).execute();
      });
      counts.heldReports += 1;
    }
    if (held.length < batch || stopped()) break;
  }

  // 7. Mail to people (resets, invitations, sign-in links, decisions) once its link expired
  //    (`expires_at`, set from the token's lifetime): the token is dead, and the address, names and
  //    text have no use left. Sent or not: an unsent mail's link no longer works either.
  counts.mailMessages = await deleteInBatches(db, batch, stopped, sql`
    delete from mail_messages where id in (select id from mail_messages where expires_at <= ${now} order by expires_at limit ${batch})`);
  return counts;
}

async function deleteInBatches(db: Kysely<DB>, batch: number, stopped: () => boolean, statement: ReturnType<typeof sql>): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await statement.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < batch || stopped()) return total;
  }
}

/** How often the worker runs the retention job. */
export const RETENTION_JOB_INTERVAL_MS = 60 * 60 * 1000;

export interface RetentionJobOptions {
  now?: () => Date;
  intervalMs?: number;
  batchSize?: number;
}

function total(counts: RetentionCounts): number {
  const { verifications, ...rest } = counts;
  return Object.values(verifications).reduce((a, b) => a + b, 0) + Object.values(rest).reduce((a, b) => a + b, 0);
}

/** Background task: the retention job at start and every hour. Logs counts only, never data. */
export function retentionJobTask(options: RetentionJobOptions = {}): BackgroundTask {
  const name = 'data retention';
  const now = options.now ?? (() => new Date());
  const intervalMs = options.intervalMs ?? RETENTION_JOB_INTERVAL_MS;
  return {
    name,
    async start({ database, config, logger }) {
      const store = openFileStore(config, protectionOf(database.db));
      return repeatUntilStopped(name, logger, intervalMs, async (stopped) => {
        const counts = await applyRetention(database.db, store, { now: now(), webhookDefaultDays: config.webhookRetentionDays, batchSize: options.batchSize, shouldStop: stopped });
        if (total(counts) > 0) logger.info({ counts }, `${name}: purged or anonymised ${total(counts)} item(s)`);
      });
    },
  };
}
