import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRegistry } from '../../src/identities/registry/import.js';
import { loadTestIdentities } from '../../src/identities/registry/test-identities.js';
import { SCREENING_BILLABLES } from '../../src/screening/billing.js';
import { importList } from '../../src/screening/lists/import.js';
import { setOrganizationScreening } from '../../src/screening/organization-setting.js';
import { SESSION_BILLABLES } from '../../src/sessions/billing.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { balanceOf, expectStyleA, httpClient, ID_ONLY, SANDBOX, sessionEvents, tokenOf, type HttpClient } from './fixtures.js';

/**
 * A session with checks.screening screens the person its ID lookup finds (issue 51, part 3), over
 * real sockets: live against a list the operator imported, test mode against the sandbox list.
 */

const BASE = '/v1/verifications/sessions';
const api = (token: string, step = '') => `/verify/api/${token}${step}`;
/** Two live registry records: one whose holder is on the list below, one who is not. */
const LISTED_NIN = '41414141411';
const CLEAR_NIN = '41414141412';
const LIST = [
  'id,schema,name,aliases,birthDate,nationality,topics,program,notes',
  'NG-TS-0007,Person,Alhaji Danjuma Mohammed Kawu,Danjuma Kawu,1971-06-02,NG,sanction,Nigeria Sanctions List,Designated for terrorism financing',
  'NG-TS-0008,Organization,Kawu Bureau de Change Limited,,,NG,sanction,Nigeria Sanctions List,',
].join('\n');
const SESSION_PRICE = SESSION_BILLABLES.session.defaultPrice;
const SCREENING_PRICE = SCREENING_BILLABLES.screening.defaultPrice;

let t: TestContext;
let http: HttpClient;
let dataDir: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-session-screening-'));
  t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, config: { dataDir } });
  http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  const identities = await loadTestIdentities();
  const records = [
    { type: 'nin', record: { ...identities.nin, nin: LISTED_NIN, firstname: 'Danjuma', middlename: 'Muhammad', lastname: 'Kawu', birthdate: '02-06-1971', gender: 'Male' } },
    { type: 'nin', record: { ...identities.nin, nin: CLEAR_NIN, firstname: 'Chiamaka', middlename: 'Ifeoma', lastname: 'Eze', birthdate: '11-01-1994', gender: 'Female' } },
  ];
  await importRegistry(t.database.db, Readable.from([records.map((line) => JSON.stringify(line)).join('\n')]));
  await importList(t.database.db, { source: 'ng-sanctions', format: 'csv', files: { main: Buffer.from(LIST) } });
  await t.app.screeningLists.refresh();
}, 60_000);

