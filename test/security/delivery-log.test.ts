import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestIdentities } from '../../src/identities/registry/test-identities.js';
import { deleteEndedDeliveries } from '../../src/webhooks/retention.js';
import type { Worker } from '../../src/worker.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';
import { startTestWorker } from '../helpers/webhook-receiver.js';

// Finding 5 of the security review (issue 18): the portal's webhook delivery log showed a viewer
// the event body whole (BVN, phone, birth date), outside the personal-data access log; and an
// organization without an endpoint had every event body stored anyway.

const BVN = '22212345678';
const PHONE = '+2348031234567';
const DOB = '14-03-1990';
const EMAIL = 'adaeze.okonkwo@mail.example';
const ADDRESS = {
  street: '12 Admiralty Way',
  lga: 'Eti-Osa',
  state: 'Lagos',
  applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', idType: 'BVN', idNumber: BVN, phone: '0803 123 4567', dob: DOB },
};

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** A completed test-mode address verification of the organization: its event is queued. */
async function completedAddress(secret: string): Promise<number> {
  const created = await ctx.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(secret), payload: ADDRESS });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().data.id as number;
  const done = await ctx.app.inject({ method: 'POST', url: `/v1/test-helpers/addresses/${id}/complete`, headers: bearer(secret), payload: { outcome: 'verified' } });
  expect(done.statusCode, done.body).toBe(200);
  return id;
}

/** An organization with a signed-in owner, at the risk level address verifications need. */
async function customer() {
  const made = await portalOrg(ctx.database.db);
  await ctx.database.db.updateTable('organizations').set({ risk_level: 'LOW' }).where('id', '=', made.org.id).execute();
  return made;
}

async function viewerOf(orgId: string): Promise<PortalUser> {
  const viewer = await portalUser(ctx.database.db);
  await addMember(ctx.database.db, orgId, viewer.personId, 'viewer');
  return viewer;
}

function accessRows(personId: string) {
  return ctx.database.db.selectFrom('personal_data_access_records').selectAll().where('actor_id', '=', personId).orderBy('id').orderBy('position').execute();
}

function expectNoPersonalNumbers(body: string) {
  for (const value of [BVN, PHONE, '08031234567', DOB, '19900314']) expect(body).not.toContain(value);
}

