import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EncryptedFileStore } from '../../src/files/encrypted-store.js';
import { openFileStore } from '../../src/files/open-store.js';
import { protectionOf } from '../../src/platform/crypto/fields.js';
import { applyRetention } from '../../src/privacy/retention.js';
import { eraseSubject, exportSubject, parseIdentifiers, writePhotos } from '../../src/privacy/subjects.js';
import { loopCapture } from '../liveness/genuine.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, testConfig, type TestContext } from '../helpers/app.js';
import { expectStyleA, httpClient, ID_ONLY, SANDBOX, tokenOf, type HttpClient } from './fixtures.js';

const BASE = '/v1/verifications/sessions';
const DAY = 86_400_000;

/** Values found nowhere else in the code base: a hit in the raw database can only be a leak. */
const UNIQUE = { firstname: 'Oluwaseyifunmi', lastname: 'Sessionsubject', note: 'loan-file-Kehindeolu-7731' };

describe('verification sessions: data protection', () => {
  let t: TestContext;
  let http: HttpClient;
  let dataDir: string;
  let store: EncryptedFileStore;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-session-privacy-'));
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, config: { dataDir } });
    store = openFileStore(testConfig({ dataDir }), protectionOf(t.database.db));
    http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  });
  afterAll(async () => {
    await t.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** A test session the sandbox NIN person completes through the end-user API. */
  async function completedSession(secret: string, extra: object = {}) {
    const created = (await http.post(BASE, secret, { ...ID_ONLY, ...extra })).json().data;
    const token = tokenOf(created.url);
    await http.post(`/verify/api/${token}/consent`, undefined, { accepted: true });
    const view = (await http.post(`/verify/api/${token}/id`, undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber })).json();
    expect(view.result?.outcome).toBe('verified');
    return { ...created, token };
  }

  it('stores the applicant, metadata, identity, ID number and consents encrypted; the tokens as hashes', async () => {
    const org = await t.org();
    const session = await completedSession(org.testSecret, {
      applicant: { firstname: UNIQUE.firstname, lastname: UNIQUE.lastname },
      metadata: { note: UNIQUE.note },
      consent: { reference: `consent-${UNIQUE.note}`, obtainedAt: '2024-05-01T09:30:00Z', channel: 'web' },
    });
    const scan = async (db: typeof t.database.db) => {
      const tables = ['verification_sessions', 'session_tokens', 'session_handoffs', 'session_liveness_attempts', 'session_frames', 'webhook_deliveries', 'idempotency_keys'];
      let text = '';
      for (const table of tables) {
        const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(table)} t`.execute(db);
        text += rows.map((row) => row.row).join('\n');
      }
      return text;
    };
    const needles = [UNIQUE.firstname, UNIQUE.lastname, UNIQUE.note, SANDBOX.nin.idNumber, 'Babatunde', '127.0.0.1', session.token, session.clientSecret.slice(4)];
    const raw = await scan(t.database.db.withoutPlugins());
    expect(needles.filter((needle) => raw.includes(needle))).toEqual([]);
    // The check can fail: the same rows read through the decrypting plugin hold them.
    const plain = JSON.stringify(await t.database.db.selectFrom('verification_sessions').selectAll().execute());
    expect(needles.slice(0, 6).filter((needle) => !plain.includes(needle))).toEqual([]);
  });

  it('anonymises an ended session after the verification period, keeping its id, status, checks and dates', async () => {
    const org = await t.org();
    const done = await completedSession(org.testSecret, { applicant: { firstname: UNIQUE.firstname, lastname: UNIQUE.lastname }, metadata: { note: UNIQUE.note } });
    const open = (await http.post(BASE, org.testSecret, { metadata: { note: UNIQUE.note } })).json().data;
    const early = await applyRetention(t.database.db, store, { now: new Date(Date.now() + 729 * DAY), webhookDefaultDays: 30 });
    expect(early.verifications.session).toBe(0);
    const counts = await applyRetention(t.database.db, store, { now: new Date(Date.now() + 731 * DAY), webhookDefaultDays: 30 });
    expect(counts.verifications.session).toBeGreaterThanOrEqual(1);
    const record = (await http.get(`${BASE}/${done.id}`, org.testSecret)).json().data;
    expect(record).toMatchObject({
      id: done.id,
      reference: done.reference,
      status: { state: 'COMPLETED' },
      applicant: {},
      metadata: {},
      identity: null,
      userConsent: null,
      checks: { idLookup: { passed: true } },
    });
    expect(record.completedAt).not.toBeNull();
    // Its link is gone with its tokens; the open session was not touched.
    expectStyleA(await http.get(`/verify/api/${done.token}`), 404, 'NOT_FOUND_ERROR');
    expect((await http.get(`${BASE}/${open.id}`, org.testSecret)).json().data.metadata).toEqual({ note: UNIQUE.note });
    // Running it again changes nothing.
    const again = await applyRetention(t.database.db, store, { now: new Date(Date.now() + 731 * DAY), webhookDefaultDays: 30 });
    expect(again.verifications.session).toBe(0);
  });

  it('finds a person\'s sessions by NIN and phone for export, and erases them (an open one ends, its link dies)', async () => {
    const org = await t.org();
    const other = await t.org();
    const done = await completedSession(org.testSecret, { metadata: { note: 'done' } });
    const prefilled = (await http.post(BASE, org.testSecret, { applicant: { idType: 'NIN', idNumber: SANDBOX.nin.idNumber } })).json().data;
    const elsewhere = await completedSession(other.testSecret);
    const unrelated = (await http.post(BASE, org.testSecret, { applicant: { idType: 'BVN', idNumber: SANDBOX.bvn.idNumber } })).json().data;

    const byNin = parseIdentifiers({ nin: SANDBOX.nin.idNumber });
    const exported = await exportSubject(t.database.db, byNin, { orgId: org.id }, 'test');
    expect(exported.data.sessions.map((hit) => hit.publicId).sort()).toEqual([done.id, prefilled.id].sort());
    expect(exported.found.verification_sessions).toBe(2);
    expect(exported.data.sessions.find((hit) => hit.publicId === done.id)!.record).toMatchObject({ identity: { nin: SANDBOX.nin.idNumber }, metadata: { note: 'done' } });
    expect(exported.data.webhookDeliveries.some((d) => d.eventType === 'session.completed')).toBe(true);
    // The phone on the record found names the person too; across organizations without a scope.
    const byPhone = await exportSubject(t.database.db, parseIdentifiers({ phone: '08051234567' }), {}, 'test');
    expect(byPhone.data.sessions.map((hit) => hit.publicId)).toEqual(expect.arrayContaining([done.id, elsewhere.id]));
    expect(byPhone.data.sessions.map((hit) => hit.publicId)).not.toContain(unrelated.id);

    const erased = await eraseSubject(t.database.db, store, byNin, { orgId: org.id }, 'test');
    expect(erased.erased.verification_sessions).toBe(2);
    expect(erased.erased.webhook_deliveries).toBeGreaterThanOrEqual(1);
    const after = (await http.get(`${BASE}/${prefilled.id}`, org.testSecret)).json().data;
    expect(after).toMatchObject({ status: { status: 'CANCELLED', subStatus: 'SUBJECT_ERASED', state: 'CANCELLED' }, applicant: {} });
    expectStyleA(await http.get(`/verify/api/${tokenOf(prefilled.url)}`), 404, 'NOT_FOUND_ERROR');
    // The other organization's session was outside the request's scope; a second erasure finds nothing.
    expect((await http.get(`${BASE}/${elsewhere.id}`, other.testSecret)).json().data.identity).toMatchObject({ nin: SANDBOX.nin.idNumber });
    expect((await exportSubject(t.database.db, byNin, { orgId: org.id }, 'test')).found.verification_sessions).toBe(0);
  });

  it('keeps frames encrypted, finds them for export, deletes them after 30 days (hashes and prints kept until then) and on erasure', async () => {
    const org = await t.org();
    const created = (await http.post(BASE, org.testSecret, { checks: { liveness: true, faceMatch: false }, applicant: { idType: 'NIN', idNumber: SANDBOX.nin.idNumber } })).json().data;
    const token = tokenOf(created.url);
    expect((await http.post(`/verify/api/${token}/consent`, undefined, { accepted: true })).json().step).toBe('liveness');
    const attempt = (await http.post(`/verify/api/${token}/liveness/attempts`, undefined, {})).json();
    const frames = loopCapture('genuine.mjpeg', 1200);
    const form = new FormData();
    form.append('timestamps', JSON.stringify(frames.map((frame) => frame.atMs)));
    for (const frame of frames) form.append('frame', new Blob([new Uint8Array(frame.jpeg)], { type: 'image/jpeg' }), 'f.jpg');
    const view = (await http.call('POST', `/verify/api/${token}/liveness/attempts/${attempt.attemptId}/frames`, { form })).json();
    expect(view.result).toEqual({ outcome: 'verified', reasons: [] });
    const rows = await t.database.db.selectFrom('session_frames').select(['file_id', 'sha256']).where('attempt_id', '=', attempt.attemptId).orderBy('position').execute();
    expect(rows).toHaveLength(frames.length);
    // At rest: ciphertext in the store, the plain bytes back through it.
    const onDisk = await fs.readFile(path.join(dataDir, 'files', rows[0]!.file_id!.slice(0, 2), rows[0]!.file_id!));
    expect(onDisk.includes(frames[0]!.jpeg.subarray(200, 260))).toBe(false);
    expect((await store.get(rows[0]!.file_id!))!.equals(frames[0]!.jpeg)).toBe(true);
    const prints = () => t.database.db.selectFrom('liveness_frame_prints').select('id').where('session_id', '=', created.id).execute();
    expect((await prints()).length).toBeGreaterThan(0);
    // The ID the face was compared with is kept with the attempt, encrypted, until the session is anonymised.
    const matchedId = async (db: typeof t.database.db) => (await db.selectFrom('session_liveness_attempts').select('id_number').where('id', '=', attempt.attemptId).executeTakeFirstOrThrow()).id_number;
    expect(await matchedId(t.database.db)).toBe(SANDBOX.nin.idNumber);
    expect(await matchedId(t.database.db.withoutPlugins())).not.toContain(SANDBOX.nin.idNumber);

    // Export: the frames are the person's photos, written decrypted.
    const exported = await exportSubject(t.database.db, parseIdentifiers({ nin: SANDBOX.nin.idNumber }), { orgId: org.id }, 'test');
    const framesFound = exported.data.photos.filter((photo) => photo.verification === `session/${created.id}`);
    expect(framesFound.map((photo) => photo.id).sort()).toEqual(rows.map((row) => row.file_id).sort());
    const written = await writePhotos(store, framesFound.slice(0, 1), path.join(dataDir, 'export'));
    expect((await fs.readFile(Object.values(written)[0]!)).equals(frames[0]!.jpeg)).toBe(true);

    // Retention: nothing at 29 days, the frames and their prints at 31; the hashes stay with the attempt.
    await applyRetention(t.database.db, store, { now: new Date(Date.now() + 29 * DAY), webhookDefaultDays: 30 });
    expect(await store.get(rows[0]!.file_id!)).toBeDefined();
    const purged = await applyRetention(t.database.db, store, { now: new Date(Date.now() + 31 * DAY), webhookDefaultDays: 30 });
    expect(purged.photos).toBeGreaterThanOrEqual(frames.length);
    expect(await store.get(rows[0]!.file_id!)).toBeUndefined();
    const after = await t.database.db.selectFrom('session_frames').select(['file_id', 'sha256']).where('attempt_id', '=', attempt.attemptId).orderBy('position').execute();
    expect(after).toEqual(rows.map((row) => ({ file_id: null, sha256: row.sha256 })));
    expect(await prints()).toEqual([]);
    // The session itself is kept until its own period.
    expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data.identity).toMatchObject({ nin: SANDBOX.nin.idNumber });

    // Erasure: the hashes go with the session, and the attempt's ID.
    await eraseSubject(t.database.db, store, parseIdentifiers({ nin: SANDBOX.nin.idNumber }), { orgId: org.id }, 'test');
    expect(await t.database.db.selectFrom('session_frames').select('sha256').where('attempt_id', '=', attempt.attemptId).execute()).toEqual([]);
    expect(await matchedId(t.database.db)).toBeNull();
  });

  it('erasure deletes the frames of a session erased before its frames expired', async () => {
    const org = await t.org();
    const created = (await http.post(BASE, org.testSecret, { checks: { liveness: true, faceMatch: false }, applicant: { idType: 'BVN', idNumber: SANDBOX.bvn.idNumber } })).json().data;
    const token = tokenOf(created.url);
    await http.post(`/verify/api/${token}/consent`, undefined, { accepted: true });
    const attempt = (await http.post(`/verify/api/${token}/liveness/attempts`, undefined, {})).json();
    const frames = loopCapture('still-photo.mjpeg', 0);
    const form = new FormData();
    form.append('timestamps', JSON.stringify(frames.map((frame) => frame.atMs)));
    for (const frame of frames) form.append('frame', new Blob([new Uint8Array(frame.jpeg)], { type: 'image/jpeg' }), 'f.jpg');
    expect((await http.call('POST', `/verify/api/${token}/liveness/attempts/${attempt.attemptId}/frames`, { form })).json().step).toBe('liveness');
    const ids = (await t.database.db.selectFrom('session_frames').select('file_id').where('attempt_id', '=', attempt.attemptId).execute()).map((row) => row.file_id!);
    expect(ids.length).toBe(frames.length);
    const erased = await eraseSubject(t.database.db, store, parseIdentifiers({ bvn: SANDBOX.bvn.idNumber }), { orgId: org.id }, 'test');
    expect(erased.erased.uploaded_files).toBe(ids.length);
    for (const id of ids) expect(await store.get(id)).toBeUndefined();
    expect(await t.database.db.selectFrom('liveness_frame_prints').select('id').where('session_id', '=', created.id).execute()).toEqual([]);
    expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data.status.subStatus).toBe('SUBJECT_ERASED');
  });
});
