import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { samplePortraitBase64, TEST_IDENTITY_FACES } from '../../src/identities/biometrics/samples.js';
import type { paths } from '../generated/api.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';

/**
 * The client an integrator generates from /openapi.json (openapi-typescript types in
 * test/generated/api.d.ts, `npm run api:types`; openapi-fetch calls) against a real server on a
 * real port. `tsc` checks every request and the fields read from every answer against the
 * generated types; at run time each answer is validated against the response schema the document
 * gives for its status, and the last test checks that every /v1 operation was called.
 */

// ajv-formats is CommonJS with `exports.default`: under NodeNext its default import is the module.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Api = Client<paths>;
interface DocumentedResponse {
  content?: Record<string, { schema?: object }>;
}
interface Operation {
  operationId: string;
  security?: unknown[];
  responses: Record<string, DocumentedResponse>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

const BVN = '22345678901';
const NIN = '70412358961';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Fails a call whose status or JSON body the document does not describe, and records the operation. */
function conformsToDocument(document: Document, called: Set<string>): Middleware {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const validators = new Map<object, ValidateFunction>();
  return {
    async onResponse({ request, response, schemaPath }) {
      const where = `${request.method} ${schemaPath}`;
      const operation = document.paths[schemaPath]?.[request.method.toLowerCase()];
      if (!operation) throw new Error(`${where} is not in the OpenAPI document`);
      called.add(operation.operationId);
      const documented = operation.responses[String(response.status)];
      if (!documented) throw new Error(`${operation.operationId} answered ${response.status}, a status the document does not list`);
      const type = response.headers.get('content-type') ?? '';
      if (!type.startsWith('application/json')) return;
      const schema = documented.content?.['application/json']?.schema;
      if (!schema) throw new Error(`${operation.operationId} ${response.status} answered JSON the document gives no schema for`);
      let validate = validators.get(schema);
      if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
      const body: unknown = await response.clone().json();
      if (!validate(body)) {
        throw new Error(`${operation.operationId} ${response.status} does not match its documented schema: ${ajv.errorsText(validate.errors)}`);
      }
    },
  };
}

/** Asserts a call answered `status` without an error body, and gives its typed body. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }, status: number): T {
  expect(result.error, `${result.response.url} answered ${result.response.status}`).toBeUndefined();
  expect(result.response.status).toBe(status);
  return result.data as T;
}

/** A multipart body from typed fields: Blobs as files, arrays as repeated fields, the rest as text. */
function formData(body: object): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item instanceof Blob) form.append(name, item, `${name}.jpg`);
      else if (item !== undefined) form.append(name, String(item));
    }
  }
  return form;
}