describe('the portal delivery log', () => {
  let worker: Worker | undefined;
  let receiver: http.Server | undefined;
  afterAll(async () => {
    await worker?.stop();
    await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  });

  it("shows a viewer the event body and the receiver's answers with the numbers masked, and logs each view as a view of the verification", async () => {
    const { org, owner } = await customer();
    // A receiver that echoes the body back, refusing it: the attempt log keeps the start of its answer.
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => res.writeHead(422, { 'content-type': 'application/json' }).end(Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const set = await portal(ctx.app, owner, { method: 'PUT', url: `/api/orgs/${org.id}/webhooks?mode=test`, payload: { url } });
    expect(set.statusCode, set.body).toBe(200);
    const id = await completedAddress(org.testSecret);
    worker = await startTestWorker(ctx.database, { retrySchedule: [60_000] });

    const viewer = await viewerOf(org.id);
    let deliveryId = 0;
    for (let until = Date.now() + 10_000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 50))) {
      const list = await portal(ctx.app, viewer, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries?mode=test` });
      expect(list.statusCode, list.body).toBe(200);
      const [delivery] = list.json().data;
      if (delivery?.attemptCount > 0) {
        deliveryId = delivery.id;
        expectNoPersonalNumbers(list.body);
        break;
      }
    }
    expect(deliveryId).toBeGreaterThan(0);
    // The list shows no personal data: no access-log row for it.
    expect(await accessRows(viewer.personId)).toEqual([]);

    for (const view of [1, 2]) {
      const detail = await portal(ctx.app, viewer, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries/${deliveryId}?mode=test` });
      expect(detail.statusCode, detail.body).toBe(200);
      expectNoPersonalNumbers(detail.body);
      const body = detail.json();
      expect(body.payload.data.applicant).toMatchObject({ idNumber: '222******78', phone: '+23*********67', birthdate: '**-**-****', firstname: 'Adaeze' });
      expect(body.attempts[0].statusCode).toBe(422);
      console.log(body.attempts[0].responseExcerpt); expect(body.attempts[0].responseExcerpt).toContain('222******78');
      const rows = await accessRows(viewer.personId);
      expect(rows).toHaveLength(view);
      expect(rows.at(-1)).toMatchObject({ org_id: org.id, mode: 'test', actor_kind: 'member', channel: 'portal', action: 'view', resource: 'address', resource_id: String(id) });
    }

    // The owner sees it masked too: no role reads the whole body in the portal.
    const asOwner = await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries/${deliveryId}?mode=test` });
    expect(asOwner.statusCode).toBe(200);
    expectNoPersonalNumbers(asOwner.body);
    expect((await accessRows(owner.personId)).map((row) => [row.resource, row.resource_id, row.action])).toEqual([['address', String(id), 'view']]);
  });

  it('masks the employer’s and the guarantor’s contact details in other events', async () => {
    const { org, owner } = await customer();
    const set = await portal(ctx.app, owner, { method: 'PUT', url: `/api/orgs/${org.id}/webhooks?mode=test`, payload: { url: 'http://127.0.0.1:9/unused' } });
    expect(set.statusCode, set.body).toBe(200);
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/v1/verifications/employments',
      headers: bearer(org.testSecret),
      payload: { applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', phone: '08031234567', dob: DOB }, employerName: 'Kudi Ltd', employerEmail: EMAIL, employerPhone: '08039876543', title: 'Analyst', startDate: '01/02/2020' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const done = await ctx.app.inject({ method: 'POST', url: `/v1/test-helpers/employments/${created.json().data.id}/complete`, headers: bearer(org.testSecret), payload: { outcome: 'verified' } });
    expect(done.statusCode, done.body).toBe(200);
    const viewer = await viewerOf(org.id);
    const [delivery] = (await portal(ctx.app, viewer, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries?mode=test` })).json().data;
    const detail = await portal(ctx.app, viewer, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries/${delivery.id}?mode=test` });
    expect(detail.statusCode, detail.body).toBe(200);
    for (const value of [EMAIL, '+2348039876543', PHONE]) expect(detail.body).not.toContain(value);
    expect(detail.json().payload.data).toMatchObject({ employerEmail: 'a•••@mail.example', employerName: 'Kudi Ltd' });
  });
});

/** Every identity type a session can look up, with the raw values of its sandbox identity that its event carries. */
async function sessionIdentities() {
  const { bvn, nin, vnin, drivers_license: licence } = await loadTestIdentities();
  return [
    { idType: 'DRIVERS_LICENSE', numberKey: 'licenseNo', number: licence.licenseNo, masked: 'KJA*******02', raw: [licence.birthdate], photo: licence.photo! },
    { idType: 'VNIN', numberKey: 'vNin', number: vnin.vNin, masked: 'TV7***********QK', raw: [vnin.phone!, vnin.birthdate], photo: vnin.photo! },
    { idType: 'BVN', numberKey: 'bvn', number: bvn.bvn, masked: '223******01', raw: [bvn.phone, bvn.birthdate], photo: bvn.photo! },
    { idType: 'NIN', numberKey: 'nin', number: nin.nin, masked: '704******61', raw: [nin.phone!, nin.birthdate], photo: nin.photo! },
  ] as const;
}

/** A completed test session of one ID type (the sandbox identity found), its number repeated in the metadata. */
async function completedSession(secret: string, idType: string, number: string): Promise<string> {
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/v1/verifications/sessions',
    headers: bearer(secret),
    payload: { idTypes: [idType], applicant: { firstname: 'Ada', lastname: 'Obi' }, metadata: { note: `customer file ${number}` } },
  });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().data.id as string;
  const done = await ctx.app.inject({ method: 'POST', url: `/v1/test-helpers/sessions/${id}/complete`, headers: bearer(secret), payload: { outcome: 'verified' } });
  expect(done.statusCode, done.body).toBe(200);
  return id;
}

/** Neither the number, nor the person's phone or birth date, nor any of the photo's bytes, anywhere in the answer. */
function expectNothingOf(body: string, identity: Awaited<ReturnType<typeof sessionIdentities>>[number]) {
  for (const value of [identity.number, ...identity.raw]) expect(body.toLowerCase()).not.toContain(value.toLowerCase());
  const photo = identity.photo.replace(/^data:image\/[\w+.-]+;base64,/, '');
  for (let at = 0; at + 24 <= photo.length; at += Math.max(24, Math.floor(photo.length / 16))) expect(body).not.toContain(photo.slice(at, at + 24));
  expect(body).not.toMatch(/data:image|\/9j\/|iVBORw0KGgo/);
}

describe("session events: every ID type's number and the registry photo", () => {
  it('are masked and withheld in the log for a viewer and for the owner, wherever the number is repeated', async () => {
    const { org, owner } = await customer();
    const set = await portal(ctx.app, owner, { method: 'PUT', url: `/api/orgs/${org.id}/webhooks?mode=test`, payload: { url: 'http://127.0.0.1:9/unused' } });
    expect(set.statusCode, set.body).toBe(200);
    const viewer = await viewerOf(org.id);
    for (const identity of await sessionIdentities()) {
      const sessionId = await completedSession(org.testSecret, identity.idType, identity.number);
      // The event as stored carries the whole record: the log is what masks it.
      const stored = await ctx.database.db.selectFrom('webhook_deliveries').select(['id', 'payload']).where('org_id', '=', org.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
      expect(JSON.stringify(stored.payload)).toContain(identity.number);
      for (const user of [viewer, owner]) {
        const list = await portal(ctx.app, user, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries?mode=test` });
        expect(list.statusCode, list.body).toBe(200);
        expectNothingOf(list.body, identity);
        const detail = await portal(ctx.app, user, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries/${stored.id}?mode=test` });
        expect(detail.statusCode, detail.body).toBe(200);
        expectNothingOf(detail.body, identity);
        const data = detail.json().payload.data;
        expect(data.id).toBe(sessionId);
        expect(data.identity).toMatchObject({ [identity.numberKey]: identity.masked, birthdate: '**-**-****', photo: expect.stringMatching(/^\[image not shown: \d+ characters\]$/) });
        expect(data.identity.firstname).toBeTruthy();
        expect(data.metadata.note).toBe(`customer file ${identity.masked}`);
      }
    }
  });

  describe('with a receiver that redirects to a link naming the licence number and echoes the identity found', () => {
    let worker: Worker | undefined;
    let receiver: http.Server | undefined;
    afterAll(async () => {
      await worker?.stop();
      await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
    });

    it("masks the number and withholds the photo in each attempt's error and answer and in the list's last error", async () => {
      const identity = (await sessionIdentities())[0];
      const { org, owner } = await customer();
      receiver = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const echoed = JSON.stringify({ rejected: JSON.parse(Buffer.concat(chunks).toString()).data.identity });
          res.writeHead(302, { location: `https://elsewhere.example/return?licence=${identity.number}`, 'content-type': 'application/json' }).end(echoed);
        });
      });
      await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const set = await portal(ctx.app, owner, { method: 'PUT', url: `/api/orgs/${org.id}/webhooks?mode=test`, payload: { url } });
      expect(set.statusCode, set.body).toBe(200);
      await completedSession(org.testSecret, identity.idType, identity.number);
      worker = await startTestWorker(ctx.database, { retrySchedule: [60_000] });

      const viewer = await viewerOf(org.id);
      let delivery: { id: number; attemptCount: number; lastError: string | null } | undefined;
      for (let until = Date.now() + 10_000; Date.now() < until && !(delivery?.attemptCount); await new Promise((resolve) => setTimeout(resolve, 50))) {
        const list = await portal(ctx.app, viewer, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries?mode=test` });
        expect(list.statusCode, list.body).toBe(200);
        expectNothingOf(list.body, identity);
        delivery = list.json().data[0];
      }
      expect(delivery?.lastError).toBe(`redirect to https://elsewhere.example/return?licence=${identity.masked} not followed`);

      const detail = await portal(ctx.app, viewer, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries/${delivery!.id}?mode=test` });
      expect(detail.statusCode, detail.body).toBe(200);
      expectNothingOf(detail.body, identity);
      const body = detail.json();
      expect(body.lastError).toBe(delivery!.lastError);
      expect(body.attempts[0]).toMatchObject({ statusCode: 302, error: delivery!.lastError });
      // The answer's first 500 characters: the echoed record, cut in the middle of the photo, masked.
      expect(body.attempts[0].responseExcerpt).toContain(`"licenseNo":"${identity.masked}"`);
      expect(body.attempts[0].responseExcerpt).toMatch(/"photo":"\[image not shown: \d+ characters\]$/);
    });
  });
});

describe('events of an organization without an endpoint', () => {
  it('are recorded without their body, are never sent or resent, and go with retention', async () => {
    const { org, owner } = await customer();
    const id = await completedAddress(org.testSecret);

    // As stored, without the field protection: no body at all, not even encrypted.
    const { rows } = await sql<{ payload: unknown; status: string; attempts: number; resource_id: string }>`
      select payload, status, attempts, resource_id::text as resource_id from webhook_deliveries where org_id = ${org.id}`.execute(ctx.database.db.withoutPlugins());
    expect(rows).toEqual([{ payload: null, status: 'failed', attempts: 0, resource_id: String(id) }]);

    const [delivery] = (await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries?mode=test` })).json().data;
    expect(delivery).toMatchObject({ type: 'address.completed', status: 'failed', sendable: false, attemptCount: 0, lastError: expect.stringMatching(/no webhook endpoint/) });
    const detail = await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/webhook-deliveries/${delivery.id}?mode=test` });
    expect(detail.json()).toMatchObject({ payload: null, attempts: [] });
    // Nothing personal was shown: nothing to log.
    expect(await accessRows(owner.personId)).toEqual([]);

    // Setting an endpoint afterwards sends nothing, and a resend is refused.
    const set = await portal(ctx.app, owner, { method: 'PUT', url: `/api/orgs/${org.id}/webhooks?mode=test`, payload: { url: 'http://127.0.0.1:9/later' } });
    expect(set.statusCode).toBe(200);
    const resend = await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/webhook-deliveries/${delivery.id}/resend?mode=test`, payload: {} });
    expect(resend.statusCode, resend.body).toBe(409);
    expect(resend.json()).toMatchObject({ status: 'error', code: 'CONFLICT' });
    const after = await ctx.database.db.selectFrom('webhook_deliveries').select(['status', 'payload']).where('org_id', '=', org.id).execute();
    expect(after).toEqual([{ status: 'failed', payload: null }]);

    // Retention removes it like any ended delivery.
    await deleteEndedDeliveries(ctx.database.db, new Date(Date.now() + 60_000));
    expect(await ctx.database.db.selectFrom('webhook_deliveries').select('id').where('org_id', '=', org.id).execute()).toEqual([]);
  });
});
