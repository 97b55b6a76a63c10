import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AccountsService, type CreatedOrganization } from '../../src/accounts/service.js';
import { createAgent } from '../../src/agents/service.js';
import { buildApp } from '../../src/app.js';
import { reencodePhoto } from '../../src/files/photos.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { listMail } from '../../src/portal/mail.js';
import { insertPerson } from '../../src/portal/people.js';
import { multipartBody } from '../agents/fixtures.js';
import { bearer, testConfig } from '../helpers/app.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { open, submit } from '../respondents/browser.js';
import { linkOf } from '../respondents/fixtures.js';

/**
 * The check of issue 12, point 1: after an identity lookup against the embedded registry, an
 * address verification with an agent's report and photos, a guarantor verification answered
 * on its page and a portal password reset (issue 18, finding 12: the mailed link), no BVN, NIN,
 * phone number, name, address, photo byte or live link the flows used is anywhere
 * in the raw database (every column of every row, read without the decrypting plugin; on
 * PostgreSQL also `pg_dump`; on PGlite also the data folder's files) or in the file store.
 */

const onPostgres = !!process.env.DATABASE_URL;

// Values that appear nowhere else in the code base, so a hit can only be a leak.
const PERSON_BVN = { bvn: '22291827364', firstname: 'Oluwadamilare', lastname: 'Ogunbanjo', middlename: 'Kehinde', gender: 'Male', phone: '08091827364', birthdate: '12-10-1987' };
const GUARANTOR_NIN = { nin: '12391827364', firstname: 'Ebunoluwa', lastname: 'Fashanu', middlename: '', gender: 'Female', phone: '08071827364', birthdate: '23-05-1979' };
const ADDRESS = {
  street: '41 Kofoworola Crescent',
  landmark: 'Beside Ikorodu Pharmacy',
  lga: 'Eti-Osa',
  state: 'Lagos',
  applicant: { firstname: 'Chukwuemeka', lastname: 'Nwachukwuike', idType: 'NIN', idNumber: '12387654329', phone: '08061827364' },
};
const NEIGHBOUR = { neighborName: 'Ifeyinwa Okafor-Ude', neighborComment: 'Knows the family well', neighborPhone: '08121827364' };
const GUARANTOR = {
  firstname: GUARANTOR_NIN.firstname,
  lastname: GUARANTOR_NIN.lastname,
  phone: '08151827364',
  email: 'ebunoluwa.fashanu@example.com',
  street: '9 Adeniran Ogunsanya Street',
  lga: 'Surulere',
  state: 'Lagos',
  acceptableIdType: ['NIN'],
  applicant: { firstname: 'Tochukwu', lastname: 'Anyanwu-Eze', dob: '14-03-1990', phone: '08031827364', idType: 'BVN', idNumber: '22387654320' },
};

/** Every personal value the flows send or the registry holds, and the forms a phone takes. */
function needles(photo: Buffer, face: string): string[] {
  const phones = [PERSON_BVN.phone, GUARANTOR_NIN.phone, ADDRESS.applicant.phone, NEIGHBOUR.neighborPhone, GUARANTOR.phone, GUARANTOR.applicant.phone];
  return [
    PERSON_BVN.bvn, GUARANTOR_NIN.nin, ADDRESS.applicant.idNumber, GUARANTOR.applicant.idNumber,
    PERSON_BVN.firstname, PERSON_BVN.lastname, PERSON_BVN.middlename, GUARANTOR_NIN.firstname, GUARANTOR_NIN.lastname,
    ADDRESS.applicant.firstname, ADDRESS.applicant.lastname, GUARANTOR.applicant.firstname, GUARANTOR.applicant.lastname, NEIGHBOUR.neighborName,
    ADDRESS.street, ADDRESS.landmark, GUARANTOR.street, GUARANTOR.email, NEIGHBOUR.neighborComment,
    ...phones.flatMap((phone) => [phone, phone.slice(1), `234${phone.slice(1)}`]),
    // The visit's position as the agent sent it.
    '6.4474', '3.4723',
    // The registry's face photo (base64, as stored in the record) and the visit photo's bytes.
    face.slice(100, 160), photo.subarray(200, 260).toString('base64'), photo.subarray(200, 260).toString('hex'),
  ];
}

function leaksIn(haystack: string, list: string[]): string[] {
  const lower = haystack.toLowerCase();
  return list.filter((needle) => lower.includes(needle.toLowerCase()));
}

