import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedOrganization } from '../../src/accounts/service.js';
import type { EncryptedFileStore } from '../../src/files/encrypted-store.js';
import { openFileStore } from '../../src/files/open-store.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { protectionOf } from '../../src/platform/crypto/fields.js';
import { applyRetention, getRetention, type RetentionCounts } from '../../src/privacy/retention.js';
import { bearer, buildTestContext, NOWHERE_WEBHOOK_URL, testConfig, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';
import { after, DAY, storedFiles, visitedAddress } from './fixtures.js';

const PERSON = { bvn: '22291800011', firstname: 'Adaeze', lastname: 'Obiorah-Retained', middlename: '', gender: 'Female', phone: '08091800011', birthdate: '01-02-1990' };
const APPLICANT = { firstname: 'Kelechi', lastname: 'Retention-Applicant', idType: 'NIN', idNumber: '12391800022', phone: '08061800022' };
const NEIGHBOUR = { neighborName: 'Bisi Retention-Neighbour', neighborComment: 'Lives here', neighborPhone: '08121800033' };

let ctx: TestContext;
let dataDir: string;
let store: EncryptedFileStore;
let operator: PortalUser;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-retention-'));
  ctx = await buildTestContext({ config: { dataDir }, webhookUrl: NOWHERE_WEBHOOK_URL });
  store = openFileStore(testConfig({ dataDir }), protectionOf(ctx.database.db));
  operator = await operatorUser(ctx.app, ctx.database.db);
  await importRegistry(ctx.database.db, Readable.from([JSON.stringify({ type: 'bvn', record: PERSON })]));
}, 60_000);
afterAll(async () => {
  await ctx?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

const raw = () => ctx.database.db.withoutPlugins();
const run = (now: Date): Promise<RetentionCounts> => applyRetention(ctx.database.db, store, { now, webhookDefaultDays: 30, batchSize: 2 });
const nothing = (counts: RetentionCounts) => {
  const { verifications, ...rest } = counts;
  return Object.values(verifications).every((n) => n === 0) && Object.values(rest).every((n) => n === 0);
};

describe('the retention job', () => {
  let org: CreatedOrganization;
  let addressId: number;
  let completedAt: Date;
  let lookupAt: Date;

  it('keeps everything just inside the defaults, then anonymises and purges what is outside, in batches, and a second run changes nothing; money stays', async () => {
    const db = ctx.database.db;
    org = await ctx.org({ fund: 50_000_000, riskLevel: 'LOW' });
    // A live identity lookup (charged: usage + ledger rows with the masked BVN), with a stored idempotent answer.
    const lookup = await ctx.app.inject({
      method: 'POST',
      url: `/v1/verifications/identities/bvn/${PERSON.bvn}?type=premium`,
      headers: { ...bearer(org.liveSecret), 'idempotency-key': 'retention-1' },
      payload: { firstname: PERSON.firstname, lastname: PERSON.lastname },
    });
    expect(lookup.statusCode, lookup.body).toBe(200);
    // Three visited address verifications with two photos each (batches of two).
    addressId = await visitedAddress(ctx.app, db, org.liveSecret, { applicant: APPLICANT }, NEIGHBOUR, 1);
    const others = [await visitedAddress(ctx.app, db, org.liveSecret, { applicant: { ...APPLICANT, idNumber: '12391800044' } }, NEIGHBOUR, 3), await visitedAddress(ctx.app, db, org.liveSecret, { applicant: { ...APPLICANT, idNumber: '12391800055' } }, NEIGHBOUR, 5)];
    // A cached upstream record and an ended webhook delivery.
    await db.insertInto('upstream_cache').values({ type: 'bvn', key_hash: 'retention-cache-1', record: JSON.stringify({ bvn: PERSON.bvn }), source: 'dojah', expires_at: after(new Date(), DAY) }).execute();

    const row = await raw().selectFrom('address_verifications').select(['completed_at']).where('id', '=', addressId).executeTakeFirstOrThrow();
    completedAt = row.completed_at as Date;
    const usage = await raw().selectFrom('usage_events').select(['id', 'created_at', 'subject', 'ledger_entry_id']).where('org_id', '=', org.id).where('subject', 'like', '%*%').executeTakeFirstOrThrow();
    lookupAt = usage.created_at;
    expect(usage.subject).toBe('222******11');
    const money = async () => (await raw().selectFrom('ledger_entries').select(['id', 'amount', 'balance_after', 'kind']).where('org_id', '=', org.id).orderBy('id').execute());
    const moneyBefore = await money();
    expect(moneyBefore.length).toBeGreaterThanOrEqual(5);
    const usageRows = await raw().selectFrom('usage_events').select(['id', 'price', 'outcome', 'type']).where('org_id', '=', org.id).orderBy('id').execute();
    const filesBefore = await storedFiles(dataDir);
    expect(filesBefore.length).toBe(6);

    // Just inside every window: nothing changes (the cache and the idempotent answer have not expired yet either).
    const inside = await run(after(completedAt, 364 * DAY));
    expect(inside.verifications.address).toBe(0);
    expect(inside.photos).toBe(0);
    expect(inside.upstreamCache).toBe(1); // expired after a day
    expect(inside.idempotencyKeys).toBe(1); // 24 hours
    expect(inside.lookupSubjects).toBe(1); // 364 days > 90
    expect(await storedFiles(dataDir)).toHaveLength(6);
    expect((await raw().selectFrom('usage_events').select('subject').where('id', '=', usage.id).executeTakeFirstOrThrow()).subject).toBe('');
    const entry = await raw().selectFrom('ledger_entries').select(['description', 'amount']).where('id', '=', usage.ledger_entry_id!).executeTakeFirstOrThrow();
    expect(entry.description).not.toContain('*');
    expect(entry.amount).toBeLessThan(0);
    const kept = await db.selectFrom('address_verifications').select(['applicant', 'street', 'neighbor', 'photo_ids']).where('id', '=', addressId).executeTakeFirstOrThrow();
    expect(kept.applicant.lastname).toBe(APPLICANT.lastname);
    expect(kept.photo_ids).toHaveLength(2);

    // Past the photo period (365 days): the photos go, from the store and the verification.
    const photos = await run(after(completedAt, 366 * DAY));
    expect(photos.photos).toBe(6);
    expect(await storedFiles(dataDir)).toEqual([]);
    expect(await raw().selectFrom('uploaded_files').select('id').where('org_id', '=', org.id).execute()).toEqual([]);
    expect((await db.selectFrom('address_verifications').select('photo_ids').where('id', '=', addressId).executeTakeFirstOrThrow()).photo_ids).toEqual([]);
    expect(photos.verifications.address).toBe(0);

    // Just inside the verification period (730 days), then past it.
    expect((await run(after(completedAt, 729 * DAY))).verifications.address).toBe(0);
    const past = await run(after(completedAt, 731 * DAY));
    expect(past.verifications.address).toBe(3);
    const blank = await raw().selectFrom('address_verifications').selectAll().where('id', 'in', [addressId, ...others]).execute();
    for (const stored of blank) {
      expect(stored).toMatchObject({ status: 'verified', applicant_id_key: null, latitude: null, longitude: null, neighbor: null, reference: expect.any(String) });
      expect((stored as { anonymised_at?: Date | null }).anonymised_at).not.toBeNull();
      expect(Number(stored.charged)).toBeGreaterThan(0);
    }
    const plain = await db.selectFrom('address_verifications').select(['applicant', 'street', 'city', 'landmark']).where('id', '=', addressId).executeTakeFirstOrThrow();
    expect(plain).toMatchObject({ applicant: { firstname: '', lastname: '', idNumber: '', phone: '' }, street: '', city: '', landmark: '' });
    // Nothing personal left in the raw row: no name, number, phone or street.
    const text = (await sql<{ row: string }>`select t::text as row from address_verifications t where id = ${addressId}`.execute(raw())).rows[0]!.row;
    for (const needle of [APPLICANT.lastname, APPLICANT.idNumber, '8061800022', LAGOS, NEIGHBOUR.neighborName]) expect(text).not.toContain(needle);
    // The record is still there for the customer, without the person.
    const shown = await ctx.app.inject({ method: 'GET', url: `/v1/verifications/addresses/${addressId}`, headers: bearer(org.liveSecret) });
    expect(shown.statusCode, shown.body).toBe(200);
    expect(shown.body).not.toContain(APPLICANT.lastname);

    // Idempotent: again at the same time, and later, nothing more to do.
    expect(nothing(await run(after(completedAt, 731 * DAY)))).toBe(true);
    expect(nothing(await run(after(completedAt, 900 * DAY)))).toBe(true);
    // Money stays whole.
    expect(await money()).toEqual(moneyBefore);
    expect(await raw().selectFrom('usage_events').select(['id', 'price', 'outcome', 'type']).where('org_id', '=', org.id).orderBy('id').execute()).toEqual(usageRows);
    expect(lookupAt).toBeInstanceOf(Date);
  }, 120_000);

  it("follows an organization's own periods and its shorter webhook period, leaving other organizations alone", async () => {
    const db = ctx.database.db;
    const short = await ctx.org({ fund: 50_000_000, riskLevel: 'LOW' });
    const other = await ctx.org({ fund: 50_000_000, riskLevel: 'LOW' });
    const set = await portal(ctx.app, operator, { method: 'PUT', url: `/api/console/organizations/${short.id}/retention`, payload: { verificationDays: 10, photoDays: 5, webhookDays: 2, lookupDays: 3 } });
    expect(set.statusCode, set.body).toBe(200);
    const mine = await visitedAddress(ctx.app, db, short.liveSecret, { applicant: { ...APPLICANT, idNumber: '12391800066' } }, NEIGHBOUR, 7);
    const theirs = await visitedAddress(ctx.app, db, other.liveSecret, { applicant: { ...APPLICANT, idNumber: '12391800077' } }, NEIGHBOUR, 9);
    const now = new Date();
    for (const org of [short, other]) {
      await db.insertInto('webhook_deliveries').values({ message_id: `msg_${org.id}`, org_id: org.id, mode: 'live', event_type: 'address.completed', payload: JSON.stringify({ data: { applicant: APPLICANT } }), status: 'delivered', delivered_at: now }).execute();
    }
    const counts = await run(after(now, 11 * DAY));
    expect(counts.verifications.address).toBe(1);
    expect(counts.webhookDeliveries).toBe(1);
    const { rows } = await sql<{ id: number; anonymised: boolean; photos: number }>`
      select id::integer as id, anonymised_at is not null as anonymised, cardinality(photo_ids)::integer as photos from address_verifications where id in (${mine}, ${theirs}) order by id`.execute(raw());
    expect(rows.map((row) => [row.id, row.anonymised, row.photos])).toEqual([[mine, true, 0], [theirs, false, 2]]);
    expect((await raw().selectFrom('webhook_deliveries').select('message_id').where('message_id', 'in', [`msg_${short.id}`, `msg_${other.id}`]).execute()).map((row) => row.message_id)).toEqual([`msg_${other.id}`]);
    expect(nothing(await run(after(now, 11 * DAY)))).toBe(true);
  }, 120_000);

  it('clears the report held for review on a visit that was cancelled, with its photos', async () => {
    const db = ctx.database.db;
    const org = await ctx.org({ fund: 50_000_000, riskLevel: 'LOW' });
    const id = await visitedAddress(ctx.app, db, org.liveSecret, { applicant: { ...APPLICANT, idNumber: '12391800088' } }, NEIGHBOUR, 11);
    // Held as if the review check had flagged it, then the visit closed (cancelled).
    const held = (await raw().selectFrom('address_verifications').select('photo_ids').where('id', '=', id).executeTakeFirstOrThrow()).photo_ids;
    await sql`update address_verifications set photo_ids = '{}' where id = ${id}`.execute(db);
    await db.updateTable('field_tasks').set({ held_report: JSON.stringify({ outcome: 'verified', photoIds: held, neighbor: { name: NEIGHBOUR.neighborName } }), held_at: new Date(), closed_at: new Date(), outcome: 'cancelled' }).where('kind', '=', 'address').where('verification_id', '=', id).execute();
    const counts = await run(new Date());
    expect(counts.heldReports).toBe(1);
    expect(counts.photos).toBe(2);
    expect(await raw().selectFrom('field_tasks').select(['held_report', 'held_at']).where('verification_id', '=', id).where('kind', '=', 'address').executeTakeFirstOrThrow()).toEqual({ held_report: null, held_at: null });
    expect(await raw().selectFrom('uploaded_files').select('id').where('id', 'in', held).execute()).toEqual([]);
    expect((await run(new Date())).heldReports).toBe(0);
  }, 120_000);
});

const LAGOS = '12 Akinola Cole Crescent';

describe('retention settings', () => {
  it('shows the defaults, changes them within bounds (audited), and refuses others: 401, 403, 404, 400', async () => {
    const org = await ctx.org();
    const url = `/api/console/organizations/${org.id}/retention`;
    const shown = await portal(ctx.app, operator, { method: 'GET', url });
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).toMatchObject({ orgId: org.id, lookupDays: 90, verificationDays: 730, photoDays: 365, webhookDays: 30, custom: { lookupDays: false } });
    const put = (payload: object, user: PortalUser | undefined = operator) => portal(ctx.app, user, { method: 'PUT', url, payload });
    expect((await put({ photoDays: 180 })).json()).toMatchObject({ photoDays: 180, lookupDays: 90, custom: { photoDays: true, lookupDays: false } });
    expect((await put({ photoDays: 'default' })).json()).toMatchObject({ photoDays: 365, custom: { photoDays: false } });
    const audits = await ctx.database.db.selectFrom('audit_events').select(['action', 'actor_kind', 'actor_id', 'before', 'after']).where('org_id', '=', org.id).orderBy('id').execute();
    expect(audits).toHaveLength(2);
    expect(audits[0]).toMatchObject({ action: 'organization.retention_changed', actor_kind: 'operator', actor_id: operator.personId, before: { photoDays: 365 }, after: { photoDays: 180 } });
    for (const bad of [{ photoDays: 0 }, { lookupDays: 3651 }, { verificationDays: 1.5 }, { webhookDays: 31 }, {}, { other: 3 }, { photoDays: false }, { photoDays: 'soon' }, { photoDays: null }]) {
      const refused = await put(bad);
      expect(refused.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect((await getRetention(ctx.database.db, org.id, 30)).photoDays).toBe(365);
    expect((await portal(ctx.app, undefined, { method: 'GET', url })).statusCode).toBe(401);
    const customer = await portalOrg(ctx.database.db);
    expect((await portal(ctx.app, customer.owner, { method: 'GET', url })).statusCode).toBe(403);
    expect((await portal(ctx.app, customer.owner, { method: 'PUT', url: `/api/console/organizations/${customer.org.id}/retention`, payload: { photoDays: 3 } })).statusCode).toBe(403);
    expect((await portal(ctx.app, operator, { method: 'GET', url: '/api/console/organizations/00000000-0000-4000-8000-000000000000/retention' })).statusCode).toBe(404);
    expect((await portal(ctx.app, operator, { method: 'PUT', url: '/api/console/organizations/nope/retention', payload: { photoDays: 3 } })).statusCode).toBe(404);
  });
});
