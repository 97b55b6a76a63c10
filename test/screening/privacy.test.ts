import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyScreeningRetention } from '../../src/screening/privacy.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { client } from '../respondents/fixtures.js';

const BASE = '/v1/verifications/screenings';
const DAY = 86_400_000;
/** The sandbox's sanctioned person, so that the screening has a hit (and an explanation naming the subject). */
const NAME = 'Musa Adamu Karfe';
const ALIAS = 'Alhaji Musa Privacyson';

describe('screenings and personal data', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
  });
  afterAll(() => t.close());

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
});
