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
import { eraseSubject, exportSubject, parseIdentifiers } from '../../src/privacy/subjects.js';
import { bearer, buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { cliJson, expectFailure, runCli, throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';
import { storedFiles, visitedAddress } from './fixtures.js';

// The person asking (P) and someone else (Q) who appears beside them; values found nowhere else.
const P = { nin: '12391870001', firstname: 'Olamide', lastname: 'Subjectperson', middlename: '', gender: 'Female', phone: '08091870001', birthdate: '05-06-1988' };
const P_EMAIL = 'olamide.subjectperson@example.com';
const Q = { nin: '12391870002', firstname: 'Tunde', lastname: 'Otherperson', phone: '08091870002' };

let ctx: TestContext;
let dataDir: string;
let store: EncryptedFileStore;
let orgA: CreatedOrganization;
let orgB: CreatedOrganization;
const ids = { pAddress: 0, qAddress: 0, bAddress: 0, bGuarantor: 0 };

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-subject-'));
  ctx = await buildTestContext({ config: { dataDir } });
  store = openFileStore(testConfig({ dataDir }), protectionOf(ctx.database.db));
  const db = ctx.database.db;
  await importRegistry(db, Readable.from([[{ type: 'nin', record: P }, { type: 'nin', record: { ...Q, middlename: '', gender: 'Male', birthdate: '01-01-1980' } }].map((line) => JSON.stringify(line)).join('\n')]));
  orgA = await ctx.org({ fund: 50_000_000, riskLevel: 'LOW' });
  orgB = await ctx.org({ fund: 50_000_000, riskLevel: 'LOW' });
  // A: P is the applicant of a visited address (Q the neighbour); Q's own verification beside it.
  ids.pAddress = await visitedAddress(ctx.app, db, orgA.liveSecret, { applicant: { firstname: P.firstname, lastname: P.lastname, idType: 'NIN', idNumber: P.nin, phone: P.phone } }, { neighborName: `${Q.firstname} ${Q.lastname}`, neighborPhone: Q.phone, neighborComment: 'Knows her' }, 21);
  ids.qAddress = await visitedAddress(ctx.app, db, orgA.liveSecret, { applicant: { firstname: Q.firstname, lastname: Q.lastname, idType: 'NIN', idNumber: Q.nin, phone: Q.phone } }, { neighborName: 'Someone Else', neighborPhone: '08121870009', neighborComment: 'Yes' }, 23);
  // B: P is the neighbour on Q's address, and Q's guarantor (with a message to P).
  ids.bAddress = await visitedAddress(ctx.app, db, orgB.liveSecret, { applicant: { firstname: Q.firstname, lastname: Q.lastname, idType: 'NIN', idNumber: Q.nin, phone: Q.phone } }, { neighborName: `${P.firstname} ${P.lastname}`, neighborPhone: P.phone, neighborComment: 'Next door' }, 25);
  const guarantor = await ctx.app.inject({
    method: 'POST',
    url: '/v1/verifications/guarantors',
    headers: bearer(orgB.liveSecret),
    payload: { firstname: P.firstname, lastname: P.lastname, phone: P.phone, email: P_EMAIL, street: '3 Subject Close', lga: 'Ikeja', state: 'Lagos', acceptableIdType: ['NIN'], applicant: { firstname: Q.firstname, lastname: Q.lastname, dob: '01-01-1980', phone: Q.phone, idType: 'NIN', idNumber: Q.nin } },
  });
  expect(guarantor.statusCode, guarantor.body).toBe(201);
  ids.bGuarantor = guarantor.json().data.id;
  // A: a lookup of P by phone whose answer is stored under an Idempotency-Key.
  const lookup = await ctx.app.inject({ method: 'POST', url: `/v1/verifications/identities/nin_phone/${P.phone}`, headers: { ...bearer(orgA.liveSecret), 'idempotency-key': 'subject-1' }, payload: { firstname: P.firstname, lastname: P.lastname } });
  expect(lookup.statusCode, lookup.body).toBe(200);
  // The upstream cache holds P's record (and Q's).
  for (const [key, record] of [['subject-cache-p', P], ['subject-cache-q', Q]] as const) {
    await db.insertInto('upstream_cache').values({ type: 'nin', key_hash: key, record: JSON.stringify(record), source: 'dojah', expires_at: new Date(Date.now() + 86_400_000) }).execute();
  }
}, 120_000);
afterAll(async () => {
  await ctx?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

const raw = () => ctx.database.db.withoutPlugins();
const P_NEEDLES = [P.nin, P.lastname, '8091870001', P_EMAIL];

/** Every row of every table, as stored, holding any of the needles. */
async function rawHits(needles: string[]): Promise<Record<string, string[]>> {
  const { rows: tables } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public' order by tablename`.execute(raw());
  const found: Record<string, string[]> = {};
  for (const { name } of tables) {
    const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(name)} t`.execute(raw());
    const text = rows.map((row) => row.row).join('\n');
    const hits = needles.filter((needle) => text.includes(needle));
    if (hits.length > 0) found[name] = hits;
  }
  return found;
}

/** The same, read through the decrypting plugin (what an export must cover). */
async function decryptedHits(needles: string[]): Promise<string[]> {
  const tables = ['address_verifications', 'guarantor_verifications', 'outbox_messages', 'idempotency_keys', 'upstream_cache', 'registry_records', 'webhook_deliveries'];
  const found: string[] = [];
  for (const table of tables) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(ctx.database.db);
    if (needles.some((needle) => JSON.stringify(rows).includes(needle))) found.push(table);
  }
  return found;
}

describe('data-subject requests', () => {
  it('exports everything about the person across organizations and tables, and only theirs; --org scopes it', async () => {
    expect(await decryptedHits(P_NEEDLES)).toEqual(expect.arrayContaining(['address_verifications', 'guarantor_verifications', 'outbox_messages', 'idempotency_keys', 'upstream_cache', 'registry_records']));
    const exported = await exportSubject(ctx.database.db, parseIdentifiers({ phone: P.phone }), {}, 'cli:test');
    expect(exported.found).toMatchObject({ registry_records: 1, upstream_cache: 1, address_verifications: 2, guarantor_verifications: 1, uploaded_files: 2, idempotency_keys: 1, outbox_messages: 1 });
    const byId = Object.fromEntries(exported.data.verifications.map((hit) => [`${hit.kind}/${hit.id}`, hit.roles]));
    expect(byId).toEqual({ [`address/${ids.pAddress}`]: ['applicant'], [`address/${ids.bAddress}`]: ['neighbour'], [`guarantor/${ids.bGuarantor}`]: ['guarantor'] });
    expect(exported.data.photos.every((photo) => photo.verification === `address/${ids.pAddress}` && photo.size > 0)).toBe(true);
    expect(exported.data.usage.some((u) => u.price > 0 && u.ledgerEntry !== null)).toBe(true);
    const text = JSON.stringify(exported);
    expect(text).toContain(P.lastname);
    expect(text).toContain(P_EMAIL);
    // Not Q's own verification, not Q's cached record.
    expect(text).not.toContain(`"id":${ids.qAddress},`);
    expect(exported.data.upstreamCache.map((row) => row.keyHash)).toEqual(['subject-cache-p']);
    // By NIN: the registry and the verification where P is the applicant.
    const byNin = await exportSubject(ctx.database.db, parseIdentifiers({ nin: P.nin }), {}, 'cli:test');
    expect(byNin.found).toMatchObject({ registry_records: 1, address_verifications: 1, guarantor_verifications: 0 });
    // One organization: B only, and not the operator's registry or cache.
    const scoped = await exportSubject(ctx.database.db, parseIdentifiers({ phone: P.phone, email: P_EMAIL }), { orgId: orgB.id }, 'cli:test');
    expect(scoped.found).toMatchObject({ registry_records: 0, upstream_cache: 0, address_verifications: 1, guarantor_verifications: 1, idempotency_keys: 0, uploaded_files: 0 });
    expect(scoped.data.verifications.every((hit) => hit.orgId === orgB.id)).toBe(true);
  }, 60_000);

  it('erases it everywhere, files included, leaves others and money alone, records the request without the identifier; a second erasure finds nothing', async () => {
    const db = ctx.database.db;
    const money = await raw().selectFrom('ledger_entries').select(['id', 'amount']).where('org_id', 'in', [orgA.id, orgB.id]).orderBy('id').execute();
    const photos = (await exportSubject(db, parseIdentifiers({ phone: P.phone }), {}, 'cli:test')).data.photos.map((photo) => photo.id);
    expect(photos).toHaveLength(2);
    const filesBefore = await storedFiles(dataDir);
    for (const id of photos) expect(filesBefore).toContain(id);

    const erased = await eraseSubject(db, store, parseIdentifiers({ phone: P.phone, nin: P.nin, email: P_EMAIL }), {}, 'cli:test');
    expect(erased.erased).toMatchObject({ registry_records: 1, upstream_cache: 1, address_verifications: 2, guarantor_verifications: 1, uploaded_files: 2, idempotency_keys: 1 });
    // Nothing of P left anywhere, as stored or decrypted; the files are gone from the store.
    expect(await rawHits(P_NEEDLES)).toEqual({});
    expect(await decryptedHits(P_NEEDLES)).toEqual([]);
    const filesAfter = await storedFiles(dataDir);
    for (const id of photos) expect(filesAfter).not.toContain(id);
    expect(filesAfter.length).toBe(filesBefore.length - 2);
    // Q is still there: their own verification, their registry and cached records, the neighbour's Q-side data in B.
    const q = await db.selectFrom('address_verifications').select(['applicant']).where('id', 'in', [ids.qAddress, ids.bAddress]).execute();
    expect(q.map((row) => row.applicant.lastname)).toEqual([Q.lastname, Q.lastname]);
    expect((await exportSubject(db, parseIdentifiers({ nin: Q.nin }), {}, 'cli:test')).found).toMatchObject({ registry_records: 1, address_verifications: 2 });
    // The rows stay for the customers, without P; the guarantor's open verification ended.
    const guarantor = await raw().selectFrom('guarantor_verifications').select(['state', 'reason']).where('id', '=', ids.bGuarantor).executeTakeFirstOrThrow();
    expect(guarantor).toEqual({ state: 'cancelled', reason: 'SUBJECT_ERASED' });
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/verifications/addresses/${ids.pAddress}`, headers: bearer(orgA.liveSecret) })).statusCode).toBe(200);
    const shown = await ctx.app.inject({ method: 'GET', url: `/v1/verifications/guarantors/${ids.bGuarantor}`, headers: bearer(orgB.liveSecret) });
    expect(shown.statusCode, ctx.logs.filter((line) => line.includes('"level":50')).join('\n').slice(0, 2000)).toBe(200);
    expect(await raw().selectFrom('ledger_entries').select(['id', 'amount']).where('org_id', 'in', [orgA.id, orgB.id]).orderBy('id').execute()).toEqual(money);

    const again = await eraseSubject(db, store, parseIdentifiers({ phone: P.phone, nin: P.nin, email: P_EMAIL }), {}, 'cli:test');
    expect(Object.values(again.found).every((n) => n === 0), JSON.stringify(again.found)).toBe(true);

    // The request log: what was found and erased, by whom, with blind indexes only.
    const log = await raw().selectFrom('subject_requests').selectAll().where('id', '=', erased.request.id).executeTakeFirstOrThrow();
    expect(log).toMatchObject({ kind: 'erase', actor: 'cli:test', org_id: null, found: expect.objectContaining({ registry_records: 1 }), erased: expect.objectContaining({ uploaded_files: 2 }) });
    expect(log.identifiers.map((id) => id.kind)).toEqual(['bvn', 'nin', 'phone', 'email'].filter((kind) => kind !== 'bvn'));
    expect(log.identifiers.every((id) => /^[0-9a-f]{64}$/.test(id.index))).toBe(true);
    const { rows } = await sql<{ row: string }>`select t::text as row from subject_requests t`.execute(raw());
    expect(rows.length).toBeGreaterThanOrEqual(6);
    for (const needle of [...P_NEEDLES, '2348091870001', Q.nin]) expect(rows.map((row) => row.row).join('\n')).not.toContain(needle);
  }, 60_000);
});

