import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';
import { EMPLOYMENT_BODY, GUARANTOR_BODY } from '../respondents/fixtures.js';

const ID = '/v1/verifications/identities';
const ADAEZE = { firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' };
const ADDRESS_BODY = {
  street: '12 Adeola Odeku Street',
  lga: 'Eti-Osa',
  state: 'Lagos',
  applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', phone: '08031234567' },
};
const BUSINESS_BODY = { name: 'Kolanut Stores', street: '5 Broad Street', lga: 'Lagos Island', state: 'Lagos', applicant: { firstname: 'Chidi', lastname: 'Okafor' } };
const CONSENT = { reference: 'FORM-2024-0042', obtainedAt: '2024-05-01T09:30:00Z', channel: 'web' };

/** Each workflow family: its create path, a valid body, and the table its rows live in. */
const WORKFLOWS = [
  { family: 'address', path: '/v1/verifications/addresses', body: ADDRESS_BODY, table: 'address_verifications' },
  { family: 'business', path: '/v1/verifications/businesses', body: BUSINESS_BODY, table: 'business_verifications' },
  { family: 'guarantor', path: '/v1/verifications/guarantors', body: GUARANTOR_BODY, table: 'guarantor_verifications' },
  { family: 'employment', path: '/v1/verifications/employments', body: EMPLOYMENT_BODY, table: 'employment_verifications' },
] as const;

let t: TestContext;
let operator: PortalUser;

beforeAll(async () => {
  t = await buildTestContext();
  operator = await operatorUser(t.app, t.database.db);
});
afterAll(() => t.close());

const post = (url: string, secret: string, payload: object, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url, headers: { ...bearer(secret), ...headers }, payload });

async function requireConsent(orgId: string, required: boolean) {
  const res = await portal(t.app, operator, { method: 'PUT', url: `/api/console/organizations/${orgId}/consent`, payload: { consentRequired: required } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ orgId, consentRequired: required });
}

describe('consent on identity lookups (style B)', () => {
  it('is optional: without it the lookup works and nothing is kept; with it the consent is stored encrypted beside the usage row', async () => {
    const org = await t.org();
    const without = await post(`${ID}/bvn/22345678901`, org.testSecret, ADAEZE);
    expect(without.statusCode, without.body).toBe(200);
    const withConsent = await post(`${ID}/bvn/22345678901`, org.testSecret, { ...ADAEZE, consent: CONSENT });
    expect(withConsent.statusCode, withConsent.body).toBe(200);
    const rows = await t.database.db
      .selectFrom('lookup_consents as c')
      .innerJoin('usage_events as u', 'u.id', 'c.usage_id')
      .select(['u.type', 'c.consent_reference', 'c.consent_obtained_at', 'c.consent_channel'])
      .where('c.org_id', '=', org.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'bvn_basic', consent_reference: 'FORM-2024-0042', consent_channel: 'web' });
    expect(new Date(rows[0]!.consent_obtained_at).toISOString()).toBe('2024-05-01T09:30:00.000Z');
    // Raw SQL: the reference is not there in clear.
    const { rows: raw } = await sql<{ consent_reference: string }>`select consent_reference from lookup_consents where org_id = ${org.id}`.execute(t.database.db.withoutPlugins());
    expect(raw[0]!.consent_reference).not.toContain('FORM-2024-0042');
  });

  it('takes consent from X-Consent-* headers on the GET TIN lookup, and keeps it for a not-found lookup too', async () => {
    const org = await t.org();
    const headers = { 'x-consent-reference': 'CALL-77', 'x-consent-obtained-at': '2024-06-01T08:00:00+01:00', 'x-consent-channel': 'phone' };
    const res = await t.app.inject({ method: 'GET', url: `${ID}/tin/99999999-9999`, headers: { ...bearer(org.testSecret), ...headers } });
    expect(res.statusCode, res.body).toBe(404);
    const row = await t.database.db.selectFrom('lookup_consents').selectAll().where('org_id', '=', org.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ consent_reference: 'CALL-77', consent_channel: 'phone' });
    expect(new Date(row.consent_obtained_at).toISOString()).toBe('2024-06-01T07:00:00.000Z');
  });

  it('refuses a malformed consent with 400 style B naming the field, and charges nothing', async () => {
    const org = await t.org();
    const cases: [object, RegExp][] = [
      [{ ...CONSENT, obtainedAt: '01-05-2024' }, /^consent\.obtainedAt must be an ISO 8601 date-time/],
      [{ ...CONSENT, obtainedAt: new Date(Date.now() + 3_600_000).toISOString() }, /^consent\.obtainedAt must not be in the future$/],
      [{ ...CONSENT, channel: 'carrier-pigeon' }, /^consent\.channel must be one of web, mobile, in_person, phone, paper, other$/],
      [{ obtainedAt: CONSENT.obtainedAt, channel: 'web' }, /^consent\.reference is required$/],
    ];
    for (const [consent, message] of cases) {
      const res = await post(`${ID}/nin/70412358961`, org.testSecret, { consent });
      expect(res.statusCode, res.body).toBe(400);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['error', 'message', 'requestId', 'statusCode']);
      expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(body.message).toMatch(message);
    }
    const bad = await t.app.inject({ method: 'GET', url: `${ID}/tin/23456789-0001`, headers: { ...bearer(org.testSecret), 'x-consent-reference': 'A', 'x-consent-obtained-at': '2024-01-01T00:00:00Z', 'x-consent-channel': 'fax' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('X-Consent-Channel must be one of web, mobile, in_person, phone, paper, other');
    const used = await t.database.db.selectFrom('usage_events').select('id').where('org_id', '=', org.id).execute();
    expect(used).toEqual([]);
  });

  it('is required once the operator says so: missing is 400 style B; given, the lookup works', async () => {
    const org = await t.org();
    await requireConsent(org.id, true);
    const missing = await post(`${ID}/bvn/22345678901`, org.testSecret, ADAEZE);
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'consent is required for this organization: send consent with reference, obtainedAt and channel in the body, or the X-Consent-Reference, X-Consent-Obtained-At, X-Consent-Channel headers',
      requestId: missing.headers['x-request-id'],
    });
    const tin = await t.app.inject({ method: 'GET', url: `${ID}/tin/23456789-0001`, headers: bearer(org.testSecret) });
    expect(tin.statusCode).toBe(400);
    expect(tin.json().message).toMatch(/^consent is required/);
    const given = await post(`${ID}/bvn/22345678901`, org.testSecret, { ...ADAEZE, consent: CONSENT });
    expect(given.statusCode, given.body).toBe(200);
    await requireConsent(org.id, false);
    expect((await post(`${ID}/bvn/22345678901`, org.testSecret, ADAEZE)).statusCode).toBe(200);
  });
});

