import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalOrg } from '../helpers/portal.js';
import { client, expectStyleA } from '../respondents/fixtures.js';

/**
 * The portal's screening setting (GET/PUT /api/orgs/:orgId/screening-setting): every member reads
 * it, owners and admins change it (audited), other organizations and cross-site requests are
 * refused. And the monitored subjects' list (/api/orgs/:orgId/screenings/monitored).
 */
describe('the organization screening setting in the portal', () => {
  let t: TestContext;
  let setup: PortalOrg;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    setup = await portalOrg(t.database.db);
  });
  afterAll(() => t.close());

  const url = (orgId = setup.org.id) => `/api/orgs/${orgId}/screening-setting`;

  it('is off until an owner turns it on; the change is audited and a lookup of the setting shows it', async () => {
    const read = await portal(t.app, setup.owner, { method: 'GET', url: url() });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({ sessions: false, lookups: false, businesses: false });
    const put = await portal(t.app, setup.owner, { method: 'PUT', url: url(), payload: { sessions: true, lookups: false, businesses: true } });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({ sessions: true, lookups: false, businesses: true });
    expect((await portal(t.app, setup.owner, { method: 'GET', url: url() })).json()).toEqual({ sessions: true, lookups: false, businesses: true });
    // The same setting again changes nothing and writes no second audit entry; a body without
    // `businesses` (a client from before that switch) leaves it as it was.
    await portal(t.app, setup.owner, { method: 'PUT', url: url(), payload: { sessions: true, lookups: false } });
    expect((await portal(t.app, setup.owner, { method: 'GET', url: url() })).json()).toEqual({ sessions: true, lookups: false, businesses: true });
    const audits = await t.database.db.selectFrom('audit_events').select(['action', 'actor_id']).where('org_id', '=', setup.org.id).where('action', '=', 'organization.screening_changed').execute();
    expect(audits).toEqual([{ action: 'organization.screening_changed', actor_id: setup.owner.personId }]);
  });

  it('an admin changes it; a developer and a viewer read it and are refused a change', async () => {
    const admin = await portalUser(t.database.db);
    const developer = await portalUser(t.database.db);
    const viewer = await portalUser(t.database.db);
    await addMember(t.database.db, setup.org.id, admin.personId, 'admin');
    await addMember(t.database.db, setup.org.id, developer.personId, 'developer');
    await addMember(t.database.db, setup.org.id, viewer.personId, 'viewer');
    const set = await portal(t.app, admin, { method: 'PUT', url: url(), payload: { sessions: true, lookups: true, businesses: false } });
    expect(set.json()).toEqual({ sessions: true, lookups: true, businesses: false });
    for (const member of [developer, viewer]) {
      expect((await portal(t.app, member, { method: 'GET', url: url() })).json()).toEqual({ sessions: true, lookups: true, businesses: false });
      const refused = expectStyleA(await portal(t.app, member, { method: 'PUT', url: url(), payload: { sessions: false, lookups: false, businesses: true } }), 403, 'FORBIDDEN');
      expect(refused.message).toMatch(/ask an owner or admin/);
    }
    expect((await portal(t.app, setup.owner, { method: 'GET', url: url() })).json()).toEqual({ sessions: true, lookups: true, businesses: false });
  });

  it('bad bodies are 400s in style A', async () => {
    for (const payload of [{ sessions: true }, { sessions: 'yes', lookups: false }, { lookups: 'maybe' }, { sessions: true, lookups: true, businesses: 'yes' }]) {
      expectStyleA(await portal(t.app, setup.owner, { method: 'PUT', url: url(), payload }), 400, 'VALIDATION_ERROR');
    }
  });

  it('no session, another organization, a malformed id and a foreign Origin are refused', async () => {
    expectStyleA(await portal(t.app, undefined, { method: 'GET', url: url() }), 401, 'ACCESS_DENIED');
    expectStyleA(await portal(t.app, undefined, { method: 'PUT', url: url(), payload: { sessions: false, lookups: false } }), 401, 'ACCESS_DENIED');
    const stranger = await portalOrg(t.database.db);
    expectStyleA(await portal(t.app, stranger.owner, { method: 'GET', url: url() }), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await portal(t.app, stranger.owner, { method: 'PUT', url: url(), payload: { sessions: false, lookups: false } }), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await portal(t.app, setup.owner, { method: 'GET', url: url('not-an-id') }), 404, 'NOT_FOUND_ERROR');
    const before = (await portal(t.app, setup.owner, { method: 'GET', url: url() })).json();
    const foreign = await t.app.inject({
      method: 'PUT',
      url: url(),
      headers: { cookie: setup.owner.cookie, origin: 'https://evil.example', 'content-type': 'application/json' },
      payload: { sessions: !before.sessions, lookups: !before.lookups },
    });
    expectStyleA(foreign, 403, 'FORBIDDEN');
    const formPost = await t.app.inject({
      method: 'PUT',
      url: url(),
      headers: { cookie: setup.owner.cookie, origin: 'http://127.0.0.1:8080', 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'sessions=false&lookups=false',
    });
    expect(formPost.statusCode).toBeGreaterThanOrEqual(400);
    expect((await portal(t.app, setup.owner, { method: 'GET', url: url() })).json()).toEqual(before);
    // The stranger's own setting is untouched by all of this.
    expect((await portal(t.app, stranger.owner, { method: 'GET', url: url(stranger.org.id) })).json()).toEqual({ sessions: false, lookups: false, businesses: false });
  });
});

