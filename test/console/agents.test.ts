import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { listMail } from '../../src/portal/mail.js';
import { SESSION_COOKIE } from '../../src/portal/sessions.js';
import { ADDRESS_BODY, deliveriesOf, IN_PROGRESS, multipartBody, VERIFIED, type FormFile } from '../agents/fixtures.js';
import { bearer, buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';

const ADDRESSES = '/v1/verifications/addresses';
// Kano: hundreds of km from any of the southern states used here.
const KANO = { latitude: 12.0022, longitude: 8.592 };
const IBADAN = { latitude: 7.3775, longitude: 3.947 };

let ctx: TestContext;
let dataDir: string;
let operator: PortalUser;
let jpeg: Buffer;
let org: Awaited<ReturnType<TestContext['org']>>;
let counter = 0;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-console-agents-'));
  ctx = await buildTestContext({ config: { dataDir }, webhookUrl: NOWHERE_WEBHOOK_URL });
  operator = await operatorUser(ctx.app, ctx.database.db);
  jpeg = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#36c' } }).jpeg().toBuffer();
  org = await ctx.org({ riskLevel: 'LOW', fund: 100_000_000 });
});
afterAll(async () => {
  await ctx.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

const get = (url: string, user: Pick<PortalUser, 'cookie'> | undefined = operator) => portal(ctx.app, user, { method: 'GET', url });
const post = (url: string, payload?: object, user: PortalUser | undefined = operator) =>
  portal(ctx.app, user, { method: 'POST', url, ...(payload ? { payload } : {}) });
const put = (url: string, payload: object, user: PortalUser | undefined = operator) => portal(ctx.app, user, { method: 'PUT', url, payload });

const newAgent = (overrides: Record<string, unknown> = {}) => {
  const n = ++counter;
  return post('/api/console/agents', { name: `Agent ${n}`, email: `agent${n}@field.example`, phone: '0803 123 4567', states: ['Lagos'], ...overrides });
};
/** An agent with an API credential (as `vouch agent create` makes), to file reports through /v1/agent. */
const apiAgent = async (states: string[]) => {
  const n = ++counter;
  const created = await createAgent(ctx.database.db, { name: `Api Agent ${n}`, email: `api${n}@field.example`, phone: '08031230000', states });
  return { id: created.agent.id, credential: created.credential, name: created.agent.name };
};
const taskOf = (kind: 'address' | 'business', id: number) =>
  ctx.database.db.selectFrom('field_tasks').selectAll().where('kind', '=', kind).where('verification_id', '=', id).executeTakeFirstOrThrow();
const createAddress = async (body: object = {}) => {
  const res = await ctx.app.inject({ method: 'POST', url: ADDRESSES, headers: bearer(org.liveSecret), payload: { ...ADDRESS_BODY, ...body } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: number; reference: string };
};
const photo = (filename = 'front.jpg'): FormFile => ({ filename, type: 'image/jpeg', bytes: jpeg });
const fileReport = (id: number, credential: string, fields: Record<string, string | number>, files: FormFile[] = [photo(), photo('street.jpg')]) => {
  const form = multipartBody(fields, files);
  return ctx.app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${id}/report`, headers: { ...bearer(credential), ...form.headers }, payload: form.payload });
};
const agentTasks = async (credential: string) =>
  (await ctx.app.inject({ method: 'GET', url: '/v1/agent/tasks', headers: bearer(credential) })).json().data as { id: number; reviewNote?: string }[];
const record = async (id: number) => (await ctx.app.inject({ method: 'GET', url: `${ADDRESSES}/${id}`, headers: bearer(org.liveSecret) })).json().data;
const completedHooks = async (id: number) => (await deliveriesOf(ctx.database.db, org.id)).filter((d) => d.type === 'address.completed' && d.payload.data.id === id);
const auditOf = (action: string) => ctx.database.db.selectFrom('audit_events').selectAll().where('action', '=', action).orderBy('id').execute();
const completedVisitsOf = async (agentId: string) =>
  ((await get('/api/console/agents')).json().data as { id: string; completedVisits: number }[]).find((agent) => agent.id === agentId)!.completedVisits;
const openPhoto = (url: string) => ctx.app.inject({ method: 'GET', url: new URL(url).pathname + new URL(url).search });

describe('who may call', () => {
  it('answers 401 without a session and 403 to a customer, on every field-agent and review route', async () => {
    const { owner } = await portalOrg(ctx.database.db);
    const id = '00000000-0000-4000-8000-000000000000';
    const routes: [string, string, object?][] = [
      ['GET', '/api/console/agents'],
      ['POST', '/api/console/agents', { name: 'X', email: 'x@field.example', phone: '08031234567', states: ['Lagos'] }],
      ['GET', `/api/console/agents/${id}`],
      ['PUT', `/api/console/agents/${id}/coverage`, { states: ['Lagos'] }],
      ['POST', `/api/console/agents/${id}/invite`],
      ['POST', `/api/console/agents/${id}/deactivate`],
      ['GET', '/api/console/field-tasks?unassigned=true'],
      ['POST', '/api/console/field-tasks/address/1/assign', { agentId: id }],
      ['GET', '/api/console/reviews'],
      ['POST', '/api/console/reviews/address/1/approve'],
      ['POST', '/api/console/reviews/address/1/send-back', { note: 'again' }],
      ['POST', '/api/console/reviews/address/1/reassign', { agentId: id }],
    ];
    for (const [method, url, payload] of routes) {
      const anonymous = await portal(ctx.app, undefined, { method: method as 'GET', url, ...(payload ? { payload } : {}) });
      expect(anonymous.statusCode, `${method} ${url}`).toBe(401);
      const customer = await portal(ctx.app, owner, { method: method as 'GET', url, ...(payload ? { payload } : {}) });
      expect(customer.statusCode, `${method} ${url}`).toBe(403);
      expect(customer.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    }
    // Nothing was made by the refused calls.
    expect(await ctx.database.db.selectFrom('field_agents').select('id').where('email', '=', 'x@field.example').execute()).toEqual([]);
  });
});

describe('agents', () => {
  it('refuses bad input with a clear 400, a taken address with 409, and makes nothing', async () => {
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ states: ['Atlantis'] }, 400, /"Atlantis" is not a Nigerian state/],
      [{ states: [] }, 400, /at least one state/],
      [{ lgas: ['Lagos/Kano Municipal'] }, 400, /"Kano Municipal" is not a local government area of Lagos/],
      [{ lgas: ['Eti-Osa'] }, 400, /must be "State\/LGA"/],
      [{ lgas: ['Narnia/Eti-Osa'] }, 400, /"Narnia" is not a Nigerian state/],
      [{ phone: '123' }, 400, /not a valid Nigerian phone number/],
      [{ email: 'nope' }, 400, /not an email address/],
      [{ name: '' }, 400, /name/],
    ];
    for (const [overrides, status, message] of cases) {
      const res = await newAgent(overrides);
      expect(res.statusCode, JSON.stringify(overrides)).toBe(status);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
    }
    const first = await newAgent({ email: 'twice@field.example' });
    expect(first.statusCode).toBe(201);
    const again = await newAgent({ email: 'TWICE@field.example' });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toMatch(/already exists/);
    // An address that is already a customer's account: refused whole (no agent without an account).
    const { owner } = await portalOrg(ctx.database.db);
    const taken = await newAgent({ email: owner.email });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().message).toMatch(/already has an account/);
    expect(await ctx.database.db.selectFrom('field_agents').select('id').where('email', '=', owner.email).execute()).toEqual([]);
  });

  it('creates an agent with an account invitation: mailed, shown once, good once; the list shows the account', async () => {
    const res = await newAgent({ name: 'Ngozi Field', email: 'ngozi@field.example', states: ['lagos', 'Ogun'], lgas: ['lagos/eti osa'] });
    expect(res.statusCode, res.body).toBe(201);
    const { agent, invitation } = res.json();
    expect(agent).toMatchObject({
      name: 'Ngozi Field', email: 'ngozi@field.example', phone: '+2348031234567', states: ['Lagos', 'Ogun'], lgas: ['Lagos/Eti-Osa'],
      active: true, openTasks: 0, completedVisits: 0, account: 'invited', inviteExpiresAt: invitation.linkExpiresAt,
    });
    expect(agent).not.toHaveProperty('credentialHint');
    expect(invitation.signInLink).toMatch(/^http:\/\/127\.0\.0\.1:8080\/reset-password\?token=[A-Za-z0-9_-]{43}&next=%2Ffield$/);
    const [mail] = await listMail(ctx.database.db, { to: 'ngozi@field.example' });
    expect(mail).toMatchObject({ kind: 'agent_invitation', subject: 'Your Vouch field app account' });
    expect(mail!.text).toContain(invitation.signInLink);
    const audit = (await auditOf('agent.created')).find((row) => row.target === 'ngozi@field.example');
    expect(audit).toMatchObject({ actor_kind: 'operator', actor_id: operator.personId, org_id: null });

    // The link sets the password once; then the agent signs in and the account shows as active.
    const token = new URL(invitation.signInLink).searchParams.get('token')!;
    const set = (password: string) => portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token, password } });
    expect((await set('field agent password 1')).statusCode).toBe(200);
    expect((await set('field agent password 2')).statusCode).toBe(400);
    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: 'ngozi@field.example', password: 'field agent password 1' } });
    expect(signIn.statusCode, signIn.body).toBe(200);
    const listed = (await get('/api/console/agents')).json().data.find((row: { id: string }) => row.id === agent.id);
    expect(listed).toMatchObject({ account: 'active', inviteExpiresAt: null });

    // A new link: the earlier ones stop working.
    const second = await post(`/api/console/agents/${agent.id}/invite`);
    expect(second.statusCode).toBe(200);
    const third = (await post(`/api/console/agents/${agent.id}/invite`)).json();
    const secondToken = new URL(second.json().signInLink).searchParams.get('token')!;
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token: secondToken, password: 'field agent password 3' } })).statusCode).toBe(400);
    const thirdToken = new URL(third.signInLink).searchParams.get('token')!;
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token: thirdToken, password: 'field agent password 4' } })).statusCode).toBe(200);
    expect(await listMail(ctx.database.db, { to: 'ngozi@field.example' })).toHaveLength(3);
    expect((await auditOf('agent.invited')).filter((row) => row.target === 'ngozi@field.example')).toHaveLength(2);
    expect((await post('/api/console/agents/00000000-0000-4000-8000-000000000000/invite')).statusCode).toBe(404);
    expect((await get('/api/console/agents/not-an-id')).statusCode).toBe(404);
  });

  it('sets coverage (validated, audited) and assigns by LGA first, then whole state, then load', async () => {
    const whole = (await newAgent({ name: 'Whole Enugu', states: ['Enugu'] })).json().agent;
    const local = (await newAgent({ name: 'Nsukka Local', states: ['Kwara'] })).json().agent;
    const bad = await put(`/api/console/agents/${local.id}/coverage`, { states: ['Enugu'], lgas: ['Enugu/Ikeja'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/"Ikeja" is not a local government area of Enugu/);
    const set = await put(`/api/console/agents/${local.id}/coverage`, { states: [], lgas: ['enugu/nsukka', 'Enugu/Udi'] });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ states: ['Enugu'], lgas: ['Enugu/Nsukka', 'Enugu/Udi'] });
    expect((await auditOf('agent.coverage_changed')).at(-1)).toMatchObject({
      actor_id: operator.personId,
      before: { states: ['Kwara'], lgas: [] },
      after: { states: ['Enugu'], lgas: ['Enugu/Nsukka', 'Enugu/Udi'] },
    });

    // Nsukka: the agent who lists it gets both, although the whole-state agent has fewer tasks.
    const n1 = await createAddress({ state: 'Enugu', lga: 'Nsukka' });
    const n2 = await createAddress({ state: 'Enugu', lga: 'Nsukka' });
    expect((await taskOf('address', n1.id)).agent_id).toBe(local.id);
    expect((await taskOf('address', n2.id)).agent_id).toBe(local.id);
    expect((await taskOf('address', n1.id)).lga).toBe('Nsukka');
    // Enugu North: the LGA-limited agent does not cover it; the whole-state agent does.
    const north = await createAddress({ state: 'Enugu', lga: 'Enugu North' });
    expect((await taskOf('address', north.id)).agent_id).toBe(whole.id);

    const detail = (await get(`/api/console/agents/${local.id}`)).json();
    expect(detail.agent).toMatchObject({ openTasks: 2 });
    expect(detail.openTasks.map((task: { id: number }) => task.id)).toEqual([n1.id, n2.id]);
    expect(detail.openTasks[0]).toMatchObject({ kind: 'address', reference: n1.reference, orgName: org.name, place: { lga: 'Nsukka', state: 'Enugu' }, inReview: false, reviewNote: null });
  });

  it('shows the unassigned queue and gives a task to an agent, audited', async () => {
    const borno = await createAddress({ state: 'Borno', lga: 'Maiduguri' });
    const queue = (await get('/api/console/field-tasks?unassigned=true')).json().data as { id: number; agentId: string | null }[];
    expect(queue.find((task) => task.id === borno.id)).toMatchObject({ agentId: null });
    const agent = (await newAgent({ name: 'Travelling Agent', states: ['Yobe'] })).json().agent;
    expect((await post(`/api/console/field-tasks/address/${borno.id}/assign`, { agentId: '00000000-0000-4000-8000-000000000000' })).statusCode).toBe(404);
    expect((await post(`/api/console/field-tasks/address/999999999/assign`, { agentId: agent.id })).statusCode).toBe(404);
    const assigned = await post(`/api/console/field-tasks/address/${borno.id}/assign`, { agentId: agent.id });
    expect(assigned.statusCode, assigned.body).toBe(200);
    expect(assigned.json()).toMatchObject({ id: borno.id, agentId: agent.id, agentName: 'Travelling Agent' });
    expect(((await get('/api/console/field-tasks?unassigned=true')).json().data as { id: number }[]).map((task) => task.id)).not.toContain(borno.id);
    expect((await auditOf('field_task.assigned')).at(-1)).toMatchObject({ org_id: org.id, actor_id: operator.personId, before: { agentId: null }, after: { agentId: agent.id } });
  });

  it('deactivates an agent: their sessions end at once, their open tasks move, audited', async () => {
    const leaving = (await newAgent({ name: 'Leaving Agent', email: 'leaving@field.example', states: ['Ekiti'] })).json();
    const token = new URL(leaving.invitation.signInLink).searchParams.get('token')!;
    await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token, password: 'leaving agent password' } });
    const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: 'leaving@field.example', password: 'leaving agent password' } });
    const session = { cookie: `${SESSION_COOKIE}=${signIn.cookies.find((c) => c.name === SESSION_COOKIE)!.value}` };
    expect((await get('/api/me', session)).statusCode).toBe(200);
    const task = await createAddress({ state: 'Ekiti', lga: 'Ado Ekiti' });
    expect((await taskOf('address', task.id)).agent_id).toBe(leaving.agent.id);
    const staying = (await newAgent({ name: 'Staying Agent', states: ['Ekiti'] })).json().agent;

    const res = await post(`/api/console/agents/${leaving.agent.id}/deactivate`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ agent: { active: false, openTasks: 0 }, moved: [{ kind: 'address', id: task.id, agentId: staying.id }] });
    expect((await get('/api/me', session)).statusCode).toBe(401);
    expect((await taskOf('address', task.id)).agent_id).toBe(staying.id);
    expect((await auditOf('agent.deactivated')).at(-1)).toMatchObject({
      actor_kind: 'operator', actor_id: operator.personId, target: 'leaving@field.example',
      after: { active: false, moved: [{ kind: 'address', id: task.id, agentId: staying.id }] },
    });
    expect((await post(`/api/console/agents/${leaving.agent.id}/deactivate`)).statusCode).toBe(409);
    // No new invitation for a deactivated agent, and nothing to assign them.
    expect((await post(`/api/console/agents/${leaving.agent.id}/invite`)).statusCode).toBe(409);
    expect((await post(`/api/console/field-tasks/address/${task.id}/assign`, { agentId: leaving.agent.id })).statusCode).toBe(409);
  });
});

describe('the review queue', () => {
  let ada: Awaited<ReturnType<typeof apiAgent>>;
  let bola: Awaited<ReturnType<typeof apiAgent>>;
  const OYO = { state: 'Oyo', lga: 'Ibadan North' };

  beforeAll(async () => {
    ada = await apiAgent(['Oyo']);
    bola = await apiAgent(['Osun']);
  });

  /** A live Oyo address whose report Ada files from Kano: held for review. */
  async function heldVisit() {
    const created = await createAddress(OYO);
    expect((await taskOf('address', created.id)).agent_id).toBe(ada.id);
    const res = await fileReport(created.id, ada.credential, { outcome: 'verified', ...KANO, neighborName: 'Mama Tunde' });
    expect(res.statusCode, res.body).toBe(200);
    return created;
  }

  it('holds a GPS-far report: no webhook, the verification open, listed with its evidence', async () => {
    const created = await heldVisit();
    expect(await record(created.id)).toMatchObject({ status: IN_PROGRESS, flaggedForReview: false, photos: [] });
    expect(await completedHooks(created.id)).toEqual([]);
    const queue = (await get('/api/console/reviews')).json().data as Record<string, any>[];
    const entry = queue.find((row) => row.id === created.id)!;
    expect(entry).toMatchObject({
      kind: 'address', reference: created.reference, orgId: org.id, orgName: org.name, mode: 'live',
      place: { state: 'Oyo', lga: 'Ibadan North' },
      agent: { id: ada.id, name: ada.name, active: true },
      reasons: [expect.stringMatching(/^GPS position is about \d+ km outside Oyo$/)],
      late: false,
      report: { outcome: 'verified', latitude: KANO.latitude, longitude: KANO.longitude, neighbor: { name: 'Mama Tunde' } },
    });
    expect(entry.report.kmOutsideState).toBeGreaterThan(50);
    expect(entry.visitStartedAt).not.toBe('');
    expect(entry.report.photos).toHaveLength(2);
    const opened = await openPhoto(entry.report.photos[0]);
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['content-type']).toBe('image/jpeg');
    // The operator saw the report and its neighbour: the access log names them.
    const logged = await ctx.database.db
      .selectFrom('personal_data_access_records')
      .select(['org_id', 'mode', 'actor_kind', 'actor_id', 'channel', 'action'])
      .where('resource', '=', 'address')
      .where('resource_id', '=', String(created.id))
      .where('channel', '=', 'console')
      .execute();
    expect(logged[0]).toEqual({ org_id: org.id, mode: 'live', actor_kind: 'operator', actor_id: operator.personId, channel: 'console', action: 'list' });
  });

  it('approve completes the verification with the report and sends the webhook once, still flagged', async () => {
    const created = await heldVisit();
    const done = await completedVisitsOf(ada.id);
    const approved = await post(`/api/console/reviews/address/${created.id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    const completed = await record(created.id);
    expect(completed).toMatchObject({ status: VERIFIED, flaggedForReview: true, lattitude: String(KANO.latitude), neighbor: { name: 'Mama Tunde' } });
    expect(completed.reviewReason).toMatch(/^GPS position is about \d+ km outside Oyo$/);
    expect(completed.photos).toHaveLength(2);
    expect((await openPhoto(completed.photos[0])).statusCode).toBe(200);
    expect(await completedHooks(created.id)).toHaveLength(1);
    expect((await completedHooks(created.id))[0]!.payload.data).toMatchObject({ flaggedForReview: true, status: VERIFIED });
    expect(await completedVisitsOf(ada.id)).toBe(done + 1);
    // Decided: out of the queue; a second approval finds nothing to approve and sends nothing.
    expect(((await get('/api/console/reviews')).json().data as { id: number }[]).map((row) => row.id)).not.toContain(created.id);
    expect((await post(`/api/console/reviews/address/${created.id}/approve`)).statusCode).toBe(404);
    expect(await completedHooks(created.id)).toHaveLength(1);
    expect((await auditOf('field_visit.approved')).at(-1)).toMatchObject({
      org_id: org.id, actor_kind: 'operator', actor_id: operator.personId, target: `address ${created.reference}`,
      before: { agentId: ada.id }, after: { outcome: 'verified', flaggedForReview: true },
    });
    // Ada's page lists it among her completed visits, flagged.
    const detail = (await get(`/api/console/agents/${ada.id}`)).json();
    expect(detail.completedVisits.find((visit: { id: number }) => visit.id === created.id)).toMatchObject({ outcome: 'verified', flaggedForReview: true, orgName: org.name });
  });

  it('send back discards the report and its photos; the same agent sees the note and files again', async () => {
    const created = await heldVisit();
    const held = (await taskOf('address', created.id)).held_report!;
    expect((await post(`/api/console/reviews/address/${created.id}/send-back`, { note: '  ' })).statusCode).toBe(400);
    expect((await post(`/api/console/reviews/address/${created.id}/send-back`, {})).statusCode).toBe(400);
    for (const id of held.photoIds) await fs.access(path.join(dataDir, 'files', id.slice(0, 2), id));
    const photoLinks = ((await get('/api/console/reviews')).json().data as { id: number; report: { photos: string[] } }[]).find((row) => row.id === created.id)!.report.photos;
    const sent = await post(`/api/console/reviews/address/${created.id}/send-back`, { note: 'The GPS was off: go again and wait for a fix before submitting' });
    expect(sent.statusCode, sent.body).toBe(200);
    // The photos are gone from the store and the records.
    for (const link of photoLinks) expect((await openPhoto(link)).statusCode).toBe(404);
    expect(await ctx.database.db.selectFrom('uploaded_files').select('id').where('id', 'in', held.photoIds).execute()).toEqual([]);
    for (const id of held.photoIds) await expect(fs.access(path.join(dataDir, 'files', id.slice(0, 2), id))).rejects.toThrow();
    // Back on Ada's list with the note; still open for the customer, no webhook.
    expect((await agentTasks(ada.credential)).find((task) => task.id === created.id)).toMatchObject({ reviewNote: 'The GPS was off: go again and wait for a fix before submitting' });
    expect(await record(created.id)).toMatchObject({ status: IN_PROGRESS });
    expect(await completedHooks(created.id)).toEqual([]);
    expect((await auditOf('field_visit.sent_back')).at(-1)).toMatchObject({ actor_id: operator.personId, after: { agentId: ada.id, note: 'The GPS was off: go again and wait for a fix before submitting' } });
    expect((await post(`/api/console/reviews/address/${created.id}/send-back`, { note: 'twice' })).statusCode).toBe(409);
    // A clean report now completes at once.
    expect((await fileReport(created.id, ada.credential, { outcome: 'verified', ...IBADAN })).statusCode).toBe(200);
    expect(await record(created.id)).toMatchObject({ status: VERIFIED, flaggedForReview: false, reviewReason: '' });
    expect(await completedHooks(created.id)).toHaveLength(1);
  });

  it('reassign discards the report and gives the visit to another agent, with the note', async () => {
    const created = await heldVisit();
    const held = (await taskOf('address', created.id)).held_report!;
    expect((await post(`/api/console/reviews/address/${created.id}/reassign`, { agentId: '00000000-0000-4000-8000-000000000000' })).statusCode).toBe(400);
    const moved = await post(`/api/console/reviews/address/${created.id}/reassign`, { agentId: bola.id, note: 'Ada could not reach it' });
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await taskOf('address', created.id))).toMatchObject({ agent_id: bola.id, held_report: null, held_at: null, review_note: 'Ada could not reach it' });
    expect(await ctx.database.db.selectFrom('uploaded_files').select('id').where('id', 'in', held.photoIds).execute()).toEqual([]);
    expect((await agentTasks(bola.credential)).find((task) => task.id === created.id)).toMatchObject({ reviewNote: 'Ada could not reach it' });
    expect((await agentTasks(ada.credential)).map((task) => task.id)).not.toContain(created.id);
    expect((await auditOf('field_visit.reassigned')).at(-1)).toMatchObject({ actor_id: operator.personId, before: { agentId: ada.id }, after: { agentId: bola.id } });
    expect(await completedHooks(created.id)).toEqual([]);
  });

  it('holds a late report, and one with a single photo, with their reasons', async () => {
    const late = await createAddress(OYO);
    // Made four days ago: due three days after.
    await sql`update field_tasks set created_at = now() - interval '96 hours' where kind = 'address' and verification_id = ${late.id}`.execute(ctx.database.db);
    expect((await fileReport(late.id, ada.credential, { outcome: 'verified', ...IBADAN })).statusCode).toBe(200);
    const single = await createAddress(OYO);
    expect((await fileReport(single.id, ada.credential, { outcome: 'verified', ...IBADAN }, [photo()])).statusCode).toBe(200);
    const queue = (await get('/api/console/reviews')).json().data as { id: number; reasons: string[]; late: boolean }[];
    expect(queue.find((row) => row.id === late.id)).toMatchObject({ late: true, reasons: [expect.stringMatching(/^Filed (2[3-5]) hours after the visit was due$/)] });
    expect(queue.find((row) => row.id === single.id)).toMatchObject({ late: false, reasons: ['Only 1 photo for a verified address (at least 2: the building and its street or landmark)'] });
    expect(await completedHooks(late.id)).toEqual([]);

    // Lateness is judged once: a late visit sent back (or reassigned) and filed again completes.
    expect((await post(`/api/console/reviews/address/${late.id}/send-back`, { note: 'Photograph the gate too' })).statusCode).toBe(200);
    expect((await fileReport(late.id, ada.credential, { outcome: 'verified', ...IBADAN })).statusCode).toBe(200);
    expect(await record(late.id)).toMatchObject({ status: VERIFIED, flaggedForReview: false });
    expect(await completedHooks(late.id)).toHaveLength(1);
    expect((await post(`/api/console/reviews/address/${single.id}/reassign`, { agentId: bola.id })).statusCode).toBe(200);
    expect((await taskOf('address', single.id)).review_note).toBe('');
    expect((await agentTasks(bola.credential)).find((task) => task.id === single.id)).not.toHaveProperty('reviewNote');
  });

  it('a customer cancelling a held visit takes it out of the queue', async () => {
    const created = await heldVisit();
    const done = await completedVisitsOf(ada.id);
    const cancelled = await ctx.app.inject({ method: 'DELETE', url: `${ADDRESSES}/${created.id}`, headers: bearer(org.liveSecret) });
    expect(cancelled.statusCode).toBe(200);
    expect(((await get('/api/console/reviews')).json().data as { id: number }[]).map((row) => row.id)).not.toContain(created.id);
    expect((await post(`/api/console/reviews/address/${created.id}/approve`)).statusCode).toBe(404);
    // Not a visit Ada completed.
    expect(await completedVisitsOf(ada.id)).toBe(done);
    expect((await taskOf('address', created.id)).outcome).toBe('cancelled');
  });
});