describe('vouch subject', () => {
  let throwaway: ThrowawayEnv;
  beforeAll(async () => {
    throwaway = await throwawayEnv();
  }, 60_000);
  afterAll(() => throwaway?.cleanup());

  it('finds a neighbour named only in a report held for review, and blanks them there', async () => {
    const db = ctx.database.db;
    const R = { name: 'Rukayat Heldneighbour', phone: '08121870077' };
    // Reported from Kano for a Lagos address: held for review, the neighbour only in the held report.
    const id = await visitedAddress(ctx.app, db, orgA.liveSecret, { reference: 'held-neighbour', applicant: { firstname: 'Held', lastname: 'Applicant', idType: 'NIN', idNumber: '12391870078', phone: '08091870078' } }, { neighborName: R.name, neighborPhone: R.phone, neighborComment: 'Lives opposite', latitude: '12.0', longitude: '8.52' }, 41);
    const held = () => db.selectFrom('field_tasks').select('held_report').where('kind', '=', 'address').where('verification_id', '=', id).executeTakeFirstOrThrow();
    expect((await held()).held_report?.neighbor).toMatchObject({ name: R.name, phone: '+2348121870077' });

    const exported = await exportSubject(db, parseIdentifiers({ phone: R.phone }), { orgId: orgA.id }, 'cli:test');
    expect(exported.data.verifications).toEqual([]);
    expect(exported.data.heldNeighbours).toEqual([{ kind: 'address', verificationId: id }]);
    expect(exported.data.heldReports).toEqual([expect.objectContaining({ verification: `address/${id}` })]);

    const erased = await eraseSubject(db, store, parseIdentifiers({ phone: R.phone }), { orgId: orgA.id }, 'cli:test');
    expect(erased.erased).toMatchObject({ held_reports: 1 });
    const after = (await held()).held_report!;
    expect(after.neighbor).toEqual({ name: '', comment: '', phone: '' });
    // The rest of the report waits for the operator as before.
    expect(after.photoIds).toHaveLength(2);
    expect(await rawHits([R.name, '8121870077'])).toEqual({});
    expect((await exportSubject(db, parseIdentifiers({ phone: R.phone }), { orgId: orgA.id }, 'cli:test')).data.heldReports).toEqual([]);
  });

  it('exports and erases a registry record by phone, records both requests, and refuses bad input with one line', async () => {
    const { env } = throwaway;
    const file = path.join(env.VOUCH_DATA_DIR!, 'registry.jsonl');
    await fs.writeFile(file, `${JSON.stringify({ type: 'nin', record: P })}\n`);
    expect((await runCli(['registry', 'import', file, '--json', '--no-progress'], env)).code).toBe(0);
    const exported = await cliJson<{ found: Record<string, number>; data: { registry: { record: { lastname: string } }[] } }>(['subject', 'export', '--phone', P.phone, '--json'], env);
    expect(exported.found.registry_records).toBe(1);
    expect(exported.data.registry[0]!.record.lastname).toBe(P.lastname);
    expectFailure(await runCli(['subject', 'erase', '--phone', P.phone], env), /add --yes/);
    const erased = await cliJson<{ erased: Record<string, number>; request: { actor: string } }>(['subject', 'erase', '--phone', P.phone, '--yes', '--json'], env);
    expect(erased.erased.registry_records).toBe(1);
    expect(erased.request.actor).toMatch(/^cli:/);
    expect((await cliJson<{ found: Record<string, number> }>(['subject', 'export', '--nin', P.nin, '--json'], env)).found.registry_records).toBe(0);

    expectFailure(await runCli(['subject', 'export', '--json'], env), /at least one of --bvn, --nin, --phone, --email/);
    expectFailure(await runCli(['subject', 'export', '--bvn', '123', '--json'], env), /--bvn must be 11 digits/);
    expectFailure(await runCli(['subject', 'export', '--phone', 'call me', '--json'], env), /--phone must be a valid phone number/);
    expectFailure(await runCli(['subject', 'erase', '--email', 'nope', '--yes'], env), /--email must be an email address/);
    expectFailure(await runCli(['subject', 'export', '--nin', P.nin, '--org', 'acme'], env), /--org must be an organization id/);
    expectFailure(await runCli(['subject', 'export', '--nin', P.nin, '--org', '00000000-0000-4000-8000-000000000000'], env), /no organization with id/);
    expectFailure(await runCli(['org', 'retention', '00000000-0000-4000-8000-000000000000', '--photos', 'soon'], env), /--photos must be a whole number of days/);
    expectFailure(await runCli(['org', 'retention', '00000000-0000-4000-8000-000000000000'], env), /no organization with id/);
  }, 120_000);

  it('shows and changes an organization\'s retention from the command line, audited, within bounds', async () => {
    const { env } = throwaway;
    const org = await cliJson<{ id: string }>(['org', 'create', '--name', 'Retention Ltd', '--json'], env);
    expect(await cliJson(['org', 'retention', org.id, '--json'], env)).toMatchObject({ lookupDays: 90, verificationDays: 730, photoDays: 365, webhookDays: 30 });
    expect(await cliJson(['org', 'retention', org.id, '--photos', '30', '--lookups', '7', '--json'], env)).toMatchObject({ photoDays: 30, lookupDays: 7, custom: { photoDays: true, verificationDays: false } });
    expect(await cliJson(['org', 'retention', org.id, '--photos', 'default', '--json'], env)).toMatchObject({ photoDays: 365, lookupDays: 7 });
    expectFailure(await runCli(['org', 'retention', org.id, '--verifications', '0'], env), /verificationDays must be a whole number of days from 1 to 3650/);
    expectFailure(await runCli(['org', 'retention', org.id, '--webhooks', '31'], env), /webhookDays must be a whole number of days from 1 to 30/);
    const human = await runCli(['org', 'retention', org.id], env);
    expect(human.stdout).toMatch(/lookups\s+7 days\s/);
    expect(human.stdout).toMatch(/photos\s+365 days \(default\)/);
  }, 120_000);
});