describe('monitored subjects in the portal', () => {
  let t: TestContext;
  let setup: PortalOrg;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    setup = await portalOrg(t.database.db);
  });
  afterAll(() => t.close());

  it('lists only monitored screenings of the mode, newest first; ended ones leave; scoped to the organization', async () => {
    const http = client(t.app);
    const screen = async (name: string, monitor: boolean) =>
      (await http.post('/v1/verifications/screenings', setup.org.testSecret, { subject: { type: 'person', name }, monitor })).json().data as { id: number; monitored: boolean };
    const first = await screen('Musa Adamu Karfe', true);
    await screen('Chinedu Okafor', false);
    const third = await screen('Folasade Adeyinka-Bright', true);
    expect([first.monitored, third.monitored]).toEqual([true, true]);
    const url = `/api/orgs/${setup.org.id}/screenings/monitored`;
    const listed = await portal(t.app, setup.owner, { method: 'GET', url });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toMatchObject({ total: 2, limit: 20, offset: 0 });
    expect(listed.json().data.map((row: { id: number }) => row.id)).toEqual([third.id, first.id]);
    expect((await portal(t.app, setup.owner, { method: 'GET', url: `${url}?mode=live` })).json()).toMatchObject({ total: 0, data: [] });

    expect((await http.del(`/v1/verifications/screenings/${first.id}`, setup.org.testSecret)).statusCode).toBe(200);
    expect((await portal(t.app, setup.owner, { method: 'GET', url })).json().data.map((row: { id: number }) => row.id)).toEqual([third.id]);

    const viewer = await portalUser(t.database.db);
    await addMember(t.database.db, setup.org.id, viewer.personId, 'viewer');
    expect((await portal(t.app, viewer, { method: 'GET', url })).json().total).toBe(1);
    const stranger = await portalOrg(t.database.db);
    expectStyleA(await portal(t.app, stranger.owner, { method: 'GET', url }), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await portal(t.app, undefined, { method: 'GET', url }), 401, 'ACCESS_DENIED');
    expectStyleA(await portal(t.app, setup.owner, { method: 'GET', url: `${url}?mode=both` }), 400, 'VALIDATION_ERROR');
    // The detail route still answers for a numeric id beside the static path.
    expect((await portal(t.app, setup.owner, { method: 'GET', url: `/api/orgs/${setup.org.id}/screenings/${third.id}` })).json().id).toBe(third.id);
  });
});
