import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findVerifiedAddress } from '../../src/addresses/marketplace.js';
import { createAgent } from '../../src/agents/service.js';
import { openFileStore } from '../../src/files/open-store.js';
import { reencodePhoto } from '../../src/files/photos.js';

import { EmbeddedRegistry } from '../../src/identities/registry/embedded.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { addSource } from '../../src/identities/upstreams/store.js';
import { rotateKeys } from '../../src/platform/crypto/cli.js';
import { keyringOf, NoKeyringError, UnencryptableWriteError } from '../../src/platform/crypto/fields.js';
import { DecryptionThread } from '../../src/platform/crypto/decryption-thread.js';
import { BULK_DECRYPTION, DataKeyError, decryptionThreadUse, kekOf, Keyring } from '../../src/platform/crypto/keyring.js';
import { LOOP_LOAD_DEFAULTS, LoopLoad } from '../../src/platform/loop-load.js';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { LEGACY_SEALED_SETTING, protectedColumnsDigest, sealLegacy, sealStoredFiles, sealStoredValues, tablesWithoutPrimaryKeys } from '../../src/platform/crypto/seal.js';
import { decryptSecret } from '../../src/platform/encryption.js';
import { ADDRESS_BODY, client, multipartBody } from '../agents/fixtures.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, testConfig, type TestContext } from '../helpers/app.js';
import { TEST_ENCRYPTION_KEY } from '../helpers/database.js';

const BVN = { bvn: '22298765431', firstname: 'Oluwaseun', lastname: 'Bankole', middlename: '', gender: 'Male', phone: '08099887766', birthdate: '03-04-1988' };
const raw = (t: TestContext) => t.database.db.withoutPlugins();

