import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/**
 * Requests as clients in the wild send them (issue 19, items 1-3), over a real socket: node's
 * http module sends the path exactly as written (fetch and app.inject resolve `/./` first).
 */
describe('requests as clients in the wild send them', () => {
  let t: TestContext;
  let port: number;
  let secret: string;
  let agentCredential: string;
  /** Every /v1 operation of the OpenAPI document, with its path parameters filled in. */
  let operations: { method: string; path: string }[];

  beforeAll(async () => {
    t = await buildTestContext({ config: { rateLimits: { perSecret: 1_000_000, perAddress: 1_000_000 } } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    secret = (await t.org()).testSecret;
    agentCredential = (await createAgent(t.database.db, { name: 'Wild', email: 'wild@agents.example', phone: '08031230000', states: ['Lagos'] })).credential;
    const paths = (t.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
    const values: Record<string, string> = { id: '424242', ref: '22345678901', vNin: 'YV111111111111FY', kind: 'address' };
    operations = Object.entries(paths)
      .filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? 'x') })));
  });
  afterAll(async () => {
    await t?.close();
  });

  function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method, path, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, contentType: String(response.headers['content-type']), body: Buffer.concat(chunks).toString() }));
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  const credentialFor = (path: string) => `Bearer ${path.startsWith('/v1/agent/') ? agentCredential : secret}`;
  // What differs between two creations by design: ids, times, and a session's fresh link and client secret.
  const withoutIds = (answer: Answer) => ({
    ...answer,
    body: answer.body.replace(/"(reference|id|createdAt|expiresAt|url|clientSecret|requestId)":"[^"]*"/g, '"$1":"…"'),
  });

  describe('item 1: an empty body with content-type application/json is {}', () => {
    it('answers every /v1 POST and DELETE with an empty JSON body as it answers {}', async () => {
      const writes = operations.filter((op) => op.method === 'POST' || op.method === 'DELETE');
      expect(writes.length).toBeGreaterThan(20);
      for (const { method, path } of writes) {
        const headers = { authorization: credentialFor(path), 'content-type': 'application/json' };
        const object = await send(method, path, headers, '{}');
        const empty = await send(method, path, headers, '');
        expect(empty.body, `${method} ${path}`).not.toMatch(/Body cannot be empty/);
        expect(withoutIds(empty), `${method} ${path}`).toEqual(withoutIds(object));
      }
    });

    it('takes a lookup at risk level NONE with the header and no body (200, as with {})', async () => {
      const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
      const empty = await send('POST', '/v1/verifications/identities/bvn/22345678901', headers, '');
      expect(empty.status, empty.body).toBe(200);
      expect(JSON.parse(empty.body)).toMatchObject({ status: 'success' });
      const blank = await send('POST', '/v1/verifications/identities/bvn/22345678901', headers, '  \r\n');
      expect(blank.status, blank.body).toBe(200);
      const none = await send('POST', '/v1/verifications/identities/bvn/22345678901', { authorization: `Bearer ${secret}` });
      expect(none.status, none.body).toBe(200);
    });

    it('cancels with DELETE, content-type application/json and no body', async () => {
      const headers = { authorization: `Bearer ${(await t.org({ riskLevel: 'LOW' })).testSecret}`, 'content-type': 'application/json' };
      const body = JSON.stringify({ street: '4 Broad Street', lga: 'Lagos Island', state: 'Lagos', applicant: { firstname: 'Chidi', lastname: 'Eze', phone: '08031234567' } });
      const created = await send('POST', '/v1/verifications/addresses', headers, body);
      expect(created.status, created.body).toBe(201);
      const { id } = JSON.parse(created.body).data as { id: number };
      const cancelled = await send('DELETE', `/v1/verifications/addresses/${id}`, headers, '');
      expect(cancelled.status, cancelled.body).toBe(200);
      expect(JSON.parse(cancelled.body)).toEqual({ status: 'success', data: 'ok' });
    });
  });

  describe('item 2: trailing slashes', () => {
    it('answers every /v1 operation the same with and without a trailing slash', async () => {
      for (const { method, path } of operations) {
        const headers = { authorization: credentialFor(path), ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) };
        const body = method === 'POST' ? '{}' : undefined;
        const bare = await send(method, path, headers, body);
        const slashed = await send(method, `${path}/`, headers, body);
        expect(bare.body, `${method} ${path}`).not.toMatch(/Route .* not found/);
        expect(withoutIds(slashed), `${method} ${path}/`).toEqual(withoutIds(bare));
      }
    });

    it('creates with POST /v1/verifications/addresses/ (with the slash)', async () => {
      const headers = { authorization: `Bearer ${(await t.org({ riskLevel: 'LOW' })).testSecret}`, 'content-type': 'application/json' };
      const body = JSON.stringify({ street: '4 Broad Street', lga: 'Lagos Island', state: 'Lagos', applicant: { firstname: 'Chidi', lastname: 'Eze', phone: '08031234567' } });
      const created = await send('POST', '/v1/verifications/addresses/', headers, body);
      expect(created.status, created.body).toBe(201);
    });

    it('reads the portal API with a trailing slash too, and still serves the web app', async () => {
      const me = await send('GET', '/api/me/');
      expect(me.status).toBe(401);
      expect(me.contentType).toMatch(/^application\/json/);
    });
  });

  describe('item 3: header variants', () => {
    const lookup = (headers: Record<string, string>) => send('POST', '/v1/verifications/identities/bvn/22345678901', { ...headers, 'content-type': 'application/json' }, '{}');

    it('accepts Authentication: Bearer <secret> as an alias of Authorization', async () => {
      const res = await lookup({ authentication: `Bearer ${secret}` });
      expect(res.status, res.body).toBe(200);
      const workflow = await send('GET', '/v1/verifications/addresses', { authentication: `Bearer ${secret}` });
      expect(workflow.status, workflow.body).toBe(200);
    });

    it('accepts one of our secrets without the Bearer scheme', async () => {
      expect((await lookup({ authorization: secret })).status).toBe(200);
      expect((await lookup({ authorization: ` ${secret} ` })).status).toBe(200);
      expect((await lookup({ authentication: secret })).status).toBe(200);
    });

    it('still refuses anything else with the documented form in the message', async () => {
      const refused: Record<string, string>[] = [{ authorization: 'secret-of-someone-else' }, { authorization: `Basic ${secret}` }, { authorization: 'sk_test_notarealsecret' }, { authentication: 'Token abc' }, {}];
      for (const headers of refused) {
        const res = await lookup(headers);
        expect(res.status, JSON.stringify(headers)).toBe(401);
        expect(JSON.parse(res.body)).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) , requestId: expect.stringMatching(/^req_/) });
      }
      const missing = JSON.parse((await lookup({})).body).message as string;
      expect(missing).toContain('Authorization: Bearer <secret>');
    });

    it('lets Authorization decide when both headers are sent', async () => {
      expect((await lookup({ authorization: 'Bearer sk_test_wrong', authentication: `Bearer ${secret}` })).status).toBe(401);
    });
  });

  describe('paths with dot segments and doubled slashes', () => {
    it('answers the route or the JSON 404 under /api and /v1, never the web app', async () => {
      const me = await send('GET', '/./api/me');
      expect(me.contentType, me.body).toMatch(/^application\/json/);
      expect(me.status).toBe(401);
      for (const path of ['/%2e/api/me', '/api/./me', '/x/../api/me', '/api/%2E%2E/api/me']) {
        const res = await send('GET', path);
        expect(res.contentType, `${path}: ${res.body}`).toMatch(/^application\/json/);
        expect(res.status, path).toBe(401);
      }
      const list = await send('GET', '/./v1/verifications/addresses', { authorization: `Bearer ${secret}` });
      expect(list.status, list.body).toBe(200);
      expect(JSON.parse(list.body)).toMatchObject({ status: 'success' });
      const unknown = await send('GET', '/./v1/nothing-here');
      expect(unknown.contentType).toMatch(/^application\/json/);
      expect(unknown.status).toBe(404);
      const identity = await send('POST', '/v1/./verifications/identities/bvn/22345678901', { authorization: `Bearer ${secret}` });
      expect(identity.status, identity.body).toBe(200);
    });

    it('does not let dot segments climb above the root', async () => {
      const res = await send('GET', '/../../v1/verifications/addresses', { authorization: `Bearer ${secret}` });
      expect(res.status, res.body).toBe(200);
      const encodedSlash = await send('GET', '/v1/verifications/addresses/..%2F..%2Fapi%2Fme', { authorization: `Bearer ${secret}` });
      expect(encodedSlash.contentType).toMatch(/^application\/json/);
      expect(encodedSlash.status).toBe(400);
    });

    it('reads doubled slashes as one', async () => {
      const res = await send('GET', '//v1//verifications/addresses', { authorization: `Bearer ${secret}` });
      expect(res.status, res.body).toBe(200);
    });
  });
});