describe('a client generated from the OpenAPI document (openapi-typescript + openapi-fetch, real port)', () => {
  let t: TestContext;
  let dataDir: string;
  let base: string;
  let document: Document;
  const called = new Set<string>();
  /** A test-secret client, a live-secret client, a field agent's client, and one with no credentials. */
  let sandbox: Api;
  let live: Api;
  let agent: Api;
  let anonymous: Api;

  const clientFor = (secret?: string): Api => {
    const api = createClient<paths>({ baseUrl: base });
    if (secret) api.use({ onRequest: ({ request }) => void request.headers.set('authorization', `Bearer ${secret}`) });
    api.use(conformsToDocument(document, called));
    return api;
  };

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-openapi-client-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await buildTestContext({ config: { dataDir, publicUrl: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    document = (await (await fetch(`${base}/openapi.json`)).json()) as Document;
    const org = await t.org({ riskLevel: 'LOW', fund: 10_000_000 });
    const field = await createAgent(t.database.db, { name: 'Client Agent', email: 'client@agents.example', phone: '08031238888', states: ['Lagos'] });
    sandbox = clientFor(org.testSecret);
    live = clientFor(org.liveSecret);
    agent = clientFor(field.credential);
    anonymous = clientFor();
  });
  afterAll(async () => {
    await t?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('identity lookups: BVN, BVN match, NIN, NIN by phone, vNIN, drivers license, voters card, CAC, TIN', async () => {
    const applicant = { firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' };
    const bvn = ok(
      await sandbox.POST('/v1/verifications/identities/bvn/{ref}', { params: { path: { ref: BVN }, query: { type: 'premium' } }, body: applicant }),
      200,
    );
    expect(bvn.data.bvn).toBe(BVN);
    expect(bvn.data.fieldMatches).toEqual({ firstname: true, lastname: true, dob: true });
    expect(bvn.data.enrollmentBank).toBe('Guaranty Trust Bank');

    const match = ok(
      await sandbox.POST('/v1/verifications/identities/bvn/{ref}/match', {
        params: { path: { ref: BVN } },
        body: { ...applicant, gender: 'Female', phoneNumber: '08031234567', emailAddress: 'adaeze.okonkwo@example.com' },
      }),
      201,
    );
    expect(match.data.fieldMatches).toMatchObject({ firstname: true, lastname: true, dob: true, gender: true, phoneNumber: true, emailAddress: true });

    const babatunde = { firstname: 'Babatunde', lastname: 'Adeyemi', dob: '02-11-1985' };
    const nin = ok(await sandbox.POST('/v1/verifications/identities/nin/{ref}', { params: { path: { ref: NIN } }, body: babatunde }), 201);
    expect([nin.data.nin, nin.data.firstname]).toEqual([NIN, 'Babatunde']);
    const byPhone = ok(
      await sandbox.POST('/v1/verifications/identities/nin_phone/{ref}', { params: { path: { ref: '08051234567' } }, body: babatunde }),
      200,
    );
    expect(byPhone.data.lastname).toBe('Adeyemi');

    const vnin = ok(
      await sandbox.POST('/v1/verifications/identities/virtual-nin/{vNin}', {
        params: { path: { vNin: 'TV738291046518QK' } },
        body: { firstname: 'Ngozi', lastname: 'Eze', dob: '21-07-1993' },
      }),
      201,
    );
    expect([vnin.data.vNin, vnin.data.id]).toEqual(['TV738291046518QK', 1001]);

    const license = ok(
      await sandbox.POST('/v1/verifications/identities/drivers_license/{ref}', {
        params: { path: { ref: 'KJA83927AA02' } },
        body: { firstname: 'Ibrahim', lastname: 'Bello', dob: '09-05-1988' },
      }),
      201,
    );
    expect([license.data.licenseNo, license.data.stateOfIssue]).toEqual(['KJA83927AA02', 'Kaduna']);

    const voter = ok(
      await sandbox.POST('/v1/verifications/identities/vin/{ref}', {
        params: { path: { ref: '90F5B1234C567890123' } },
        body: { firstname: 'Chinedu', lastname: 'Nwosu', dob: '1979-08-30' },
      }),
      201,
    );
    expect(voter.data.pollingUnitCode).toBe('24/09/05/012');

    const company = ok(await sandbox.POST('/v1/verifications/identities/cac', { body: { type: 'limited_company', rcNumber: '1284395' } }), 200);
    expect([company.data.companyName, company.data.status]).toEqual(['Kolanut Technologies Limited', 'ACTIVE']);

    const tin = ok(await sandbox.GET('/v1/verifications/identities/tin/{ref}', { params: { path: { ref: '23456789-0001' } } }), 200);
    expect(tin.data.taxpayerName).toBe('KOLANUT TECHNOLOGIES LIMITED');

    // An error answer is typed too: the union of the documented error bodies (style B here; A for a 500).
    const badTin = await sandbox.GET('/v1/verifications/identities/tin/{ref}', { params: { path: { ref: '1234' } } });
    expect(badTin.response.status).toBe(400);
    const styleB = badTin.error && 'statusCode' in badTin.error ? badTin.error : undefined;
    expect([styleB?.statusCode, styleB?.error]).toEqual([400, 'Bad Request']);
    expect(styleB?.message).toMatch(/XXXXXXXX-XXXX/);
  });

  it('biometrics: a multipart photo (a Blob in the generated types) matched against the NIN on record', async () => {
    const photo = new Blob([Buffer.from(await samplePortraitBase64(TEST_IDENTITY_FACES.nin), 'base64')], { type: 'image/jpeg' });
    const result = ok(
      await sandbox.POST('/v1/verifications/identities/biometrics', {
        body: { idType: 'nin', idNumber: NIN, photo },
        bodySerializer: formData,
      }),
      200,
    );
    expect(result.data.firstname).toBe('Babatunde');
    expect(result.data.photoMatching.match).toBe(true);
    expect(result.data.photoMatching.matchScore).toBeGreaterThanOrEqual(result.data.photoMatching.matchingThreshold);
  });

  it('address verification: create, the agent visit with a photo, fetch, photo download, list, address by identity, cancel, test completion', async () => {
    const place = { street: '12 Admiralty Way', lga: 'Eti-Osa', state: 'Lagos' };
    const applicant = { firstname: 'Adaeze', lastname: 'Okonkwo', idType: 'NIN', idNumber: '12345678901' };
    const created = ok(await live.POST('/v1/verifications/addresses', { body: { ...place, reference: 'client-address', applicant } }), 201);
    const id = String(created.data.id);
    expect(created.data.status).toEqual({ status: 'In Progress', subStatus: 'In Progress', state: 'In Progress' });

    const me = ok(await agent.GET('/v1/agent/me'), 200);
    expect(me.data.states).toEqual(['Lagos']);
    const tasks = ok(await agent.GET('/v1/agent/tasks'), 200);
    expect(tasks.data.map((task) => [task.kind, task.id])).toEqual([['address', created.data.id]]);
    ok(await agent.POST('/v1/agent/tasks/{kind}/{id}/start', { params: { path: { kind: 'address', id } } }), 200);
    const jpeg = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#246' } }).jpeg().toBuffer();
    const report = ok(
      await agent.POST('/v1/agent/tasks/{kind}/{id}/report', {
        params: { path: { kind: 'address', id } },
        // Two photos: a verified address with one waits for an operator's review.
        body: { outcome: 'verified', latitude: 6.4474, longitude: 3.4723, neighborName: 'Mrs Bello', photos: [new Blob([jpeg], { type: 'image/jpeg' }), new Blob([jpeg], { type: 'image/jpeg' })] },
        bodySerializer: formData,
      }),
      200,
    );
    expect(report.data).toBe('ok');

    const fetched = ok(await live.GET('/v1/verifications/addresses/{id}', { params: { path: { id } } }), 200);
    expect(fetched.data.status).toEqual({ status: 'Verified', subStatus: 'verified', state: 'complete' });
    expect([fetched.data.lattitude, fetched.data.neighbor.name]).toEqual(['6.4474', 'Mrs Bello']);
    expect(fetched.data.photos).toHaveLength(2);

    // The photo link is signed: no credentials, only the query it carries.
    const link = new URL(fetched.data.photos[0]!);
    const fileId = link.pathname.split('/').pop()!;
    const download = await anonymous.GET('/v1/files/{id}', {
      params: { path: { id: fileId }, query: { expires: link.searchParams.get('expires')!, signature: link.searchParams.get('signature')! } },
      parseAs: 'arrayBuffer',
    });
    expect(download.response.status).toBe(200);
    expect(download.response.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(download.data as unknown as ArrayBuffer).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));

    const listed = ok(await live.GET('/v1/verifications/addresses', { params: { query: { limit: '10', offset: '0' } } }), 200);
    expect(listed._pagination).toEqual({ limit: 10, offset: 0, total: 1 });
    expect(listed.data.map((record) => record.reference)).toEqual(['client-address']);

    const found = ok(
      await live.POST('/v1/verifications/addresses/marketplace', {
        body: { maxAddressAge: '6M', firstname: 'Adaeze', lastname: 'Okonkwo', idType: 'NIN', idNumber: '12345678901' },
      }),
      200,
    );
    expect([found.data.street, found.data.status.status]).toEqual(['12 Admiralty Way', 'Verified']);

    const toCancel = ok(await sandbox.POST('/v1/verifications/addresses', { body: { ...place, applicant } }), 201);
    const cancelled = ok(await sandbox.DELETE('/v1/verifications/addresses/{id}', { params: { path: { id: String(toCancel.data.id) } } }), 200);
    expect(cancelled).toEqual({ status: 'success', data: 'ok' });

    const toComplete = ok(await sandbox.POST('/v1/verifications/addresses', { body: { ...place, applicant } }), 201);
    const completed = ok(
      await sandbox.POST('/v1/test-helpers/addresses/{id}/complete', { params: { path: { id: String(toComplete.data.id) } }, body: { outcome: 'verified' } }),
      200,
    );
    expect(completed.data.status.status).toBe('Verified');
  });

  it('business verification: create, fetch, list, cancel, test completion', async () => {
    const body = {
      name: 'Mama Put Ventures',
      type: 'Informal',
      street: '4 Broad Street',
      lga: 'Lagos Island',
      state: 'Lagos',
      canContactPoc: true,
      applicant: { firstname: 'Chidi', lastname: 'Eze', phone: '08031234567', email: 'chidi@example.com' },
    };
    const created = ok(await sandbox.POST('/v1/verifications/businesses', { body: { ...body, reference: 'client-business' } }), 200);
    const id = String(created.data.id);
    expect(created.data.business.name).toBe('Mama Put Ventures');
    const fetched = ok(await sandbox.GET('/v1/verifications/businesses/{id}', { params: { path: { id } } }), 200);
    expect(fetched.data.reference).toBe('client-business');
    const listed = ok(await sandbox.GET('/v1/verifications/businesses', { params: { query: { limit: '5' } } }), 200);
    expect([listed._pagination.total, listed.data[0]?.id]).toEqual([1, created.data.id]);
    const completed = ok(await sandbox.POST('/v1/test-helpers/businesses/{id}/complete', { params: { path: { id } }, body: { outcome: 'verified' } }), 200);
    expect(completed.data.status.state).toBe('complete');

    const other = ok(await sandbox.POST('/v1/verifications/businesses', { body }), 200);
    const cancelled = ok(await sandbox.DELETE('/v1/verifications/businesses/{id}', { params: { path: { id: String(other.data.id) } } }), 200);
    expect(cancelled.data).toBe('ok');
  });

  it('guarantor verification: create, fetch, list, cancel, test completion', async () => {
    const body = {
      firstname: 'Babatunde',
      lastname: 'Adeyemi',
      phone: '08051234567',
      email: 'babatunde@example.com',
      street: '27 Allen Avenue',
      lga: 'Ikeja',
      state: 'Lagos',
      acceptableIdType: ['NIN', 'BVN'],
      applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990', phone: '08031234567', idType: 'BVN', idNumber: BVN },
    };
    const created = ok(await sandbox.POST('/v1/verifications/guarantors', { body: { ...body, reference: 'client-guarantor' } }), 201);
    const id = String(created.data.id);
    expect(created.data.status).toEqual({ status: 'IN_PROGRESS', subStatus: 'IN_PROGRESS', state: 'IN_PROGRESS' });
    expect(created.data.acceptableIdType).toEqual(['NIN', 'BVN']);
    const fetched = ok(await sandbox.GET('/v1/verifications/guarantors/{id}', { params: { path: { id } } }), 200);
    expect(fetched.data.email).toBe('babatunde@example.com');
    const listed = ok(await sandbox.GET('/v1/verifications/guarantors', { params: { query: { limit: '5', offset: '0' } } }), 200);
    expect(listed.data.map((record) => record.id)).toEqual([created.data.id]);
    const completed = ok(await sandbox.POST('/v1/test-helpers/guarantors/{id}/complete', { params: { path: { id } }, body: { outcome: 'verified' } }), 200);
    expect(completed.data.status.status).toBe('VERIFIED');

    const other = ok(await sandbox.POST('/v1/verifications/guarantors', { body }), 201);
    const cancelled = ok(await sandbox.DELETE('/v1/verifications/guarantors/{id}', { params: { path: { id: String(other.data.id) } } }), 200);
    expect(cancelled.data).toBe('ok');
  });

  it('employment verification: create, fetch, list, cancel, test completion', async () => {
    const body = {
      applicant: { firstname: 'Chidi', lastname: 'Okafor', phone: '08031112222' },
      employerName: 'Kolanut Technologies',
      employerEmail: 'hr@kolanut.example.com',
      title: 'Software Engineer',
      startDate: '01/04/2019',
    };
    const created = ok(await sandbox.POST('/v1/verifications/employments', { body: { ...body, reference: 'client-employment' } }), 201);
    const id = String(created.data.id);
    expect([created.data.employerName, created.data.rehire]).toEqual(['Kolanut Technologies', false]);
    const fetched = ok(await sandbox.GET('/v1/verifications/employments/{id}', { params: { path: { id } } }), 200);
    expect(fetched.data.title).toBe('Software Engineer');
    const listed = ok(await sandbox.GET('/v1/verifications/employments', { params: { query: { limit: '5', offset: '0' } } }), 200);
    expect(listed._pagination.total).toBe(1);
    const completed = ok(await sandbox.POST('/v1/test-helpers/employments/{id}/complete', { params: { path: { id } }, body: { outcome: 'verified' } }), 200);
    expect(completed.data.status).toEqual({ status: 'VERIFIED', subStatus: 'VERIFIED', state: 'COMPLETE' });

    const other = ok(await sandbox.POST('/v1/verifications/employments', { body }), 201);
    const cancelled = ok(await sandbox.DELETE('/v1/verifications/employments/{id}', { params: { path: { id: String(other.data.id) } } }), 200);
    expect(cancelled.data).toBe('ok');
  });

  it('verification session: create, fetch, list, cancel, test completion', async () => {
    const created = ok(await sandbox.POST('/v1/verifications/sessions', { body: { reference: 'client-session', idTypes: ['NIN'], applicant: { lastname: 'Adeyemi' }, metadata: { order: 'o-1' } } }), 201);
    const id = created.data.id;
    expect([created.data.url?.startsWith(`${base}/verify/`), created.data.clientSecret?.startsWith('vcs_')]).toEqual([true, true]);
    const fetched = ok(await sandbox.GET('/v1/verifications/sessions/{id}', { params: { path: { id } } }), 200);
    expect([fetched.data.status.state, fetched.data.metadata.order, fetched.data.clientSecret]).toEqual(['CREATED', 'o-1', null]);
    const listed = ok(await sandbox.GET('/v1/verifications/sessions', { params: { query: { limit: '5', offset: '0' } } }), 200);
    expect(listed.data.map((record) => record.id)).toEqual([id]);
    const completed = ok(await sandbox.POST('/v1/test-helpers/sessions/{id}/complete', { params: { path: { id } }, body: { outcome: 'verified' } }), 200);
    expect([completed.data.status.state, completed.data.checks.idLookup?.passed]).toEqual(['COMPLETED', true]);

    const other = ok(await sandbox.POST('/v1/verifications/sessions', { body: { applicant: { lastname: 'Adeyemi' } } }), 201);
    const cancelled = ok(await sandbox.DELETE('/v1/verifications/sessions/{id}', { params: { path: { id: other.data.id } } }), 200);
    expect(cancelled.data).toBe('ok');
  });

  it('screening: create (a sandbox hit), fetch, list, end monitoring', async () => {
    const created = ok(await sandbox.POST('/v1/verifications/screenings', { body: { subject: { type: 'person', name: 'Musa Adamu Karfe', dob: '1968-04-12' }, reference: 'client-screening', monitor: true } }), 201);
    const id = created.data.id;
    expect([created.data.status.status, created.data.hits[0]?.entityId, created.data.monitored]).toEqual(['PENDING_REVIEW', 'SBX-P-001', true]);
    const fetched = ok(await sandbox.GET('/v1/verifications/screenings/{id}', { params: { path: { id: String(id) } } }), 200);
    expect(fetched.data.reference).toBe('client-screening');
    const listed = ok(await sandbox.GET('/v1/verifications/screenings', { params: { query: { limit: '5', offset: '0' } } }), 200);
    expect(listed.data.map((record) => record.id)).toEqual([id]);
    const ended = ok(await sandbox.DELETE('/v1/verifications/screenings/{id}', { params: { path: { id: String(id) } } }), 200);
    expect(ended.data).toBe('ok');
  });

  it('called every /v1 operation of the document, each with a unique operationId and a security requirement', () => {
    const operations = Object.entries(document.paths)
      .filter(([route]) => route.startsWith('/v1/'))
      .flatMap(([, methods]) => Object.values(methods));
    const ids = operations.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.filter((operation) => !Array.isArray(operation.security)).map((operation) => operation.operationId)).toEqual([]);
    expect([...called].sort()).toEqual([...ids].sort());
  });
});
