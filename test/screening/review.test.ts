import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalOrg } from '../helpers/portal.js';
import { client, expectStyleA } from '../respondents/fixtures.js';

const BASE = '/v1/verifications/screenings';
/** Two sandbox hits: the sanctioned person by name, the PEP by alias. */
const TWO_HITS = { subject: { type: 'person', name: 'Musa Adamu Karfe', aliases: ['Folasade Adeyinka-Bright'] } };

describe('screening review in the portal', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let owner: PortalOrg;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    owner = await portalOrg(t.database.db);
  });
  afterAll(() => t.close());

  const screen = async (body: object = TWO_HITS, secret = owner.org.testSecret) => (await http.post(BASE, secret, body)).json().data;
  const review = (screeningId: number, hitId: number, payload: object, who = owner.owner, mode = 'test', orgId = owner.org.id) =>
    portal(t.app, who, { method: 'POST', url: `/api/orgs/${orgId}/screenings/${screeningId}/hits/${hitId}/review?mode=${mode}`, payload });

  it('false positives need a note; all hits cleared makes the screening CLEARED; each review is audited', async () => {
    const created = await screen();
    expect(created.hits.map((hit: { entityId: string }) => hit.entityId).sort()).toEqual(['SBX-P-001', 'SBX-P-002']);
    const [first, second] = created.hits;
    expectStyleA(await review(created.id, first.id, { decision: 'false_positive' }), 400, 'VALIDATION_ERROR');
    expectStyleA(await review(created.id, first.id, { decision: 'maybe', note: 'x' }), 400, 'VALIDATION_ERROR');
    const one = await review(created.id, first.id, { decision: 'false_positive', note: 'Different date of birth on the passport seen' });
    expect(one.statusCode).toBe(200);
    expect(one.json().status.status).toBe('PENDING_REVIEW');
    const reviewed = one.json().hits.find((hit: { id: number }) => hit.id === first.id);
    expect(reviewed.review).toEqual({ decision: 'false_positive', note: 'Different date of birth on the passport seen', by: owner.owner.email, at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/) });
    const two = (await review(created.id, second.id, { decision: 'false_positive', note: 'Not the same person' })).json();
    expect(two.status).toEqual({ status: 'CLEARED', subStatus: 'FALSE_POSITIVE', state: 'COMPLETE' });
    // The API shows the same record.
    expect((await http.get(`${BASE}/${created.id}`, owner.org.testSecret)).json().data).toEqual(two);
    const audits = await t.database.db.selectFrom('audit_events').select(['action', 'target', 'actor_id', 'after']).where('org_id', '=', owner.org.id).where('action', '=', 'screening.hit_reviewed').orderBy('id').execute();
    expect(audits).toHaveLength(2);
    expect(audits[0]).toMatchObject({ actor_id: owner.owner.personId, target: `test screening ${created.id} hit ${first.id} (sandbox ${first.entityId})` });
    expect(JSON.stringify(audits)).not.toContain('Musa');
  });

  it('a true match is final (409 on a second review) and makes the screening CONFIRMED_MATCH', async () => {
    const created = await screen({ subject: { type: 'person', name: 'Musa Adamu Karfe' } });
    const [hit] = created.hits;
    const confirmed = (await review(created.id, hit.id, { decision: 'true_match', note: 'Same passport number' })).json();
    expect(confirmed.status).toEqual({ status: 'CONFIRMED_MATCH', subStatus: 'TRUE_MATCH', state: 'COMPLETE' });
    expectStyleA(await review(created.id, hit.id, { decision: 'false_positive', note: 'changed my mind' }), 409, 'CONFLICT');
    expectStyleA(await review(created.id, 999_999, { decision: 'true_match' }), 404, 'NOT_FOUND_ERROR');
  });

  it('scope: another organization, the other mode, a viewer, no session and no Origin are refused', async () => {
    const created = await screen();
    const hit = created.hits[0];
    const stranger = await portalOrg(t.database.db);
    expectStyleA(await review(created.id, hit.id, { decision: 'true_match' }, stranger.owner), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await review(created.id, hit.id, { decision: 'true_match' }, stranger.owner, 'test', stranger.org.id), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await review(created.id, hit.id, { decision: 'true_match' }, owner.owner, 'live'), 404, 'NOT_FOUND_ERROR');
    const viewer = await portalUser(t.database.db);
    await addMember(t.database.db, owner.org.id, viewer.personId, 'viewer');
    expectStyleA(await review(created.id, hit.id, { decision: 'true_match' }, viewer), 403, 'FORBIDDEN');
    expectStyleA(await portal(t.app, undefined, { method: 'POST', url: `/api/orgs/${owner.org.id}/screenings/${created.id}/hits/${hit.id}/review`, payload: { decision: 'true_match' } }), 401, 'ACCESS_DENIED');
    const foreign = await t.app.inject({
      method: 'POST',
      url: `/api/orgs/${owner.org.id}/screenings/${created.id}/hits/${hit.id}/review`,
      headers: { cookie: owner.owner.cookie, origin: 'https://evil.example', 'content-type': 'application/json' },
      payload: { decision: 'true_match' },
    });
    expectStyleA(foreign, 403, 'FORBIDDEN');
    // The viewer reads the list and the detail.
    expect((await portal(t.app, viewer, { method: 'GET', url: `/api/orgs/${owner.org.id}/screenings/${created.id}` })).json().id).toBe(created.id);
    expect(created.hits[0].review).toBeUndefined();
  });

  it('lists by status, newest first, and 400s an unknown status', async () => {
    const { org, owner: member } = await portalOrg(t.database.db);
    const clear = (await http.post(BASE, org.testSecret, { subject: { type: 'person', name: 'Sandbox Clear Person' } })).json().data;
    const pending = (await http.post(BASE, org.testSecret, TWO_HITS)).json().data;
    const list = (query: string) => portal(t.app, member, { method: 'GET', url: `/api/orgs/${org.id}/screenings${query}` });
    const all = (await list('')).json();
    expect(all).toMatchObject({ total: 2, limit: 20, offset: 0 });
    expect(all.data.map((s: { id: number }) => s.id)).toEqual([pending.id, clear.id]);
    expect((await list('?status=clear')).json().data.map((s: { id: number }) => s.id)).toEqual([clear.id]);
    expect((await list('?status=pending_review')).json()).toMatchObject({ total: 1, data: [{ id: pending.id }] });
    expect((await list('?mode=live')).json().total).toBe(0);
    expectStyleA(await list('?status=maybe'), 400, 'VALIDATION_ERROR');
  });

  it('exports confirmed matches as CSV for the NFIU report, within the dates asked', async () => {
    const { org, owner: member } = await portalOrg(t.database.db);
    const created = (await http.post(BASE, org.testSecret, TWO_HITS)).json().data;
    const [confirmed, cleared] = created.hits;
    await review(created.id, confirmed.id, { decision: 'true_match', note: 'Same date of birth, "same" address' }, member, 'test', org.id);
    await review(created.id, cleared.id, { decision: 'false_positive', note: 'No' }, member, 'test', org.id);
    const csv = (query = '') => portal(t.app, member, { method: 'GET', url: `/api/orgs/${org.id}/screenings/export.csv${query}` });
    const res = await csv();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('screening_id,reference,subject_type,subject_name,subject_dob,subject_nationality,entity_id,entity_name,matched_name,topics,programs,list,list_version,score,reviewed_by,reviewed_at,review_note,screened_at');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`${created.id},${created.reference},person,Musa Adamu Karfe,`);
    expect(lines[1]).toContain(`,${confirmed.entityId},`);
    expect(lines[1]).toContain(`,sandbox,1,${confirmed.score.toFixed(3)},${member.email},`);
    expect(lines[1]).toContain('"Same date of birth, ""same"" address"');
    const today = new Date().toISOString().slice(0, 10);
    expect((await csv(`?from=${today}&to=${today}`)).body.trimEnd().split('\r\n')).toHaveLength(2);
    expect((await csv('?to=2000-01-01')).body.trimEnd().split('\r\n')).toHaveLength(1);
    expect((await csv('?mode=live')).body.trimEnd().split('\r\n')).toHaveLength(1);
    expectStyleA(await csv('?from=yesterday'), 400, 'VALIDATION_ERROR');
    const logged = await t.database.db.selectFrom('personal_data_access').select(['resource', 'action']).where('org_id', '=', org.id).where('action', '=', 'export').execute();
    // One row per export (four answered above), none for the refused one.
    expect(logged).toEqual(Array.from({ length: 4 }, () => ({ resource: 'screening', action: 'export' })));
  });
});
