import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visitDueAt } from '../../src/agents/due.js';
import { deactivateAgent } from '../../src/agents/service.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { fieldAgentUser, type FieldAgentUser } from '../helpers/field.js';
import { operatorUser, ORIGIN, portal, portalOrg, type PortalUser } from '../helpers/portal.js';
import { ADDRESS_BODY, BUSINESS_BODY, client, deliveriesOf, expectStyleA, multipartBody, VERIFIED, type FormFile } from '../agents/fixtures.js';
import { expectStoredPhoto, fakeJpeg, phonePhoto } from '../agents/photo-fixtures.js';

const ADDRESSES = '/v1/verifications/addresses';
const BUSINESSES = '/v1/verifications/businesses';
const IN_LAGOS = { latitude: 6.4474, longitude: 3.4723 };
const IN_KANO = { latitude: 12.0022, longitude: 8.592 };

/**
 * The field app's API (/api/field): only active field agents, signed in with their own account;
 * each sees and works only their own tasks; the nearest first; a report goes through the agent
 * API's checks and is filed once per Idempotency-Key.
 */
describe('the field app API', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let dataDir: string;
  let jpeg: Buffer;
  let street: Buffer;
  let org: Awaited<ReturnType<TestContext['org']>>;
  let ada: FieldAgentUser;
  let bayo: FieldAgentUser;
  let gone: FieldAgentUser;
  let customer: PortalUser;
  let operator: PortalUser;

  const get = (user: Pick<PortalUser, 'cookie'> | undefined, url: string) => portal(t.app, user, { method: 'GET', url });
  const start = (user: Pick<PortalUser, 'cookie'> | undefined, kind: string, id: number) =>
    portal(t.app, user, { method: 'POST', url: `/api/field/tasks/${kind}/${id}/start` });
  const report = (
    user: Pick<PortalUser, 'cookie'> | undefined,
    kind: string,
    id: number,
    fields: Record<string, string | number | boolean>,
    files: FormFile[],
    headers: Record<string, string> = {},
  ) => {
    const form = multipartBody(fields, files);
    return portal(t.app, user, { method: 'POST', url: `/api/field/tasks/${kind}/${id}/report`, headers: { ...form.headers, ...headers }, payload: form.payload });
  };
  const photo = (bytes = jpeg): FormFile => ({ filename: 'front.jpg', type: 'image/jpeg', bytes });
  const key = () => ({ 'idempotency-key': crypto.randomUUID() });
  const createAddress = async (body: object) => (await http.post(ADDRESSES, org.liveSecret, { ...ADDRESS_BODY, ...body })).json().data as { id: number; createdAt: string };
  const tasksOf = async (user: PortalUser, query = '') => {
    const res = await get(user, `/api/field/tasks${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { sortedBy: string; data: { kind: string; id: number; distanceKm: number | null; [key: string]: unknown }[] };
  };
  const completedDeliveries = async (id: number) =>
    (await deliveriesOf(t.database.db, org.id)).filter((d) => d.type === 'address.completed' && d.payload.data.id === id);

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-field-'));
    t = await buildTestContext({ config: { dataDir }, webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    jpeg = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#2a6' } }).jpeg().toBuffer();
    street = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#a26' } }).jpeg().toBuffer();
    org = await t.org({ riskLevel: 'LOW', fund: 100_000_000 });
    // Ada covers Kano and Lagos, Bayo Ogun: who gets a task is not left to the load balance.
    ada = await fieldAgentUser(t.app, t.database.db, { name: 'Ada Field', states: ['Kano', 'Lagos'] });
    bayo = await fieldAgentUser(t.app, t.database.db, { name: 'Bayo Field', states: ['Ogun'] });
    gone = await fieldAgentUser(t.app, t.database.db, { name: 'Gone Field', states: ['Oyo'] });
    await deactivateAgent(t.database.db, gone.agentId);
    customer = (await portalOrg(t.database.db)).owner;
    operator = await operatorUser(t.app, t.database.db);
  });
  afterAll(async () => {
    await t?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('lets in active field agents only: 401 without a session, 403 for customers, operators and deactivated agents', async () => {
    const me = await get(ada, '/api/field/me');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({ agentId: ada.agentId, name: 'Ada Field', email: ada.email, states: ['Kano', 'Lagos'] });
    const calls = [
      (user?: PortalUser) => get(user, '/api/field/me'),
      (user?: PortalUser) => get(user, '/api/field/tasks'),
      (user?: PortalUser) => start(user, 'address', 1),
      (user?: PortalUser) => report(user, 'address', 1, { outcome: 'verified', ...IN_LAGOS }, [photo()], key()),
    ];
    for (const call of calls) {
      expectStyleA(await call(undefined), 401, 'ACCESS_DENIED');
      for (const [who, user] of [['customer', customer], ['operator', operator], ['deactivated agent', gone]] as const) {
        const res = await call(user);
        expect(res.statusCode, `${who}: ${res.body}`).toBe(403);
        expectStyleA(res, 403, 'FORBIDDEN');
      }
    }
    expect((await get(customer, '/api/field/me')).json().message).toMatch(/not an agent's/);
    expect((await get(gone, '/api/field/me')).json().message).toMatch(/deactivated/);
    // The agent's account is not a customer's or an operator's either.
    expect((await get(ada, '/api/console/access-requests')).statusCode).toBe(403);
    // The portal sends an active agent to the field app; nobody else.
    expect((await get(ada, '/api/me')).json().person.fieldAgent).toBe(true);
    for (const user of [customer, operator, gone]) expect((await get(user, '/api/me')).json().person.fieldAgent).toBe(false);
  });

  it("lists only the agent's own open tasks, with a maps link, what to capture and the due time", async () => {
    const lagos = await createAddress({ reference: 'field-lagos', landmark: 'Opposite the mosque' });
    const ogun = await createAddress({ reference: 'field-ogun', state: 'Ogun', lga: 'Ifo' });
    const shop = (await http.post(BUSINESSES, org.liveSecret, { ...BUSINESS_BODY, reference: 'field-shop' })).json().data;
    const mine = await tasksOf(ada);
    expect(mine.sortedBy).toBe('due');
    expect(mine.data.map((task) => task.id)).toEqual(expect.arrayContaining([lagos.id, shop.id]));
    expect(mine.data.map((task) => `${task.kind}/${task.id}`)).not.toContain(`address/${ogun.id}`);
    expect((await tasksOf(bayo)).data.map((task) => `${task.kind}/${task.id}`)).toEqual([`address/${ogun.id}`]);

    const task = mine.data.find((item) => item.kind === 'address' && item.id === lagos.id)!;
    expect(task).toMatchObject({
      reference: 'field-lagos',
      place: { street: '12 Admiralty Way', landmark: 'Opposite the mosque', lga: 'Eti-Osa', state: 'Lagos' },
      contact: { name: 'Adaeze Okonkwo' },
      dueAt: visitDueAt(new Date(lagos.createdAt)).toISOString(),
      overdue: false,
      distanceKm: null,
      visitStartedAt: '',
    });
    expect(task.mapsUrl).toBe(`https://www.google.com/maps/search/?api=1&query=${encodeURIComponent('12 Admiralty Way, Eti-Osa, Lagos, Nigeria')}`);
    expect(task.capture).toMatchObject({ photos: { min: 1, max: 10 }, findings: ['neighborName', 'neighborComment', 'neighborPhone'] });
    expect((task.capture as { failReasons: string[] }).failReasons[0]).toBe('address not found');
    const business = mine.data.find((item) => item.kind === 'business' && item.id === shop.id)!;
    expect((business.capture as { findings: string[] }).findings).toEqual(expect.arrayContaining(['isBusinessKnown', 'businessNameFound', 'businessArea']));
    expect(business.mapsUrl).toContain(encodeURIComponent('Mama Put Ventures, 4 Broad Street'));
    // Each list showed the applicants to the agent: the access log has a row per task, no personal data.
    const logged = await t.database.db
      .selectFrom('personal_data_access_records')
      .select(['org_id', 'mode', 'actor_kind', 'actor_id', 'channel', 'action', 'resource', 'resource_id'])
      .where('actor_id', '=', bayo.agentId)
      .execute();
    expect(logged).toEqual([
      { org_id: org.id, mode: 'live', actor_kind: 'agent', actor_id: bayo.agentId, channel: 'field', action: 'list', resource: 'address', resource_id: String(ogun.id) },
    ]);
    const adaSaw = await t.database.db.selectFrom('personal_data_access_records').select(['resource', 'resource_id']).where('actor_id', '=', ada.agentId).execute();
    expect(adaSaw).toEqual(expect.arrayContaining([{ resource: 'address', resource_id: String(lagos.id) }, { resource: 'business', resource_id: String(shop.id) }]));

    // Another agent's task cannot be started or reported: it is not found among yours.
    expectStyleA(await start(ada, 'address', ogun.id), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await report(ada, 'address', ogun.id, { outcome: 'verified', ...IN_LAGOS }, [photo()], key()), 404, 'NOT_FOUND_ERROR');
    expect((await http.get(`${ADDRESSES}/${ogun.id}`, org.liveSecret)).json().data.status.status).toBe('In Progress');
    for (const [kind, id] of [['addresses', lagos.id], ['addresses', ogun.id], ['businesses', shop.id]] as const) await http.del(`/v1/verifications/${kind}/${id}`, org.liveSecret);
  });

  it('puts the nearest first when the phone shares its position, else the soonest due', async () => {
    const kano = await createAddress({ reference: 'near-kano', state: 'Kano', lga: 'Nasarawa' });
    const lagos = await createAddress({ reference: 'near-lagos' });
    const ids = (list: { data: { id: number }[] }) => list.data.map((task) => task.id).filter((id) => id === kano.id || id === lagos.id);
    // Due: Kano was made first.
    expect(ids(await tasksOf(ada))).toEqual([kano.id, lagos.id]);
    const fromLagos = await tasksOf(ada, `?latitude=${IN_LAGOS.latitude}&longitude=${IN_LAGOS.longitude}`);
    expect(fromLagos.sortedBy).toBe('distance');
    expect(ids(fromLagos)).toEqual([lagos.id, kano.id]);
    const near = fromLagos.data.find((task) => task.id === lagos.id)!.distanceKm!;
    const far = fromLagos.data.find((task) => task.id === kano.id)!.distanceKm!;
    expect(near).toBeLessThan(60);
    expect(far).toBeGreaterThan(600);
    expect(ids(await tasksOf(ada, `?latitude=${IN_KANO.latitude}&longitude=${IN_KANO.longitude}`))).toEqual([kano.id, lagos.id]);
    const half = await get(ada, '/api/field/tasks?latitude=6.4');
    expect(expectStyleA(half, 400, 'VALIDATION_ERROR').message).toMatch(/latitude and longitude together/);
    expectStyleA(await get(ada, '/api/field/tasks?latitude=95&longitude=3'), 400, 'VALIDATION_ERROR');
    for (const id of [kano.id, lagos.id]) await http.del(`${ADDRESSES}/${id}`, org.liveSecret);
  });

  it('starts a visit once', async () => {
    const created = await createAddress({ reference: 'field-start' });
    expect((await start(ada, 'address', created.id)).json()).toEqual({ ok: true });
    expect((await tasksOf(ada)).data.find((task) => task.id === created.id)!.visitStartedAt).not.toBe('');
    expectStyleA(await start(ada, 'address', created.id), 409, 'CONFLICT');
    await http.del(`${ADDRESSES}/${created.id}`, org.liveSecret);
  });

  it('files a report once per Idempotency-Key: the same key answers the first outcome, another report under it is 422', async () => {
    const created = await createAddress({ reference: 'field-once' });
    const headers = key();
    const fields = { outcome: 'verified', ...IN_LAGOS, neighborName: 'Iya Basira', neighborPhone: '0803 111 2222' };
    const filesBefore = (await t.database.db.selectFrom('uploaded_files').select('id').execute()).length;
    // Two photos (the building and its street): one alone would hold a verified address for review.
    const photos = [photo(), photo(street)];
    const first = await report(ada, 'address', created.id, fields, photos, headers);
    expect(first.statusCode, first.body).toBe(200);
    const answer = first.json();
    expect(answer).toMatchObject({ ok: true, kind: 'address', id: created.id, outcome: 'verified', reason: null, flaggedForReview: false, reviewReason: null, heldForReview: false });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const record = (await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data;
    expect(record).toMatchObject({ status: VERIFIED, lattitude: '6.4474', neighbor: { name: 'Iya Basira', phone: '+2348031112222' } });
    expect(await completedDeliveries(created.id)).toHaveLength(1);

    // The phone did not hear the answer and sends it again: the same answer, nothing filed twice.
    const again = await report(ada, 'address', created.id, fields, photos, headers);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual(answer);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await completedDeliveries(created.id)).toHaveLength(1);
    expect((await t.database.db.selectFrom('uploaded_files').select('id').execute()).length).toBe(filesBefore + 2);
    expect((await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data).toEqual(record);

    // The same key with another report (a field, a photo, or another task) is refused.
    expect(expectStyleA(await report(ada, 'address', created.id, { ...fields, neighborName: 'Someone else' }, photos, headers), 422, 'UNPROCESSABLE').message).toMatch(/different report/);
    expectStyleA(await report(ada, 'address', created.id, fields, [photo(), photo(jpeg)], headers), 422, 'UNPROCESSABLE');
    expectStyleA(await report(ada, 'address', created.id, fields, [photo()], headers), 422, 'UNPROCESSABLE');
    expectStyleA(await report(ada, 'address', created.id + 1, fields, photos, headers), 422, 'UNPROCESSABLE');
    // A key is the agent's own: Bayo's same key is a new report (of a task that is not his).
    expectStyleA(await report(bayo, 'address', created.id, fields, photos, headers), 404, 'NOT_FOUND_ERROR');
    // A new key for the filed task: the task is closed.
    expectStyleA(await report(ada, 'address', created.id, fields, photos, key()), 404, 'NOT_FOUND_ERROR');
    expect(await completedDeliveries(created.id)).toHaveLength(1);
  });

  it('files one report when the same key arrives twice at once', async () => {
    const created = await createAddress({ reference: 'field-race' });
    const headers = key();
    const fields = { outcome: 'failed', reason: 'address not found', ...IN_LAGOS };
    const [a, b] = await Promise.all([report(ada, 'address', created.id, fields, [photo()], headers), report(ada, 'address', created.id, fields, [photo()], headers)]);
    expect([a.statusCode, b.statusCode], `${a.body} ${b.body}`).toEqual([200, 200]);
    expect(a.json()).toEqual(b.json());
    expect(a.json()).toMatchObject({ outcome: 'failed', reason: 'address not found' });
    expect(await completedDeliveries(created.id)).toHaveLength(1);
    const rows = await t.database.db.selectFrom('field_report_keys').selectAll().where('verification_id', '=', created.id).execute();
    expect(rows).toHaveLength(1);
  });

  it("checks a report as the agent API does, and flags a position far from the place's state", async () => {
    const created = await createAddress({ reference: 'field-checks' });
    const ok = { outcome: 'verified', ...IN_LAGOS };
    const cases: [Record<string, string | number>, FormFile[], RegExp][] = [
      [ok, [], /at least one photo/],
      [ok, [{ ...photo(), bytes: Buffer.from('not an image') }], /not a JPEG, PNG or WebP/],
      [ok, [photo(fakeJpeg()), photo(fakeJpeg())], /could not be decoded as an image/],
      [{ ...ok, latitude: 91 }, [photo()], /latitude/],
      [{ outcome: 'verified', latitude: 6.4 }, [photo()], /longitude is required/],
      [{ ...ok, outcome: 'failed', reason: 'it rained' }, [photo()], /reason must be one of address not found/],
      [{ ...ok, neighborPhone: '123' }, [photo()], /neighborPhone/],
    ];
    for (const [fields, files, pattern] of cases) {
      const error = expectStyleA(await report(ada, 'address', created.id, fields, files, key()), 400, 'VALIDATION_ERROR');
      expect(error.message, JSON.stringify(fields)).toMatch(pattern);
    }
    // No key: refused before anything is filed.
    expect(expectStyleA(await report(ada, 'address', created.id, ok, [photo()]), 400, 'BAD_REQUEST').message).toMatch(/Idempotency-Key/);
    expectStyleA(await report(ada, 'address', created.id, ok, [photo()], { 'idempotency-key': 'has spaces in it' }), 400, 'BAD_REQUEST');
    expect((await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data.status.status).toBe('In Progress');

    // Filed from Kano for a Lagos address: accepted, flagged and held for an operator; the customer hears nothing yet.
    const flagged = await report(ada, 'address', created.id, { outcome: 'verified', ...IN_KANO }, [photo(), photo(street)], key());
    expect(flagged.statusCode, flagged.body).toBe(200);
    expect(flagged.json()).toMatchObject({ outcome: 'verified', flaggedForReview: true, reviewReason: expect.stringMatching(/outside Lagos/), heldForReview: true });
    expect((await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data.status.status).toBe('In Progress');
    expect(await completedDeliveries(created.id)).toHaveLength(0);
    expect((await tasksOf(ada)).data.map((task) => task.id)).not.toContain(created.id);
  });

  it("stores a report's photos re-encoded, without the phone's EXIF, as the agent API does", async () => {
    const created = await createAddress({ reference: 'field-exif' });
    const filed = await report(ada, 'address', created.id, { outcome: 'failed', reason: 'address not found', ...IN_LAGOS }, [photo(await phonePhoto())], key());
    expect(filed.statusCode, filed.body).toBe(200);
    const [url] = (await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data.photos as string[];
    const link = new URL(url!);
    const download = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
    expect(download.headers['content-type']).toBe('image/jpeg');
    await expectStoredPhoto(download.rawPayload, { width: 20, height: 40 });
  });

  it('takes a multipart report only from the app itself (Origin), and JSON everywhere else', async () => {
    const created = await createAddress({ reference: 'field-csrf' });
    const form = multipartBody({ outcome: 'verified', ...IN_LAGOS }, [photo()]);
    const url = `/api/field/tasks/address/${created.id}/report`;
    for (const origin of [undefined, 'https://evil.example']) {
      const headers: Record<string, string> = { ...form.headers, ...key(), cookie: ada.cookie };
      if (origin) headers.origin = origin;
      const res = await t.app.inject({ method: 'POST', url, headers, payload: form.payload });
      expectStyleA(res, 403, 'FORBIDDEN');
    }
    // Multipart is for the report only; the report only takes multipart.
    expectStyleA(await portal(t.app, ada, { method: 'POST', url: `/api/field/tasks/address/${created.id}/start`, headers: form.headers, payload: form.payload }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectStyleA(await portal(t.app, ada, { method: 'POST', url: '/api/auth/sign-out', headers: form.headers, payload: form.payload }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectStyleA(await portal(t.app, ada, { method: 'POST', url, headers: key(), payload: { outcome: 'verified', ...IN_LAGOS } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect((await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data.status.status).toBe('In Progress');
    expect(ORIGIN).toBe('http://127.0.0.1:8080');
    await http.del(`${ADDRESSES}/${created.id}`, org.liveSecret);
  });
});
