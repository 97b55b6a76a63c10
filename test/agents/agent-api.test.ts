import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_BILLABLES } from '../../src/addresses/service.js';
import { GUARANTOR_BILLABLES } from '../../src/guarantors/service.js';
import { createAgent, deactivateAgent, rotateAgentCredential } from '../../src/agents/service.js';
import { PHOTO_MAX_SIDE, reencodePhoto } from '../../src/files/photos.js';
import { MAX_PHOTOS } from '../../src/files/service.js';
import { bearer, buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { GUARANTOR_BODY } from '../respondents/fixtures.js';
import { ADDRESS_BODY, balanceOf, BUSINESS_BODY, client, deliveriesOf, expectStyleA, IN_PROGRESS, ISO, multipartBody, VERIFIED, type FormFile } from '../agents/fixtures.js';
import { claimingSize, expectStoredPhoto, fakeJpeg, phonePhoto, pixelAt } from '../agents/photo-fixtures.js';

const ADDRESSES = '/v1/verifications/addresses';
const BUSINESSES = '/v1/verifications/businesses';
// Lekki, Lagos.
const LEKKI = { latitude: 6.4474, longitude: 3.4723 };

/** A webhook body carries the record as GET returns it; its photo links are the same files, signed to outlast the retries. */
function expectSameRecord(sent: Record<string, unknown>, read: Record<string, unknown>) {
  const strip = (record: Record<string, unknown>) => ({ ...record, photos: undefined, businessPhotos: undefined });
  expect(strip(sent)).toEqual(strip(read));
  for (const key of ['photos', 'businessPhotos'] as const) {
    if (!(key in read)) continue;
    const paths = (urls: unknown) => (urls as string[]).map((url) => new URL(url).pathname);
    expect(paths(sent[key])).toEqual(paths(read[key]));
    const expiries = (urls: unknown) => (urls as string[]).map((url) => Number(new URL(url).searchParams.get('expires')));
    for (const [index, expires] of expiries(sent[key]).entries()) expect(expires).toBeGreaterThan(expiries(read[key])[index]!);
  }
}

describe('field agents: assignment and the agent API', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let dataDir: string;
  let jpeg: Buffer;
  let png: Buffer;
  let org: Awaited<ReturnType<TestContext['org']>>;
  let ada: { id: string; credential: string };
  let bayo: { id: string; credential: string };
  let emeka: { id: string; credential: string };

  const agentGet = (url: string, credential: string) => t.app.inject({ method: 'GET', url, headers: bearer(credential) });
  const agentPost = (url: string, credential: string, form?: ReturnType<typeof multipartBody>) =>
    t.app.inject({ method: 'POST', url, headers: { ...bearer(credential), ...form?.headers }, payload: form?.payload });
  const photo = (bytes: Buffer, filename = 'front.jpg', type = 'image/jpeg'): FormFile => ({ filename, type, bytes });
  const report = (kind: string, id: number, credential: string, fields: Record<string, string | number | boolean>, files: FormFile[]) =>
    agentPost(`/v1/agent/tasks/${kind}/${id}/report`, credential, multipartBody(fields, files));

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-agents-'));
    t = await buildTestContext({ config: { dataDir }, webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    jpeg = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#c33' } }).jpeg().toBuffer();
    png = await sharp({ create: { width: 8, height: 8, channels: 4, background: '#3c3c' } }).png().toBuffer();
    org = await t.org({ riskLevel: 'LOW', fund: 100_000_000 });
    const make = async (name: string, states: string[]) => {
      const created = await createAgent(t.database.db, { name, email: `${name.toLowerCase()}@agents.example`, phone: '08031230000', states });
      return { id: created.agent.id, credential: created.credential };
    };
    ada = await make('Ada', ['Lagos']);
    bayo = await make('Bayo', ['lagos', 'Ogun']);
    emeka = await make('Emeka', ['Kano']);
    await deactivateAgent(t.database.db, emeka.id);
  });
  afterAll(async () => {
    await t.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const tasksOf = async (credential: string) => {
    const res = await agentGet('/v1/agent/tasks', credential);
    expect(res.statusCode).toBe(200);
    return res.json().data as { kind: string; id: number; [key: string]: unknown }[];
  };
  const taskRow = (kind: string, id: number) =>
    t.database.db.selectFrom('field_tasks').selectAll().where('kind', '=', kind as 'address').where('verification_id', '=', id).executeTakeFirst();

  describe('assignment', () => {
    it('assigns live verifications to the least-loaded active agent covering the state, or leaves them unassigned', async () => {
      const other = await t.org({ riskLevel: 'LOW', fund: 100_000_000 });
      const created: number[] = [];
      for (let i = 0; i < 4; i++) created.push((await http.post(ADDRESSES, other.liveSecret, ADDRESS_BODY)).json().data.id);
      const owners = await Promise.all(created.map(async (id) => (await taskRow('address', id))!.agent_id));
      // Both start with nothing: the older agent first, then whoever has fewer.
      expect(owners).toEqual([ada.id, bayo.id, ada.id, bayo.id]);
      const ogun = (await http.post(ADDRESSES, other.liveSecret, { ...ADDRESS_BODY, state: 'Ogun', lga: 'Ifo' })).json().data;
      expect((await taskRow('address', ogun.id))!.agent_id).toBe(bayo.id);
      // Emeka covers Kano but is deactivated.
      const kano = (await http.post(BUSINESSES, other.liveSecret, { ...BUSINESS_BODY, state: 'Kano', lga: 'Nasarawa' })).json().data;
      expect(await taskRow('business', kano.id)).toMatchObject({ agent_id: null, state: 'Kano', closed_at: null });
      // Test mode sends nobody out.
      const sandbox = (await http.post(ADDRESSES, other.testSecret, ADDRESS_BODY)).json().data;
      expect(await taskRow('address', sandbox.id)).toBeUndefined();
      // Cancelling closes the task.
      for (const id of created) await http.del(`${ADDRESSES}/${id}`, other.liveSecret);
      await http.del(`${ADDRESSES}/${ogun.id}`, other.liveSecret);
      await http.del(`${BUSINESSES}/${kano.id}`, other.liveSecret);
      expect((await taskRow('address', created[0]!))!.closed_at).toBeInstanceOf(Date);
      expect(await tasksOf(ada.credential)).toEqual([]);
    });
  });

  describe('authentication', () => {
    it('takes only an active agent credential: customer secrets, rotated and deactivated credentials are 401 style A', async () => {
      expect((await agentGet('/v1/agent/me', ada.credential)).json().data).toMatchObject({ id: ada.id, name: 'Ada', states: ['Lagos'], active: true });
      for (const headers of [{}, bearer(org.testSecret), bearer(org.liveSecret), bearer('ak_short'), bearer(emeka.credential)]) {
        for (const url of ['/v1/agent/me', '/v1/agent/tasks']) {
          expectStyleA(await t.app.inject({ method: 'GET', url, headers }), 401, 'ACCESS_DENIED');
        }
        expectStyleA(await t.app.inject({ method: 'POST', url: '/v1/agent/tasks/address/1/report', headers }), 401, 'ACCESS_DENIED');
      }
      const temp = await createAgent(t.database.db, { name: 'Temp', email: 'temp@agents.example', phone: '08031230001', states: ['Oyo'] });
      const rotated = await rotateAgentCredential(t.database.db, temp.agent.id);
      expectStyleA(await agentGet('/v1/agent/me', temp.credential), 401, 'ACCESS_DENIED');
      expect((await agentGet('/v1/agent/me', rotated.credential)).statusCode).toBe(200);
    });

    it('refuses an agent credential on the customer API', async () => {
      for (const [method, url] of [['GET', ADDRESSES], ['POST', ADDRESSES], ['GET', `${BUSINESSES}/1`]] as const) {
        expectStyleA(await t.app.inject({ method, url, headers: bearer(ada.credential), payload: method === 'POST' ? ADDRESS_BODY : undefined }), 401, 'ACCESS_DENIED');
      }
    });
  });

  describe('tasks and visit reports', () => {
    it("lists the agent's open tasks with what the visit needs", async () => {
      const address = (await http.post(ADDRESSES, org.liveSecret, {
        ...ADDRESS_BODY, reference: 'task-list-a', landmark: 'By the filling station',
        applicant: { ...ADDRESS_BODY.applicant, middlename: 'Chi', phone: '08099990000' },
      })).json().data;
      const hidden = (await http.post(BUSINESSES, org.liveSecret, { ...BUSINESS_BODY, reference: 'task-list-b', canContactPoc: 'false' })).json().data;
      const tasks = [...(await tasksOf(ada.credential)), ...(await tasksOf(bayo.credential))];
      expect(tasks.find((task) => task.id === address.id && task.kind === 'address')).toEqual({
        kind: 'address',
        id: address.id,
        reference: 'task-list-a',
        assignedAt: expect.stringMatching(ISO),
        visitStartedAt: '',
        place: { street: '12 Admiralty Way', city: '', landmark: 'By the filling station', lga: 'Eti-Osa', state: 'Lagos', country: 'Nigeria' },
        contact: { name: 'Adaeze Chi Okonkwo', phone: '+2348099990000' },
      });
      expect(tasks.find((task) => task.id === hidden.id && task.kind === 'business')).toMatchObject({
        business: { name: 'Mama Put Ventures', type: 'Informal', rcNumber: '' },
        contact: { name: 'Chidi Eze', phone: '' },
      });
      // The agent API showed these applicants to an agent: the access log says who, with no personal data.
      const logged = await t.database.db
        .selectFrom('personal_data_access_records')
        .select(['actor_kind', 'actor_id', 'channel', 'action', 'resource_id'])
        .where('resource', '=', 'address')
        .where('resource_id', '=', String(address.id))
        .execute();
      expect(logged).toEqual([{ actor_kind: 'agent', actor_id: expect.stringMatching(/^[0-9a-f-]{36}$/), channel: 'api', action: 'list', resource_id: String(address.id) }]);
      expect([ada.id, bayo.id]).toContain(logged[0]!.actor_id);
      for (const [kind, id] of [['address', address.id], ['business', hidden.id]] as const) await http.del(`/v1/verifications/${kind === 'address' ? 'addresses' : 'businesses'}/${id}`, org.liveSecret);
    });

    it('completes an address from a report: position, photos, neighbour, completedAt, webhook', async () => {
      const created = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
      const owner = (await taskRow('address', created.id))!.agent_id === ada.id ? ada : bayo;
      expect((await tasksOf(owner.credential)).map((task) => task.id)).toContain(created.id);
      const res = await report('address', created.id, owner.credential, {
        outcome: 'verified', latitude: LEKKI.latitude, longitude: LEKKI.longitude,
        neighbourName: 'Mr Bayo', neighborComment: 'She has lived here for years', neighborPhone: '0803 111 2222',
      }, [photo(jpeg), photo(png, 'gate.png', 'image/png')]);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ status: 'success', data: 'ok' });
      const record = (await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data;
      expect(record).toMatchObject({
        status: VERIFIED,
        lattitude: '6.4474',
        longitude: '3.4723',
        neighbor: { name: 'Mr Bayo', comment: 'She has lived here for years', phone: '+2348031112222' },
        flaggedForReview: false,
        reviewReason: '',
      });
      expect(record.completedAt).toMatch(ISO);
      expect(record.photos).toHaveLength(2);
      for (const url of record.photos) expect(url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/v1\/files\/[0-9a-f-]{36}\?expires=\d+&signature=[0-9a-f]{64}$/);
      const first = new URL(record.photos[0]);
      const download = await t.app.inject({ method: 'GET', url: `${first.pathname}${first.search}` });
      expect(download.statusCode).toBe(200);
      expect(download.headers['content-type']).toBe('image/jpeg');
      const reencoded = (await reencodePhoto(jpeg)).bytes;
      expect(download.rawPayload.equals(reencoded)).toBe(true);
      // The bytes live under the data folder, encrypted (docs/data-protection.md).
      const id = first.pathname.split('/').pop()!;
      const stored = await fs.readFile(path.join(dataDir, 'files', id.slice(0, 2), id));
      expect(stored.subarray(0, 4).toString('latin1')).toBe('VXF1');
      expect(stored.includes(reencoded.subarray(0, 64))).toBe(false);
      const deliveries = await deliveriesOf(t.database.db, org.id);
      const completed = deliveries.filter((d) => d.type === 'address.completed').at(-1)!;
      expectSameRecord(completed.payload.data, record);
      // The task is closed: no second report.
      expect((await tasksOf(owner.credential)).map((task) => task.id)).not.toContain(created.id);
      expectStyleA(await report('address', created.id, owner.credential, { outcome: 'verified', latitude: 6.4, longitude: 3.4 }, [photo(jpeg)]), 404, 'NOT_FOUND_ERROR');
    });

    it('stores each photo re-encoded as a JPEG: no EXIF (GPS, serial number, capture time), upright, at most 2,048 px', async () => {
      const created = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
      const owner = (await taskRow('address', created.id))!.agent_id === ada.id ? ada : bayo;
      const wide = await sharp({ create: { width: 3000, height: 1000, channels: 3, background: '#6a3' } }).jpeg().toBuffer();
      const res = await report('address', created.id, owner.credential, { outcome: 'verified', ...LEKKI }, [
        photo(await phonePhoto(), 'phone.jpg'),
        photo(wide, 'wide.jpg'),
        photo(png, 'gate.png', 'image/png'),
      ]);
      expect(res.statusCode, res.body).toBe(200);
      const record = (await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data;
      expect(record.status).toEqual(VERIFIED);
      const served: Buffer[] = [];
      for (const url of record.photos as string[]) {
        const link = new URL(url);
        const download = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
        expect(download.statusCode).toBe(200);
        expect(download.headers['content-type']).toBe('image/jpeg');
        served.push(download.rawPayload);
        // The file's record describes the bytes stored, not the ones uploaded.
        const row = await t.database.db.selectFrom('uploaded_files').selectAll().where('id', '=', link.pathname.split('/').pop()!).executeTakeFirstOrThrow();
        expect(row).toMatchObject({ content_type: 'image/jpeg', size: download.rawPayload.length, sha256: createHash('sha256').update(download.rawPayload).digest('hex') });
      }
      // The phone's photo: turned upright by its orientation (red on top), and nothing of its EXIF.
      await expectStoredPhoto(served[0]!, { width: 20, height: 40 });
      const [top, bottom] = [await pixelAt(served[0]!, 10, 5), await pixelAt(served[0]!, 10, 34)];
      expect(top[0]).toBeGreaterThan(180);
      expect(top[2]).toBeLessThan(70);
      expect(bottom[2]).toBeGreaterThan(180);
      expect(bottom[0]).toBeLessThan(70);
      // A large photo is scaled down to 2,048 px on its longest side; a PNG is stored as a JPEG.
      await expectStoredPhoto(served[1]!, { width: PHOTO_MAX_SIDE, height: 683 });
      await expectStoredPhoto(served[2]!, { width: 8, height: 8 });
    });

    it('completes a business from a report with the business findings and a failed outcome', async () => {
      const created = (await http.post(BUSINESSES, org.liveSecret, BUSINESS_BODY)).json().data;
      const owner = (await taskRow('business', created.id))!.agent_id === ada.id ? ada : bayo;
      const res = await report('business', created.id, owner.credential, {
        outcome: 'failed', reason: 'business name mismatch', latitude: 6.455, longitude: 3.39,
        isBusinessKnown: 'true', isBusinessOwnerKnown: false, ownerVisitsFrequently: 'false', isCorrectBusinessName: 'false',
        businessNameFound: 'Mama Cass Kitchen', businessArea: 'commercial',
      }, [photo(jpeg)]);
      expect(res.statusCode, res.body).toBe(200);
      const record = (await http.get(`${BUSINESSES}/${created.id}`, org.liveSecret)).json().data;
      expect(record).toMatchObject({
        status: { status: 'Not Verified', subStatus: 'business name mismatch', state: 'complete' },
        business: { name: 'Mama Put Ventures', isBusinessKnown: true, isBusinessOwnerKnown: false, ownerVisitsFrequently: false },
        isCorrectBusinessName: false,
        businessNameFound: 'Mama Cass Kitchen',
        businessArea: 'commercial',
        lattitude: '6.455',
      });
      expect(record.businessPhotos).toHaveLength(1);
      expect(record.photos).toEqual(record.businessPhotos);
      const completed = (await deliveriesOf(t.database.db, org.id)).filter((d) => d.type === 'business.completed').at(-1)!;
      expectSameRecord(completed.payload.data, record);
    });

    it('accepts a report far from the state but holds it for review: the verification stays open, no webhook', async () => {
      const created = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
      const owner = (await taskRow('address', created.id))!.agent_id === ada.id ? ada : bayo;
      const hooksBefore = (await deliveriesOf(t.database.db, org.id)).length;
      // Kano, for a Lagos address.
      const res = await report('address', created.id, owner.credential, { outcome: 'verified', latitude: 12.0022, longitude: 8.592 }, [photo(jpeg), photo(png, 'gate.png', 'image/png')]);
      expect(res.statusCode).toBe(200);
      const record = (await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data;
      // Held: the visit counts as started, the record is not completed, the customer hears nothing yet.
      expect(record).toMatchObject({ status: IN_PROGRESS, flaggedForReview: false, completedAt: '', photos: [] });
      expect((await deliveriesOf(t.database.db, org.id)).length).toBe(hooksBefore);
      const task = await taskRow('address', created.id);
      expect(task).toMatchObject({ closed_at: null, agent_id: owner.id });
      expect(task!.held_report!.reviewReason).toMatch(/^GPS position is about \d+ km outside Lagos$/);
      expect(task!.held_report!.photoIds).toHaveLength(2);
      // Off the agent's list, and a second report is refused until the operator decides (test/console/agents.test.ts).
      expect((await tasksOf(owner.credential)).map((t) => t.id)).not.toContain(created.id);
      expectStyleA(await report('address', created.id, owner.credential, { outcome: 'verified', latitude: 6.45, longitude: 3.47 }, [photo(jpeg), photo(jpeg)]), 404, 'NOT_FOUND_ERROR');
    });

    it('holds a verified address with a single photo for review, but not a failed one', async () => {
      const one = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
      const owner = (await taskRow('address', one.id))!.agent_id === ada.id ? ada : bayo;
      expect((await report('address', one.id, owner.credential, { outcome: 'verified', ...LEKKI }, [photo(jpeg)])).statusCode).toBe(200);
      expect((await http.get(`${ADDRESSES}/${one.id}`, org.liveSecret)).json().data.status).toEqual(IN_PROGRESS);
      expect((await taskRow('address', one.id))!.held_report!.reviewReason).toBe('Only 1 photo for a verified address (at least 2: the building and its street or landmark)');
      const failed = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
      const owner2 = (await taskRow('address', failed.id))!.agent_id === ada.id ? ada : bayo;
      expect((await report('address', failed.id, owner2.credential, { outcome: 'failed', ...LEKKI }, [photo(jpeg)])).statusCode).toBe(200);
      expect((await http.get(`${ADDRESSES}/${failed.id}`, org.liveSecret)).json().data).toMatchObject({ status: { status: 'Not Verified' }, flaggedForReview: false });
    });

    it('does not refund a cancellation after the visit started', async () => {
      const created = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
      const owner = (await taskRow('address', created.id))!.agent_id === ada.id ? ada : bayo;
      const start = await agentPost(`/v1/agent/tasks/address/${created.id}/start`, owner.credential);
      expect(start.json()).toEqual({ status: 'success', data: 'ok' });
      const started = (await tasksOf(owner.credential)).find((task) => task.id === created.id)!;
      expect(started.visitStartedAt).toMatch(ISO);
      expect((await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data.status).toEqual(IN_PROGRESS);
      expectStyleA(await agentPost(`/v1/agent/tasks/address/${created.id}/start`, owner.credential), 409, 'CONFLICT');
      const before = await balanceOf(t.database.db, org.id);
      expect((await http.del(`${ADDRESSES}/${created.id}`, org.liveSecret)).statusCode).toBe(200);
      expect(await balanceOf(t.database.db, org.id)).toBe(before);
      // The agent's task is gone, and a late report is refused.
      expect((await tasksOf(owner.credential)).map((task) => task.id)).not.toContain(created.id);
      expectStyleA(await report('address', created.id, owner.credential, { outcome: 'verified', latitude: 6.4, longitude: 3.4 }, [photo(jpeg)]), 404, 'NOT_FOUND_ERROR');
      // Whereas a cancellation before the visit is refunded.
      const early = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
      const charged = await balanceOf(t.database.db, org.id);
      await http.del(`${ADDRESSES}/${early.id}`, org.liveSecret);
      expect(await balanceOf(t.database.db, org.id)).toBe(charged + ADDRESS_BILLABLES.address.defaultPrice);
    });

    it('does not refund a guarantor cancelled after the agent started the visit to its address, whose report stays readable', async () => {
      const guarantor = (await http.post('/v1/verifications/guarantors', org.liveSecret, { ...GUARANTOR_BODY, verifyAddress: true })).json().data;
      const addressId = guarantor.addressVerificationId as number;
      const owner = (await taskRow('address', addressId))!.agent_id === ada.id ? ada : bayo;
      expect((await agentPost(`/v1/agent/tasks/address/${addressId}/start`, owner.credential)).statusCode).toBe(200);
      expect((await report('address', addressId, owner.credential, { outcome: 'verified', ...LEKKI }, [photo(jpeg), photo(png, 'street.png', 'image/png')])).statusCode).toBe(200);
      const before = await balanceOf(t.database.db, org.id);
      expect((await http.del(`/v1/verifications/guarantors/${guarantor.id}`, org.liveSecret)).statusCode).toBe(200);
      expect(await balanceOf(t.database.db, org.id)).toBe(before);
      expect((await http.get(`${ADDRESSES}/${addressId}`, org.liveSecret)).json().data.status).toEqual(VERIFIED);

      // Started but not reported: not refunded either, and the visit is called off.
      const started = (await http.post('/v1/verifications/guarantors', org.liveSecret, { ...GUARANTOR_BODY, verifyAddress: true })).json().data;
      const startedOwner = (await taskRow('address', started.addressVerificationId))!.agent_id === ada.id ? ada : bayo;
      expect((await agentPost(`/v1/agent/tasks/address/${started.addressVerificationId}/start`, startedOwner.credential)).statusCode).toBe(200);
      const charged = await balanceOf(t.database.db, org.id);
      expect((await http.del(`/v1/verifications/guarantors/${started.id}`, org.liveSecret)).statusCode).toBe(200);
      expect(await balanceOf(t.database.db, org.id)).toBe(charged);
      expect((await http.get(`${ADDRESSES}/${started.addressVerificationId}`, org.liveSecret)).json().data.status.status).toBe('Cancelled');

      // Before any visit, the whole price comes back.
      const early = (await http.post('/v1/verifications/guarantors', org.liveSecret, { ...GUARANTOR_BODY, verifyAddress: true })).json().data;
      const paid = await balanceOf(t.database.db, org.id);
      expect((await http.del(`/v1/verifications/guarantors/${early.id}`, org.liveSecret)).statusCode).toBe(200);
      expect(await balanceOf(t.database.db, org.id)).toBe(paid + GUARANTOR_BILLABLES.guarantor.defaultPrice);
    });

    it('refuses bad reports: no photo, not an image, too many, not multipart, bad fields, not my task', async () => {
      const created = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
      const owner = (await taskRow('address', created.id))!.agent_id === ada.id ? ada : bayo;
      const stranger = owner === ada ? bayo : ada;
      const ok = { outcome: 'verified', latitude: 6.45, longitude: 3.47 };
      const cases: [Record<string, string | number>, FormFile[], number, RegExp][] = [
        [ok, [], 400, /at least one photo/],
        [ok, [photo(Buffer.from('not an image at all'), 'x.jpg')], 400, /not a JPEG, PNG or WebP/],
        // JPEG's first bytes and an EXIF block, no image: two of them are not the two photos a verified address needs.
        [ok, [photo(fakeJpeg(), 'front.jpg'), photo(fakeJpeg(), 'street.jpg')], 400, /Photo "front.jpg" could not be decoded as an image/],
        [ok, [photo(jpeg), photo(claimingSize(jpeg, 20_000, 20_000), 'bomb.jpg')], 400, /Photo "bomb.jpg" is larger than 120 megapixels/],
        [ok, [{ ...photo(jpeg), field: 'document' }], 400, /Unexpected file field "document"/],
        [ok, Array.from({ length: MAX_PHOTOS + 1 }, () => photo(jpeg)), 413, /at most 10 photos/],
        [{ ...ok, latitude: 'north' }, [photo(jpeg)], 400, /latitude/],
        [{ ...ok, latitude: 91 }, [photo(jpeg)], 400, /latitude/],
        [{ outcome: 'verified', latitude: 6.45 }, [photo(jpeg)], 400, /longitude is required/],
        [{ ...ok, outcome: 'maybe' }, [photo(jpeg)], 400, /outcome/],
        [{ ...ok, outcome: 'failed', reason: 'it rained' }, [photo(jpeg)], 400, /reason must be one of address not found/],
        [{ ...ok, neighborPhone: '123' }, [photo(jpeg)], 400, /neighborPhone/],
      ];
      for (const [fields, files, status, pattern] of cases) {
        const res = await report('address', created.id, owner.credential, fields, files);
        const error = expectStyleA(res, status, status === 413 ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION_ERROR');
        expect(error.message, JSON.stringify(fields)).toMatch(pattern);
      }
      const json = await t.app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${created.id}/report`, headers: bearer(owner.credential), payload: ok });
      expectStyleA(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectStyleA(await report('address', created.id, stranger.credential, ok, [photo(jpeg)]), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await report('business', created.id, owner.credential, ok, [photo(jpeg)]), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await report('parcel', created.id, owner.credential, ok, [photo(jpeg)]), 400, 'VALIDATION_ERROR');
      // Nothing was stored or changed by the refused reports.
      expect((await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data.status).toEqual(IN_PROGRESS);
      const stored = await t.database.db.selectFrom('uploaded_files').select('id').where('org_id', '=', org.id).execute();
      const photosSoFar = (await http.get(`${ADDRESSES}?limit=100`, org.liveSecret)).json().data.flatMap((r: { photos: string[] }) => r.photos).length;
      const businessPhotos = (await http.get(`${BUSINESSES}?limit=100`, org.liveSecret)).json().data.flatMap((r: { photos: string[] }) => r.photos).length;
      const held = await t.database.db.selectFrom('field_tasks').select('held_report').where('org_id', '=', org.id).where('held_report', 'is not', null).execute();
      const heldPhotos = held.reduce((sum, row) => sum + row.held_report!.photoIds.length, 0);
      expect(stored).toHaveLength(photosSoFar + businessPhotos + heldPhotos);
      const ok2 = await report('address', created.id, owner.credential, { ...ok, outcome: 'failed' }, [photo(jpeg)]);
      expect(ok2.statusCode).toBe(200);
      expect((await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data.status.subStatus).toBe('address not found');
    });

    it('takes photos of several MB (over the 1 MB JSON limit), stores none of the bytes after the image, refuses one over 8 MB with 413', async () => {
      const created = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
      const owner = (await taskRow('address', created.id))!.agent_id === ada.id ? ada : bayo;
      const big = Buffer.concat([jpeg, Buffer.alloc(3 * 1024 * 1024)]);
      const huge = Buffer.concat([jpeg, Buffer.alloc(9 * 1024 * 1024)]);
      const ok = { outcome: 'verified', latitude: 6.45, longitude: 3.47 };
      const error = expectStyleA(await report('address', created.id, owner.credential, ok, [photo(huge)]), 413, 'PAYLOAD_TOO_LARGE');
      expect(error.message).toMatch(/larger than 8 MB/);
      expect((await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data.status).toEqual(IN_PROGRESS);
      expect((await report('address', created.id, owner.credential, ok, [photo(big), photo(jpeg)])).statusCode).toBe(200);
      const [url] = (await http.get(`${ADDRESSES}/${created.id}`, org.liveSecret)).json().data.photos;
      const download = await t.app.inject({ method: 'GET', url: new URL(url).pathname + new URL(url).search });
      expect(download.rawPayload.equals((await reencodePhoto(jpeg)).bytes)).toBe(true);
    });

    it('moves a deactivated agent\'s open tasks to another agent covering the state', async () => {
      const temp = await createAgent(t.database.db, { name: 'Relief', email: 'relief@agents.example', phone: '08031230002', states: ['Enugu'] });
      const other = await createAgent(t.database.db, { name: 'Backup', email: 'backup@agents.example', phone: '08031230003', states: ['Enugu'] });
      const created = (await http.post(ADDRESSES, org.liveSecret, { ...ADDRESS_BODY, state: 'Enugu', lga: 'Nsukka' })).json().data;
      expect((await taskRow('address', created.id))!.agent_id).toBe(temp.agent.id);
      await deactivateAgent(t.database.db, temp.agent.id);
      expect((await taskRow('address', created.id))!.agent_id).toBe(other.agent.id);
      await deactivateAgent(t.database.db, other.agent.id);
      expect((await taskRow('address', created.id))!.agent_id).toBeNull();
    });
  });
});