describe('encryption at rest', () => {
  let t: TestContext;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-keys-'));
    t = await buildTestContext({ config: { dataDir }, webhookUrl: NOWHERE_WEBHOOK_URL });
  });
  afterAll(async () => {
    await t?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  describe('the keyring', () => {
    it('encrypts to self-describing values that name their data key, and refuses altered ones', () => {
      const keyring = keyringOf(t.database.db);
      const value = keyring.encrypt('Oluwaseun Bankole');
      expect(value).toMatch(new RegExp(`^vx1:${keyring.activeKeyId()}:[A-Za-z0-9_-]+$`));
      expect(keyring.encrypt('Oluwaseun Bankole')).not.toBe(value);
      expect(keyring.decrypt(value)).toBe('Oluwaseun Bankole');
      const flipped = value.slice(0, -2) + (value.at(-2) === 'A' ? 'B' : 'A') + value.at(-1);
      expect(() => keyring.decrypt(flipped)).toThrow(/altered/);
      expect(() => keyring.decrypt(value.replace(/^vx1:[0-9a-f]{8}/, 'vx1:00000000'))).toThrow(DataKeyError);
    });

    it('gives every value an IV of its own, across the refills of the IV pool', () => {
      const keyring = keyringOf(t.database.db);
      const values = Array.from({ length: 1_500 }, (_, i) => keyring.encrypt(`0803${String(i).padStart(7, '0')}`));
      const ivs = values.map((value) => Buffer.from(value.split(':')[2]!, 'base64url').subarray(0, 12).toString('hex'));
      expect(new Set(ivs).size).toBe(values.length);
      expect(ivs.every((iv) => iv !== '0'.repeat(24))).toBe(true);
      values.forEach((value, i) => expect(keyring.decrypt(value)).toBe(`0803${String(i).padStart(7, '0')}`));
    });

    it('makes blind indexes that are stable, keyed and separate per domain', async () => {
      const keyring = keyringOf(t.database.db);
      const index = keyring.blindIndex('bvn', BVN.bvn);
      expect(index).toMatch(/^[0-9a-f]{64}$/);
      expect(keyring.blindIndex('bvn', BVN.bvn)).toBe(index);
      expect(keyring.blindIndex('nin', BVN.bvn)).not.toBe(index);
      // Not a plain hash anyone could compute from the number.
      expect(index).not.toBe(createHash('sha256').update(BVN.bvn).digest('hex'));
      // Another process with the same key set (the same database and KEK) computes the same index.
      const again = await Keyring.open(t.database.db, { kek: kekOf(TEST_ENCRYPTION_KEY) });
      expect(again.blindIndex('bvn', BVN.bvn)).toBe(index);
    });

    it('refuses to open under a key-encryption key that did not wrap the data keys, naming the fingerprints', async () => {
      const other = kekOf(Buffer.alloc(32, 1));
      await expect(Keyring.open(t.database.db, { kek: other })).rejects.toThrow(
        new RegExp(`wrapped by the key-encryption key ${kekOf(TEST_ENCRYPTION_KEY).id}, which is neither VOUCH_ENCRYPTION_KEY \\(${other.id}\\)`),
      );
    });

    it('opens a page of values at once with the results and errors of one at a time, also once closed', async () => {
      const keyring = await Keyring.open(t.database.db, { kek: kekOf(TEST_ENCRYPTION_KEY), decryptionThread: true });
      try {
        const plain: unknown[] = Array.from({ length: BULK_DECRYPTION * 4 }, (_, i) => (i % 3 === 0 ? 6.4474 + i : { firstname: `Adaeze ${i}`, note: 'Ọ̀dọ́ ₦,\n"]' }));
        const values = plain.map((value) => keyring.encrypt(JSON.stringify(value)));
        // JSON text as a caller may have written it (spaces, line breaks) reads back as the same value.
        plain.push({ pretty: true });
        values.push(keyring.encrypt('{\n  "pretty": true\n}'));
        const thread = vi.spyOn(DecryptionThread.prototype, 'open');
        try {
          expect(await keyring.decryptJsonMany(values)).toEqual(plain);
          // The thread opened the page (it did not fail over to this one), and only the page.
          expect(thread).toHaveBeenCalledTimes(1);
          expect(await thread.mock.results[0]!.value).toMatchObject({ failed: [] });
          expect(await keyring.decryptJsonMany(values.slice(0, 2))).toEqual(plain.slice(0, 2));
          expect(thread).toHaveBeenCalledTimes(1);
        } finally {
          thread.mockRestore();
        }
        // One altered value, one under a key this process does not hold, or one whose text is not
        // JSON fails the whole read, as one at a time does.
        const altered = [...values];
        altered[7] = altered[7]!.slice(0, -2) + (altered[7]!.at(-2) === 'A' ? 'B' : 'A') + altered[7]!.at(-1);
        await expect(keyring.decryptJsonMany(altered)).rejects.toThrow(/data key [0-9a-f]{8} fails authentication: it was altered/);
        const unknown = [...values];
        unknown[3] = unknown[3]!.replace(/^vx1:[0-9a-f]{8}/, 'vx1:00000000');
        await expect(keyring.decryptJsonMany(unknown)).rejects.toThrow(/data key 00000000 is not known to this process yet/);
        // Not JSON, or two values in one text: never taken as two elements of the page.
        for (const text of ['Lekki', '1,2', '"a"],["b"']) {
          const bad = [...values];
          bad[5] = keyring.encrypt(text);
          await expect(keyring.decryptJsonMany(bad)).rejects.toThrow(SyntaxError);
        }
        keyring.close();
        expect(await keyring.decryptJsonMany(values)).toEqual(plain);
      } finally {
        keyring.close();
      }
    });

    it('opens a page in line, never on the thread, where the machine has no core to spare for it', async () => {
      expect([1, 2, 3, 4, 16].map((cores) => decryptionThreadUse(cores))).toEqual([false, 'when-busy', true, true, true]);
      const keyring = await Keyring.open(t.database.db, { kek: kekOf(TEST_ENCRYPTION_KEY), decryptionThread: false });
      const thread = vi.spyOn(DecryptionThread.prototype, 'open');
      try {
        const plain = Array.from({ length: BULK_DECRYPTION * 4 }, (_, i) => ({ street: `${i} Admiralty Way` }));
        const values = plain.map((value) => keyring.encrypt(JSON.stringify(value)));
        expect(await keyring.decryptJsonMany(values)).toEqual(plain);
        const altered = [...values];
        altered[7] = altered[7]!.slice(0, -2) + (altered[7]!.at(-2) === 'A' ? 'B' : 'A') + altered[7]!.at(-1);
        await expect(keyring.decryptJsonMany(altered)).rejects.toThrow(/data key [0-9a-f]{8} fails authentication: it was altered/);
        expect(thread).not.toHaveBeenCalled();
      } finally {
        thread.mockRestore();
        keyring.close();
      }
    });

    it('on two cores, sends a page to the thread only while the event loop is busy', async () => {
      // The loop's readings scripted: one per call below (src/platform/loop-load.ts reads the real one).
      let now = 0;
      const shares: number[] = [];
      const loopLoad = new LoopLoad(LOOP_LOAD_DEFAULTS, () => shares.shift()!, () => now);
      const keyring = await Keyring.open(t.database.db, { kek: kekOf(TEST_ENCRYPTION_KEY), decryptionThread: 'when-busy', loopLoad });
      const thread = vi.spyOn(DecryptionThread.prototype, 'open');
      const opened = async (share: number, values: string[]) => {
        now += LOOP_LOAD_DEFAULTS.windowMs;
        shares.push(share);
        return keyring.decryptJsonMany(values);
      };
      try {
        const plain = Array.from({ length: BULK_DECRYPTION * 2 }, (_, i) => ({ street: `${i} Admiralty Way` }));
        const values = plain.map((value) => keyring.encrypt(JSON.stringify(value)));
        // A loop that mostly waited opens in line.
        expect(await opened(0.2, values)).toEqual(plain);
        expect(thread).not.toHaveBeenCalled();
        // A busy one sends the page to the thread...
        expect(await opened(0.9, values)).toEqual(plain);
        expect(thread).toHaveBeenCalledTimes(1);
        expect(await thread.mock.results[0]!.value).toMatchObject({ failed: [] });
        // ...and keeps doing so while the thread keeps it below the busy threshold...
        expect(await opened(0.5, values)).toEqual(plain);
        expect(thread).toHaveBeenCalledTimes(2);
        // ...a few values stay in line even then (and read nothing)...
        now += LOOP_LOAD_DEFAULTS.windowMs;
        expect(await keyring.decryptJsonMany(values.slice(0, 2))).toEqual(plain.slice(0, 2));
        expect(thread).toHaveBeenCalledTimes(2);
        // ...and once the loop is idle again, pages are opened in line.
        expect(await opened(0.1, values)).toEqual(plain);
        expect(thread).toHaveBeenCalledTimes(2);
        expect(shares).toEqual([]);
      } finally {
        thread.mockRestore();
        keyring.close();
      }
    });

    it('has a decryption thread that opens what its keys open and answers "not opened" for anything else', async () => {
      const envelope = (id: string, key: Buffer, text: string) => {
        const iv = randomBytes(12);
        const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(id));
        const sealed = Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
        return `vx1:${id}:${sealed.toString('base64url')}`;
      };
      const first = { id: 'aaaa0001', key: randomBytes(32) };
      const second = { id: 'bbbb0002', key: randomBytes(32) };
      const keysOf = (...keys: (typeof first)[]) => () => keys.map(({ id, key }) => ({ id, key, aad: Buffer.from(id) }));
      const thread = new DecryptionThread({ prefix: 'vx1:', idLength: 8 }, 200);
      try {
        const good = envelope(first.id, first.key, '"Chinedu Eze"');
        const wrongAad = envelope(first.id, first.key, '1').replace(first.id, second.id);
        const altered = good.slice(0, -3) + (good.at(-3) === 'A' ? 'B' : 'A') + good.slice(-2);
        const later = envelope(second.id, second.key, '{"city": "Lekki"}');
        const notJson = envelope(first.id, first.key, '1,2');
        expect(await thread.open([good, altered, wrongAad, later, notJson, 'plain text', 'vx1:aaaa0001:AAAA'], 1, keysOf(first))).toEqual({
          json: '["Chinedu Eze",null,null,null,null,null,null]',
          failed: [1, 2, 3, 4, 5, 6],
        });
        // The keys are sent again only when the keyring's version changes (a rotation loaded another key).
        expect(await thread.open([later], 1, keysOf(first, second))).toEqual({ json: '[null]', failed: [0] });
        expect(await thread.open([later, good], 2, keysOf(first, second))).toEqual({ json: '[{"city": "Lekki"},"Chinedu Eze"]', failed: [] });
        // A thread that dies answers null (its caller opens the values) and is not started again at
        // once, so a thread that cannot run does not cost a new one per request; later it is, with the keys.
        await thread['calls']!.worker.terminate();
        expect(await thread.open([good], 2, keysOf(first))).toBeNull();
        expect(thread['calls']).toBeUndefined();
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await thread.open([good], 2, keysOf(first))).toEqual({ json: '["Chinedu Eze"]', failed: [] });
        thread.close();
        expect(await thread.open([good], 2, keysOf(first))).toBeNull();
      } finally {
        thread.close();
      }
    });

    it('makes the embedded default key in the data folder (0600) on first use, and reads it back after', async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-kek-'));
      try {
        const database = t.database;
        const config = testConfig({ dataDir: dir, encryptionKey: undefined, databaseUrl: undefined });
        // A database whose keys are wrapped by the test key cannot be opened by a new key: use a fresh key set.
        const saved = await raw(t).selectFrom('data_keys').selectAll().execute();
        await raw(t).deleteFrom('data_keys').execute();
        try {
          const first = await openKeyring(database, config);
          const file = path.join(dir, 'encryption.key');
          expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
          expect(Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64')).toHaveLength(32);
          const second = await openKeyring(database, config);
          expect(second.kekId).toBe(first.kekId);
          expect(second.activeKeyId()).toBe(first.activeKeyId());
        } finally {
          await raw(t).deleteFrom('data_keys').execute();
          await raw(t).insertInto('data_keys').values(saved).execute();
          await openKeyring(database, testConfig({ dataDir }));
        }
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe('personal columns', () => {
    it('are stored as ciphertext and read back plain, through the query builder and raw SQL alike', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: 10_000_000 });
      const created = await client(t.app).post('/v1/verifications/addresses', org.liveSecret, ADDRESS_BODY);
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().data.id as number;
      const { rows: [stored] } = await sql<Record<string, string>>`
        select applicant::text as applicant, street, applicant_id_key from address_verifications where id = ${id}`.execute(raw(t));
      expect(stored!.applicant).toMatch(/^"vx1:[0-9a-f]{8}:/);
      expect(stored!.street).toMatch(/^vx1:[0-9a-f]{8}:/);
      expect(JSON.stringify(stored)).not.toContain('Okonkwo');
      expect(JSON.stringify(stored)).not.toContain('12345678901');
      expect(stored!.applicant_id_key).toMatch(/^[0-9a-f]{64}$/);
      const row = await t.database.db.selectFrom('address_verifications').select(['applicant', 'street']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.applicant).toMatchObject({ firstname: 'Adaeze', lastname: 'Okonkwo' });
      expect(row.street).toBe('12 Admiralty Way');
      const { rows: [viaSql] } = await sql<{ applicant: { lastname: string } }>`select applicant from address_verifications where id = ${id}`.execute(t.database.db);
      expect(viaSql!.applicant.lastname).toBe('Okonkwo');
      expect((await client(t.app).get(`/v1/verifications/addresses/${id}`, org.liveSecret)).json().data.applicant.lastname).toBe('Okonkwo');
    });

    it('refuses a write of a personal column as an SQL expression, and any without a keyring', async () => {
      const id = (await raw(t).selectFrom('address_verifications').select('id').executeTakeFirstOrThrow()).id;
      expect(() => t.database.db.updateTable('address_verifications').set({ street: sql<string>`upper(street)` }).where('id', '=', id).compile()).toThrow(UnencryptableWriteError);
      const keyring = t.database.protection.keyring;
      t.database.protection.keyring = undefined;
      try {
        expect(() => t.database.db.updateTable('address_verifications').set({ street: 'x' }).where('id', '=', id).compile()).toThrow(NoKeyringError);
        await expect(t.database.db.selectFrom('address_verifications').select('street').where('id', '=', id).execute()).rejects.toThrow(NoKeyringError);
      } finally {
        t.database.protection.keyring = keyring;
      }
    });

    it('leaves a value that only looks encrypted alone in a column that is not personal', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: 10_000_000 });
      const reference = 'vx1:00000000:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
      const created = await client(t.app).post('/v1/verifications/addresses', org.liveSecret, { ...ADDRESS_BODY, reference });
      expect(created.statusCode, created.body).toBe(201);
      expect((await client(t.app).get(`/v1/verifications/addresses/${created.json().data.id}`, org.liveSecret)).json().data.reference).toBe(reference);
      // And a personal value that looks like one is encrypted and read back as it was sent.
      const street = (await client(t.app).post('/v1/verifications/addresses', org.liveSecret, { ...ADDRESS_BODY, street: reference })).json().data;
      expect((await client(t.app).get(`/v1/verifications/addresses/${street.id}`, org.liveSecret)).json().data.street).toBe(reference);
    });
  });

  describe('rotation', () => {
    it('re-encrypts every table with personal columns (a table left out would keep values under a leaked key)', () => {
      expect(tablesWithoutPrimaryKeys()).toEqual([]);
    });

    it('keeps rows written before and after a rotation readable, re-encrypts them, and re-wraps under a new KEK', async () => {
      const db = t.database.db;
      await importRegistry(db, Readable.from([JSON.stringify({ type: 'bvn', record: BVN })]));
      const org = await t.org({ riskLevel: 'LOW', fund: 10_000_000 });
      const { credential } = await createAgent(db, { name: 'Rota Agent', email: 'rota@agents.example', phone: '08031239999', states: ['Ogun'] });
      // Ogun: the one task its agent gets (the Lagos ones above wait for a Lagos agent).
      const OGUN = { ...ADDRESS_BODY, state: 'Ogun', lga: 'Ifo' };
      const before = (await client(t.app).post('/v1/verifications/addresses', org.liveSecret, OGUN)).json().data.id as number;
      // A verification session's applicant and metadata, sealed like every other personal column.
      const session = await client(t.app).post('/v1/verifications/sessions', org.liveSecret, { applicant: { firstname: 'Adaeze', lastname: 'Okonkwo' }, metadata: { note: 'rotation' } });
      expect(session.statusCode, session.body).toBe(201);
      const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#36c' } }).jpeg().toBuffer();
      const form = multipartBody({ outcome: 'verified', latitude: 6.8167, longitude: 3.1958 }, [
        { filename: 'a.jpg', type: 'image/jpeg', bytes: jpeg },
        { filename: 'b.jpg', type: 'image/jpeg', bytes: jpeg },
      ]);
      const filed = await t.app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${before}/report`, headers: { authorization: `Bearer ${credential}`, ...form.headers }, payload: form.payload });
      expect(filed.statusCode, filed.body).toBe(200);
      const oldKey = keyringOf(db).activeKeyId();
      const upstreamConfig = testConfig({ dataDir });

      const rotation = await rotateKeys(t.database, upstreamConfig, { graceMs: 0 });
      expect(rotation.created).not.toBe(oldKey);
      expect(keyringOf(db).activeKeyId()).toBe(rotation.created);
      const after = (await client(t.app).post('/v1/verifications/addresses', org.liveSecret, ADDRESS_BODY)).json().data.id as number;
      const applicants = await sql<{ id: number; applicant: string }>`select id, applicant::text as applicant from address_verifications where id in (${before}, ${after}) order by id`.execute(raw(t));
      expect(applicants.rows.map((row) => row.applicant.slice(5, 13))).toEqual([oldKey, rotation.created]);
      for (const id of [before, after]) expect((await client(t.app).get(`/v1/verifications/addresses/${id}`, org.liveSecret)).json().data.applicant.lastname).toBe('Okonkwo');
      expect(await new EmbeddedRegistry(db).find('bvn', BVN.bvn)).toEqual(BVN);

      // Re-encryption moves every value and photo to the new key; the old key then encrypts nothing.
      const moved = await rotateKeys(t.database, upstreamConfig, { graceMs: 0, reencrypt: true });
      const newest = moved.created;
      expect(moved.reencrypted!.rows.address_verifications).toBeGreaterThanOrEqual(2);
      expect(moved.reencrypted!.files).toBeGreaterThanOrEqual(1);
      const { rows } = await sql<{ value: string }>`
        select applicant::text as value from address_verifications union all select street from address_verifications
        union all select record::text from registry_records union all select payload::text from webhook_deliveries
        union all select applicant::text from verification_sessions where applicant is not null
        union all select metadata::text from verification_sessions where metadata is not null`.execute(raw(t));
      expect(moved.reencrypted!.rows.verification_sessions).toBeGreaterThanOrEqual(1);
      for (const row of rows) expect(row.value).toMatch(new RegExp(`^"?vx1:${newest}:`));
      const [photo] = (await client(t.app).get(`/v1/verifications/addresses/${before}`, org.liveSecret)).json().data.photos as string[];
      const link = new URL(photo!);
      const fileId = link.pathname.split('/').pop()!;
      expect(Keyring.fileKeyId(await fs.readFile(path.join(dataDir, 'files', fileId.slice(0, 2), fileId)))).toBe(newest);
      const served = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
      expect(served.headers['content-type']).toBe('image/jpeg');
      const stored = (await reencodePhoto(jpeg)).bytes;
      expect(served.rawPayload.equals(stored)).toBe(true);
      expect((await sealStoredValues(db, { mode: 'all' })).address_verifications).toBe(0);

      // A new KEK: the old one as VOUCH_ENCRYPTION_KEY_PREVIOUS while `rotate` re-wraps the data keys
      // and the upstream credentials; after that the old KEK is not needed at all.
      await addSource(db, TEST_ENCRYPTION_KEY, { name: 'primary', kind: 'verifyme', url: 'https://verify.example.com', secret: 'sk_upstream_secret_1234' });
      const newKek = Buffer.alloc(32, 0x77);
      const changing = testConfig({ dataDir, encryptionKey: newKek, encryptionKeyPrevious: TEST_ENCRYPTION_KEY });
      await expect(openKeyring(t.database, testConfig({ dataDir, encryptionKey: newKek }))).rejects.toThrow(/neither VOUCH_ENCRYPTION_KEY/);
      await openKeyring(t.database, changing);
      const rewrap = await rotateKeys(t.database, changing, { graceMs: 0 });
      expect(rewrap.rewrapped.length).toBeGreaterThanOrEqual(4);
      expect(rewrap.upstreamSecrets).toBe(1);
      expect(new Set((await raw(t).selectFrom('data_keys').select('kek_id').execute()).map((row) => row.kek_id))).toEqual(new Set([kekOf(newKek).id]));
      const source = await raw(t).selectFrom('upstream_sources').select('secret_encrypted').executeTakeFirstOrThrow();
      expect(decryptSecret(newKek, source.secret_encrypted)).toBe('sk_upstream_secret_1234');
      await raw(t).deleteFrom('upstream_sources').execute();

      await openKeyring(t.database, testConfig({ dataDir, encryptionKey: newKek }));
      for (const id of [before, after]) expect((await client(t.app).get(`/v1/verifications/addresses/${id}`, org.liveSecret)).json().data.applicant.lastname).toBe('Okonkwo');
      expect(await new EmbeddedRegistry(db).find('bvn', BVN.bvn)).toEqual(BVN);
      expect((await t.app.inject({ method: 'GET', url: link.pathname + link.search })).rawPayload.equals(stored)).toBe(true);

      // Back to the test key for the rest of the file.
      await rotateKeys(t.database, testConfig({ dataDir, encryptionKeyPrevious: newKek }), { graceMs: 0 });
      await openKeyring(t.database, testConfig({ dataDir }));
    });
  });

  describe('data stored before encryption', () => {
    it('is encrypted (and its lookups blind-indexed) by the start-up pass, then found as before', async () => {
      const db = t.database.db;
      const org = await t.org({ riskLevel: 'LOW' });
      // Rows as the previous release wrote them: plain, with plain keys.
      const nin = { nin: '12398765432', firstname: 'Temitope', lastname: 'Adewale', middlename: '', gender: 'Female', phone: '08061112233', birthdate: '09-09-1991', photo: '' };
      await sql`insert into registry_records (type, key, phone, record) values ('nin', ${nin.nin}, '+2348061112233', ${JSON.stringify(nin)}::jsonb)`.execute(raw(t));
      const applicant = { firstname: 'Temitope', lastname: 'Adewale', idType: 'NIN', idNumber: nin.nin, middlename: '', phone: '', gender: '', birthdate: '', photo: '' };
      const legacyKey = createHash('sha256').update(`NIN:${nin.nin}`).digest('hex');
      const { rows: [address] } = await sql<{ id: number }>`
        insert into address_verifications (org_id, mode, seq, reference, applicant, applicant_id_key, street, lga, state, status, latitude, longitude, completed_at)
        values (${org.id}, 'live', 1, 'legacy-1', ${JSON.stringify(applicant)}::jsonb, ${legacyKey}, '3 Old Road', 'Ikeja', 'Lagos', 'verified', '6.6', '3.35', now())
        returning id`.execute(raw(t));
      const jpeg = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#963' } }).jpeg().toBuffer();
      const fileId = '0f0f0f0f-1111-4222-8333-444444444444';
      await fs.mkdir(path.join(dataDir, 'files', '0f'), { recursive: true });
      await fs.writeFile(path.join(dataDir, 'files', '0f', fileId), jpeg);
      await sql`insert into uploaded_files (id, org_id, mode, content_type, size, sha256, sealed) values (${fileId}, ${org.id}, 'live', 'image/jpeg', ${jpeg.length}, 'x', false)`.execute(raw(t));

      // Not found by the blind index until sealed.
      expect(await new EmbeddedRegistry(db).find('nin', nin.nin)).toBeUndefined();
      const counts = await sealStoredValues(db, { mode: 'legacy', batchSize: 1 });
      expect(counts.registry_records).toBe(1);
      expect(counts.address_verifications).toBeGreaterThanOrEqual(1);
      const store = openFileStore(testConfig({ dataDir }), t.database.protection);
      expect(await sealStoredFiles(db, store, { mode: 'legacy' })).toBe(1);

      expect(await new EmbeddedRegistry(db).find('nin', nin.nin)).toEqual(nin);
      expect(await new EmbeddedRegistry(db).findNinByPhone('+2348061112233')).toEqual(nin);
      const { rows } = await sql`select * from registry_records`.execute(raw(t));
      expect(JSON.stringify(rows)).not.toContain(nin.nin);
      expect(JSON.stringify(rows)).not.toContain('Temitope');
      const { rows: [sealed] } = await sql<Record<string, unknown>>`select applicant::text as applicant, street, latitude, applicant_id_key from address_verifications where id = ${address!.id}`.execute(raw(t));
      expect(JSON.stringify(sealed)).not.toMatch(/Temitope|Old Road|6\.6/);
      expect(sealed!.applicant_id_key).not.toBe(legacyKey);
      const row = await db.selectFrom('address_verifications').select(['latitude', 'street']).where('id', '=', address!.id).executeTakeFirstOrThrow();
      expect(row).toEqual({ latitude: 6.6, street: '3 Old Road' });
      // The address-by-identity lookup finds it through the new blind index.
      const found = await findVerifiedAddress(db, { orgId: org.id, mode: 'live' }, { maxAddressAge: '6M', idType: 'NIN', idNumber: nin.nin, firstname: 'Temitope', lastname: 'Adewale' });
      expect(found).toBeDefined();
      const onDisk = await fs.readFile(path.join(dataDir, 'files', '0f', fileId));
      expect(Keyring.isEncryptedFile(onDisk)).toBe(true);
      expect(await store.get(fileId)).toEqual(jpeg);
      // A second pass finds nothing to do.
      expect(Object.values(await sealStoredValues(db, { mode: 'legacy' })).every((n) => n === 0)).toBe(true);
      expect(await sealStoredFiles(db, store, { mode: 'legacy' })).toBe(0);
    });

    it('the start-up pass is skipped once one has found nothing left in clear, and runs again without that record', async () => {
      const db = t.database.db;
      const store = openFileStore(testConfig({ dataDir }), t.database.protection);
      await raw(t).deleteFrom('settings').where('name', '=', LEGACY_SEALED_SETTING).execute();
      const org = await t.org({ riskLevel: 'LOW' });
      const plainRow = (reference: string) => sql<{ id: number }>`
        insert into address_verifications (org_id, mode, seq, reference, applicant, street, lga, state, status)
        values (${org.id}, 'live', ${Number(reference.slice(-1))}, ${reference}, '{"firstname": "Kelechi"}'::jsonb, '9 Plain Street', 'Ikeja', 'Lagos', 'pending')
        returning id`.execute(raw(t));
      const streetOf = async (id: number) => (await sql<{ street: string }>`select street from address_verifications where id = ${id}`.execute(raw(t))).rows[0]!.street;

      const { rows: [first] } = await plainRow('skip-1');
      const sealed = await sealLegacy(t.database, store);
      expect(sealed?.rows.address_verifications).toBe(1);
      expect(await streetOf(first!.id)).not.toContain('Plain');
      expect(await raw(t).selectFrom('settings').select('value').where('name', '=', LEGACY_SEALED_SETTING).execute()).toEqual([{ value: protectedColumnsDigest() }]);

      // A later start does not scan again: a row in clear now (which no release writes) stays as it is.
      const { rows: [second] } = await plainRow('skip-2');
      expect(await sealLegacy(t.database, store)).toBeNull();
      expect(await streetOf(second!.id)).toBe('9 Plain Street');

      // A pass recorded for other protected columns (a release that protects one more) runs again.
      await raw(t).updateTable('settings').set({ value: 'a digest of fewer columns' }).where('name', '=', LEGACY_SEALED_SETTING).execute();
      expect((await sealLegacy(t.database, store))?.rows.address_verifications).toBe(1);
      expect(await streetOf(second!.id)).not.toContain('Plain');
      expect((await db.selectFrom('address_verifications').select('street').where('id', '=', second!.id).executeTakeFirstOrThrow()).street).toBe('9 Plain Street');
      expect(await sealLegacy(t.database, store)).toBeNull();

      // Without the record (a database restored from before the pass), the pass runs again.
      const { rows: [third] } = await plainRow('skip-3');
      await raw(t).deleteFrom('settings').where('name', '=', LEGACY_SEALED_SETTING).execute();
      expect((await sealLegacy(t.database, store))?.rows.address_verifications).toBe(1);
      expect(await streetOf(third!.id)).not.toContain('Plain');
    });
  });
});