describe('no personal data in clear at rest', () => {
  let database: Database & { url?: string };
  let testDatabase: TestDatabase | undefined;
  let dataDir: string;
  let app: FastifyInstance;
  let base: string;
  let org: CreatedOrganization;
  /** The visit photo as the agent sends it, and as it is stored (re-encoded): the bytes to look for. */
  let upload: Buffer;
  let photo: Buffer;
  let face: string;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-clear-'));
    if (onPostgres) {
      testDatabase = await openTestDatabase();
      database = testDatabase;
    } else {
      // A data folder on disk (not the tests' in-memory database), so its files can be read.
      database = await openDatabase({ dataDir: path.join(dataDir, 'pglite'), loadDataDir: new Blob([await fs.readFile(inject('pgliteTemplateDump'))]) });
      await migrate(database.db);
    }
    const config = testConfig({ dataDir, logLevel: 'silent' });
    await openKeyring(database, config);
    app = await buildApp({ config, database });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    org = await new AccountsService(database.db).create({ name: 'Clear Check Ltd', enabled: true, riskLevel: 'LOW', payloadType: 'FULL', fund: 10_000_000 });
    upload = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#2a7' } }).jpeg({ quality: 95 }).toBuffer();
    photo = (await reencodePhoto(upload)).bytes;
    face = (await sharp({ create: { width: 64, height: 64, channels: 3, background: '#c85' } }).jpeg({ quality: 95 }).toBuffer()).toString('base64');
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    if (testDatabase) await testDatabase.cleanup();
    else await database?.close().catch(() => {});
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('runs an identity lookup, an address verification with a report and a guarantor verification, then finds none of their personal data stored in clear', async () => {
    const db = database.db;
    const lines = [
      { type: 'bvn', record: PERSON_BVN },
      { type: 'nin', record: { ...GUARANTOR_NIN, photo: face } },
    ].map((line) => JSON.stringify(line));
    expect(await importRegistry(db, Readable.from([lines.join('\n')]))).toMatchObject({ imported: 2, rejected: 0 });
    const api = (method: 'GET' | 'POST', url: string, payload?: object, headers: Record<string, string> = {}) =>
      app.inject({ method, url, headers: { ...bearer(org.liveSecret), ...headers }, ...(payload ? { payload } : {}) });

    // 1. Identity lookups against the embedded registry (one with an Idempotency-Key: its answer is stored).
    const ID = '/v1/verifications/identities';
    const lookup = await api('POST', `${ID}/bvn/${PERSON_BVN.bvn}?type=premium`, { firstname: PERSON_BVN.firstname, lastname: PERSON_BVN.lastname }, { 'idempotency-key': 'clear-check-1' });
    expect(lookup.statusCode, lookup.body).toBe(200);
    expect(lookup.json().data.lastname).toBe(PERSON_BVN.lastname);
    const byPhone = await api('POST', `${ID}/nin_phone/${GUARANTOR_NIN.phone}`, { firstname: GUARANTOR_NIN.firstname, lastname: GUARANTOR_NIN.lastname });
    expect(byPhone.statusCode, byPhone.body).toBe(200);
    expect(byPhone.json().data.nin).toBe(GUARANTOR_NIN.nin);

    // 2. An address verification, visited by an agent who files a report with photos.
    const { credential } = await createAgent(db, { name: 'Check Agent', email: 'check@agents.example', phone: '08030000001', states: ['Lagos'] });
    const created = await api('POST', '/v1/verifications/addresses', ADDRESS);
    expect(created.statusCode, created.body).toBe(201);
    const addressId = created.json().data.id as number;
    const form = multipartBody({ outcome: 'verified', latitude: 6.4474, longitude: 3.4723, ...NEIGHBOUR }, [
      { filename: 'front.jpg', type: 'image/jpeg', bytes: upload },
      { filename: 'gate.jpg', type: 'image/jpeg', bytes: upload },
    ]);
    const filed = await app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${addressId}/report`, headers: { ...bearer(credential), ...form.headers }, payload: form.payload });
    expect(filed.statusCode, filed.body).toBe(200);
    const address = (await api('GET', `/v1/verifications/addresses/${addressId}`)).json().data;
    expect(address.neighbor.name).toBe(NEIGHBOUR.neighborName);
    expect(address.status.status).toBe('Verified');
    const link = new URL(address.photos[0]);
    const served = await app.inject({ method: 'GET', url: link.pathname + link.search });
    expect(served.headers['content-type']).toBe('image/jpeg');
    expect(served.rawPayload.equals(photo)).toBe(true);

    // 3. A guarantor verification, answered on the guarantor's page with their NIN.
    const guarantor = await api('POST', '/v1/verifications/guarantors', GUARANTOR);
    expect(guarantor.statusCode, guarantor.body).toBe(201);
    const guarantorId = guarantor.json().data.id as number;
    const { token } = await linkOf(db, 'guarantor_request', guarantorId);
    const answered = await submit(await open(`${base}/respond/${token}`), { decision: 'accept', idType: 'NIN', idNumber: GUARANTOR_NIN.nin, dob: GUARANTOR_NIN.birthdate });
    expect(answered.status, answered.html).toBe(200);
    const record = (await api('GET', `/v1/verifications/guarantors/${guarantorId}`)).json().data;
    expect(record.status.status).toBe('VERIFIED');
    expect(record.email).toBe(GUARANTOR.email);

    // 4. A portal password reset: the mailed link (its token) is a key to the account while it lives.
    const resetEmail = 'reset.check@example.com';
    await insertPerson(db, { email: resetEmail, name: 'Reset Check', password: 'correct horse battery', verified: true });
    const asked = await app.inject({ method: 'POST', url: '/api/auth/forgot-password', headers: { origin: 'http://127.0.0.1:8080', 'content-type': 'application/json' }, payload: { email: resetEmail } });
    expect(asked.statusCode, asked.body).toBe(200);
    let resetMail: string | undefined;
    for (let until = Date.now() + 10_000; !resetMail && Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 25))) {
      resetMail = (await listMail(db, { to: resetEmail }))[0]?.text;
    }
    const resetToken = /reset-password\?token=([\w-]+)/.exec(resetMail ?? '')?.[1];
    expect(resetToken, resetMail).toBeDefined();

    const list = [...needles(photo, face), resetToken!];

    // Every row of every table, as stored (`row::text` covers every column of every type).
    const { rows: tables } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public' order by tablename`.execute(db);
    const found: Record<string, string[]> = {};
    for (const { name } of tables) {
      const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(name)} t`.execute(db.withoutPlugins());
      const leaks = leaksIn(rows.map((row) => row.row).join('\n'), list);
      if (leaks.length > 0) found[name] = leaks;
    }
    expect(found).toEqual({});
    // The check can fail: the same scan through the decrypting plugin finds them.
    const { rows: decrypted } = await sql<{ applicant: unknown }>`select applicant from address_verifications`.execute(db);
    expect(leaksIn(JSON.stringify(decrypted), list)).toContain(ADDRESS.applicant.lastname);

    // The file store: ciphertext only.
    const stored: Buffer[] = [];
    for (const entry of await fs.readdir(path.join(dataDir, 'files'), { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) stored.push(await fs.readFile(path.join(entry.parentPath, entry.name)));
    }
    expect(stored).toHaveLength(2);
    for (const bytes of stored) {
      expect(bytes.includes(photo.subarray(200, 260))).toBe(false);
      expect(leaksIn(bytes.toString('latin1'), list)).toEqual([]);
    }

    if (onPostgres) {
      // The whole database as a backup would hold it.
      const { stdout } = await promisify(execFile)('pg_dump', ['--data-only', '--no-owner', database.url!], { maxBuffer: 256 * 1024 * 1024 });
      expect(stdout).toContain('COPY public.address_verifications');
      // The scan can fail: what is not personal is there in clear (the organization's name).
      expect(stdout).toContain(org.name);
      expect(leaksIn(stdout, list)).toEqual([]);
    } else {
      // The data folder's files, as a stolen disk would hold them (heap, indexes and WAL).
      await app.close();
      await database.close();
      const files = await fs.readdir(path.join(dataDir, 'pglite'), { recursive: true, withFileTypes: true });
      let bytes = 0;
      let control = false;
      const leaks = new Set<string>();
      for (const entry of files) {
        if (!entry.isFile()) continue;
        const content = await fs.readFile(path.join(entry.parentPath, entry.name));
        bytes += content.length;
        control ||= content.includes(Buffer.from(org.name));
        for (const leak of leaksIn(content.toString('latin1'), list)) leaks.add(`${leak} in ${entry.name}`);
        if (content.includes(photo.subarray(200, 260))) leaks.add(`photo bytes in ${entry.name}`);
      }
      expect(bytes).toBeGreaterThan(1_000_000);
      // The scan can fail: what is not personal is there in clear (the organization's name).
      expect(control).toBe(true);
      expect([...leaks]).toEqual([]);
    }
  }, 120_000);
});