afterAll(async () => {
  await t?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

async function startSession(secret: string, body: object) {
  const res = await http.post(BASE, secret, body);
  expect(res.status, res.text).toBe(201);
  return { session: res.json().data, token: tokenOf(res.json().data.url) };
}

/** A session without liveness for a prefilled NIN; `screening` null: the body does not say. */
const screenedSession = (idNumber: string, screening: boolean | null = true) => ({
  checks: { ...ID_ONLY.checks, ...(screening === null ? {} : { screening }) },
  applicant: { idType: 'NIN', idNumber },
});

describe('a session that screens its person', () => {
  it('live: the listed person is a hit to review; the session still ends on its ID, and names the screening; both are charged', async () => {
    const org = await t.org({ fund: SESSION_PRICE + SCREENING_PRICE });
    const { session, token } = await startSession(org.liveSecret, screenedSession(LISTED_NIN));
    expect(session.requestedChecks).toEqual({ idLookup: true, liveness: false, faceMatch: false, screening: true });
    // The end user is told before they consent, in a text of its own version.
    const view = (await http.get(api(token))).json();
    expect(view.consent.purpose).toMatch(/sanctions and politically exposed persons lists/);
    expect(view.consent.version).toBe('session-consent-1-screening');

    expect((await http.post(api(token, '/consent'), undefined, { accepted: true })).json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    const done = (await http.get(`${BASE}/${session.id}`, org.liveSecret)).json().data;
    expect(done.userConsent.textVersion).toBe('session-consent-1-screening');
    expect(done.checks.screening).toEqual({ passed: false, screeningId: expect.any(Number), status: 'PENDING_REVIEW', hits: 1, reasons: ['SCREENING_MATCH'] });

    const screening = (await http.get(`/v1/verifications/screenings/${done.checks.screening.screeningId}`, org.liveSecret)).json().data;
    expect(screening).toMatchObject({ reference: session.reference, subject: { type: 'person', firstname: 'Danjuma', middlename: 'Muhammad', lastname: 'Kawu', dob: '1971-06-02' }, metadata: { sessionId: session.id } });
    expect(screening.hits).toEqual([expect.objectContaining({ entityId: 'NG-TS-0007', source: 'ng-sanctions', topics: ['sanction'] })]);
    expect(screening.lists).toEqual([{ source: 'ng-sanctions', version: 1 }]);

    // The webhook of the session's end carries the screening's check.
    const completed = (await sessionEvents(t.database.db, org.id)).find((event) => event.type === 'session.completed');
    expect(completed?.payload?.data.checks.screening).toMatchObject({ passed: false, hits: 1 });
    expect(await balanceOf(t.database.db, org.id)).toBe(0);
  });

  it('live: a person on no list passes it', async () => {
    const org = await t.org();
    const { session, token } = await startSession(org.liveSecret, screenedSession(CLEAR_NIN));
    await http.post(api(token, '/consent'), undefined, { accepted: true });
    const done = (await http.get(`${BASE}/${session.id}`, org.liveSecret)).json().data;
    expect(done.checks.screening).toEqual({ passed: true, screeningId: expect.any(Number), status: 'CLEAR', hits: 0, reasons: [] });
  });

  it('test mode screens the sandbox list only, free: the listed person of the live list is clear there', async () => {
    const org = await t.org();
    const before = await balanceOf(t.database.db, org.id);
    const { session, token } = await startSession(org.testSecret, screenedSession(SANDBOX.nin.idNumber));
    await http.post(api(token, '/consent'), undefined, { accepted: true });
    const done = (await http.get(`${BASE}/${session.id}`, org.testSecret)).json().data;
    expect(done.checks.screening).toMatchObject({ passed: true, status: 'CLEAR' });
    const screening = (await http.get(`/v1/verifications/screenings/${done.checks.screening.screeningId}`, org.testSecret)).json().data;
    expect(screening.lists.map((list: { source: string }) => list.source)).not.toContain('ng-sanctions');
    expect(await balanceOf(t.database.db, org.id)).toBe(before);
    // The live key does not see the test screening.
    expectStyleA(await http.get(`/v1/verifications/screenings/${done.checks.screening.screeningId}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
  });

  it('a wallet that cannot pay the screening: 402 at the ID step, the try and the session price given back, nothing screened', async () => {
    const org = await t.org({ fund: SESSION_PRICE });
    const { session, token } = await startSession(org.liveSecret, { checks: { ...ID_ONLY.checks, screening: true } });
    await http.post(api(token, '/consent'), undefined, { accepted: true });
    const res = await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: LISTED_NIN });
    expectStyleA(res, 402, 'PAYMENT_REQUIRED');
    expect(await balanceOf(t.database.db, org.id)).toBe(SESSION_PRICE);
    const after = (await http.get(`${BASE}/${session.id}`, org.liveSecret)).json().data;
    expect(after.checks).toMatchObject({ idLookup: null, screening: null });
    expect((await http.get(api(token))).json()).toMatchObject({ step: 'id', attemptsLeft: { id: 3 } });
    const screenings = await t.database.db.selectFrom('screenings').select('id').where('org_id', '=', org.id).execute();
    expect(screenings).toEqual([]);
  });

  it("follows the organization's setting unless the session says otherwise; without either, no screening", async () => {
    const org = await t.org();
    const plain = await startSession(org.liveSecret, screenedSession(CLEAR_NIN, null));
    expect(plain.session.requestedChecks.screening).toBe(false);
    await http.post(api(plain.token, '/consent'), undefined, { accepted: true });
    expect((await http.get(`${BASE}/${plain.session.id}`, org.liveSecret)).json().data.checks.screening).toBeNull();

    await setOrganizationScreening(t.database.db, org.id, { sessions: true, lookups: false }, { kind: 'cli' });
    expect((await startSession(org.liveSecret, screenedSession(CLEAR_NIN, null))).session.requestedChecks.screening).toBe(true);
    expect((await startSession(org.liveSecret, screenedSession(CLEAR_NIN, false))).session.requestedChecks.screening).toBe(false);
    const audit = await t.database.db.selectFrom('audit_events').select(['action', 'after']).where('org_id', '=', org.id).where('action', '=', 'organization.screening_changed').execute();
    expect(audit).toEqual([{ action: 'organization.screening_changed', after: { sessions: true, lookups: false, businesses: false } }]);
  });

  it('refuses checks.screening that is not a boolean, in style A', async () => {
    const org = await t.org();
    expectStyleA(await http.post(BASE, org.testSecret, { checks: { screening: 'yes' } }), 400, 'VALIDATION_ERROR');
  });
});