describe('consent on workflow creations (style A)', () => {
  for (const { family, path, body, table } of WORKFLOWS) {
    it(`${family}: optional (absent works, present is stored encrypted), required (missing is 400), invalid (400)`, async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (res: { statusCode: number; body: string }) => {
        expect([200, 201], res.body).toContain(res.statusCode);
        return JSON.parse(res.body).data.id as number;
      };
      const plainId = created(await post(path, org.testSecret, body));
      const consentId = created(await post(path, org.testSecret, { ...body, consent: { ...CONSENT, channel: 'in_person' } }));
      const db = t.database.db as never as import('kysely').Kysely<Record<string, { id: number; consent_reference: string | null; consent_channel: string | null; consent_obtained_at: Date | null }>>;
      const rows = await db.selectFrom(table).select(['id', 'consent_reference', 'consent_channel', 'consent_obtained_at']).where('id', 'in', [plainId, consentId]).orderBy('id').execute();
      expect(rows.map((row) => row.consent_reference)).toEqual([null, 'FORM-2024-0042']);
      expect(rows[1]!.consent_channel).toBe('in_person');
      expect(new Date(rows[1]!.consent_obtained_at!).toISOString()).toBe('2024-05-01T09:30:00.000Z');
      const { rows: raw } = await sql<{ consent_reference: string }>`select consent_reference from ${sql.table(table)} where id = ${consentId}`.execute(t.database.db.withoutPlugins());
      expect(raw[0]!.consent_reference).not.toContain('FORM-2024-0042');

      const invalid = await post(path, org.testSecret, { ...body, consent: { ...CONSENT, obtainedAt: 'yesterday', channel: 'telepathy' } });
      expect(invalid.statusCode).toBe(400);
      expect(Object.keys(invalid.json()).sort()).toEqual(['code', 'message', 'requestId', 'status']);
      expect(invalid.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
      expect(invalid.json().message).toContain('consent.obtainedAt must be an ISO 8601 date-time with a time zone');
      expect(invalid.json().message).toContain('consent.channel must be one of web, mobile, in_person, phone, paper, other');

      await requireConsent(org.id, true);
      const missing = await post(path, org.testSecret, body);
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toEqual({
        status: 'error',
        code: 'VALIDATION_ERROR',
        message: 'consent is required for this organization: send consent with reference, obtainedAt and channel',
        requestId: missing.headers['x-request-id'],
      });
      created(await post(path, org.testSecret, { ...body, reference: `with-consent-${family}`, consent: CONSENT }));
    });
  }

  it('the portal creates with the same rule: a required consent missing from the form is 400', async () => {
    const { org, owner } = await portalOrg(t.database.db);
    await t.database.db.updateTable('organizations').set({ risk_level: 'LOW' }).where('id', '=', org.id).execute();
    await requireConsent(org.id, true);
    const url = `/api/orgs/${org.id}/verifications/address?mode=test`;
    const missing = await portal(t.app, owner, { method: 'POST', url, payload: ADDRESS_BODY });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toMatch(/consent is required/);
    const given = await portal(t.app, owner, { method: 'POST', url, payload: { ...ADDRESS_BODY, consent: CONSENT } });
    expect(given.statusCode, given.body).toBe(201);
  });
});

describe('the consent setting', () => {
  it('is for operators: 401 without a session, 403 for a customer (its owner included); changes are audited', async () => {
    const { org, owner } = await portalOrg(t.database.db);
    const url = `/api/console/organizations/${org.id}/consent`;
    expect((await portal(t.app, undefined, { method: 'GET', url })).statusCode).toBe(401);
    expect((await portal(t.app, owner, { method: 'GET', url })).statusCode).toBe(403);
    expect((await portal(t.app, owner, { method: 'PUT', url, payload: { consentRequired: true } })).statusCode).toBe(403);
    expect((await portal(t.app, operator, { method: 'GET', url })).json()).toEqual({ orgId: org.id, consentRequired: false });
    await requireConsent(org.id, true);
    const audit = await t.database.db.selectFrom('audit_events').select(['action', 'actor_id']).where('org_id', '=', org.id).where('action', '=', 'consent.setting_changed').execute();
    expect(audit).toEqual([{ action: 'consent.setting_changed', actor_id: operator.personId }]);
    const unknown = await portal(t.app, operator, { method: 'GET', url: '/api/console/organizations/00000000-0000-4000-8000-000000000000/consent' });
    expect(unknown.statusCode).toBe(404);
  });
});
