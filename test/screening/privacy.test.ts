import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFileStore } from '../../src/files/open-store.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { protectionOf } from '../../src/platform/crypto/fields.js';
import { eraseSubject, exportSubject } from '../../src/privacy/subjects.js';
import { applyScreeningRetention } from '../../src/screening/privacy.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, testConfig, type TestContext } from '../helpers/app.js';
import { client } from '../respondents/fixtures.js';

const BASE = '/v1/verifications/screenings';
const DAY = 86_400_000;
/** The sandbox's sanctioned person, so that the screening has a hit (and an explanation naming the subject). */
const NAME = 'Musa Adamu Karfe';
const ALIAS = 'Alhaji Musa Privacyson';

describe('screenings and personal data', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-screening-privacy-'));
    t = await buildTestContext({ config: { dataDir }, webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
  });
  afterAll(async () => {
    await t.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('the subject, metadata and explanations are encrypted at rest; the API reads them back', async () => {
    const org = await t.org();
    const created = (await http.post(BASE, org.testSecret, { subject: { type: 'person', name: NAME, dob: '1968-04-12', aliases: [ALIAS] }, metadata: { customer: 'Privacy Metadata Value' } })).json().data;
    expect(created.hits.length).toBeGreaterThan(0);
    const raw = t.database.db.withoutPlugins();
    const { rows } = await sql<{ row: string }>`select s::text as row from screenings s where id = ${created.id}`.execute(raw);
    const stored = rows[0]!.row;
    for (const secret of ['Musa', 'Karfe', '1968-04-12', ALIAS, 'Privacy Metadata Value']) expect(stored).not.toContain(secret);
    const hits = await sql<{ explanation: string }>`select explanation from screening_hits where screening_id = ${created.id}`.execute(raw);
    for (const hit of hits.rows) expect(hit.explanation).not.toContain('Musa');
    expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data.subject).toMatchObject({ name: NAME, dob: '1968-04-12', aliases: [ALIAS] });
  });

  it("never logs a subject's name, date of birth or aliases", async () => {
    const org = await t.org();
    const before = t.logs.length;
    const created = (await http.post(BASE, org.testSecret, { subject: { type: 'person', name: NAME, dob: '1968-04-12', aliases: [ALIAS] } })).json().data;
    await http.get(`${BASE}/${created.id}`, org.testSecret);
    await http.get(BASE, org.testSecret);
    await http.post(BASE, org.testSecret, { subject: { type: 'person', name: `${NAME} Bad`, dob: '12/04/1968' } });
    await http.del(`${BASE}/${created.id}`, org.testSecret);
    const logs = t.logs.slice(before).join('\n');
    expect(logs).toContain(BASE);
    for (const secret of ['Musa', 'Karfe', '1968', 'Privacyson']) expect(logs).not.toContain(secret);
  });

  it('retention deletes screenings no longer monitored after the verification period; monitored ones stay', async () => {
    const org = await t.org();
    const ended = (await http.post(BASE, org.testSecret, { subject: { type: 'person', name: NAME } })).json().data;
    const monitored = (await http.post(BASE, org.testSecret, { subject: { type: 'person', name: NAME }, monitor: true })).json().data;
    const db = t.database.db;
    const exists = async (id: number) => (await db.selectFrom('screenings').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    expect(await applyScreeningRetention(db, { now: new Date(Date.now() + 729 * DAY), verificationDays: 730 })).toBe(0);
    await db.insertInto('retention_settings').values({ org_id: org.id, verification_days: 30 } as never).execute();
    const later = new Date(Date.now() + 31 * DAY);
    expect(await applyScreeningRetention(db, { now: later, verificationDays: 730 })).toBeGreaterThanOrEqual(1);
    expect(await exists(ended.id)).toBe(false);
    expect(await db.selectFrom('screening_hits').select('id').where('screening_id', '=', ended.id).execute()).toEqual([]);
    expect(await exists(monitored.id)).toBe(true);
    // Ending the monitoring starts its period.
    await http.del(`${BASE}/${monitored.id}`, org.testSecret);
    expect(await applyScreeningRetention(db, { now: new Date(Date.now() + 29 * DAY), verificationDays: 730 })).toBe(0);
    expect(await applyScreeningRetention(db, { now: new Date(Date.now() + 31 * DAY), verificationDays: 730 })).toBe(1);
    expect(await exists(monitored.id)).toBe(false);
  });

  it('a subject request finds the screenings of the person by the names their records give, and erase deletes them', async () => {
    const bvn = '22295100017';
    const record = { bvn, firstname: 'Chibuzor', middlename: 'Ikenna', lastname: 'Erasure-Okeke', gender: 'Male', phone: '08095100017', birthdate: '03-05-1981' };
    await importRegistry(t.database.db, Readable.from([JSON.stringify({ type: 'bvn', record })]));
    const org = await t.org();
    const create = async (subject: object, secret = org.testSecret) => (await http.post(BASE, secret, { subject: { type: 'person', ...subject }, monitor: true })).json().data;
    const byName = await create({ name: 'ERASURE-OKEKE Chibuzor' });
    const byParts = await create({ firstname: 'Chibuzor', middlename: 'Ikenna', lastname: 'Erasure-Okeke', dob: '1981-05-03' });
    // Another organization's: the operator's request covers every organization.
    const byAlias = await create({ name: 'C. I. Okeke', aliases: ['Chibuzor Erasure-Okeke'] }, (await t.org()).testSecret);
    const otherPerson = await create({ name: 'Chibuzor Erasure-Okeke', dob: '1990' });
    const otherName = await create({ name: 'Ikenna Erasure-Okeke' });
    const store = openFileStore(testConfig({ dataDir }), protectionOf(t.database.db));

    const exported = await exportSubject(t.database.db, [{ kind: 'bvn', value: bvn }], {}, 'cli:test');
    expect(exported.found.screenings).toBe(3);
    expect(exported.data.screenings.map((s) => s.id).sort((a, b) => a - b)).toEqual([byName.id, byParts.id, byAlias.id]);
    expect(exported.data.screenings.find((s) => s.id === byParts.id)?.record.subject.dob).toBe('1981-05-03');

    const erased = await eraseSubject(t.database.db, store, [{ kind: 'bvn', value: bvn }], {}, 'cli:test');
    expect(erased.erased.screenings).toBe(3);
    const left = await t.database.db.selectFrom('screenings').select('id').where('org_id', '=', org.id).orderBy('id').execute();
    expect(left.map((row) => Number(row.id))).toEqual([otherPerson.id, otherName.id]);
    expect((await exportSubject(t.database.db, [{ kind: 'bvn', value: bvn }], {}, 'cli:test')).found.screenings ?? 0).toBe(0);
  });
});
