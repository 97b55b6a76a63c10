import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

const LONG = 'x'.repeat(5_000);
const LONG_DIGITS = '9'.repeat(5_000);
/** Past the router's limit on one path segment (16 KB); only app.inject can send it, Node's parser refuses it first. */
const HUGE = 'x'.repeat(20_000);

interface Answer {
  status: number;
  contentType: string | undefined;
  body: string;
}

function expectStyleA(res: Answer, status: number, code: string) {
  expect(res.contentType, res.body).toMatch(/^application\/json/);
  expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({ status, body: { status: 'error', code, message: expect.any(String), requestId: expect.stringMatching(/^req_/) } });
}

function expectStyleB(res: Answer, status: number, error: string) {
  expect(res.contentType, res.body).toMatch(/^application\/json/);
  expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({ status, body: { statusCode: status, error, message: expect.any(String), requestId: expect.stringMatching(/^req_/) } });
}

/**
 * Over-long path parameters, query strings and URLs answer in their endpoint family's error style
 * (style A for workflows, agents and test helpers; style B for identities), never Fastify's own
 * 414 body, HTML or a 500.
 */
describe('over-long URLs answer in the family style', () => {
  let t: TestContext;
  let secret: string;
  let agentCredential: string;

  beforeAll(async () => {
    t = await buildTestContext();
    secret = (await t.org({ riskLevel: 'LOW' })).testSecret;
    agentCredential = (await createAgent(t.database.db, { name: 'Long', email: 'long@agents.example', phone: '08031230000', states: ['Lagos'] })).credential;
  });
  afterAll(async () => {
    await t?.close();
  });

  const inject = async (method: 'GET' | 'POST' | 'DELETE', url: string, credential = secret, payload?: object): Promise<Answer> => {
    const res = await t.app.inject({ method, url, headers: bearer(credential), ...(payload ? { payload } : {}) });
    return { status: res.statusCode, contentType: res.headers['content-type'] as string | undefined, body: res.body };
  };

  it("lets a 5,000-character id reach its route, whose own validation answers (not Fastify's 414)", async () => {
    expectStyleA(await inject('GET', `/v1/verifications/addresses/${LONG}`), 400, 'VALIDATION_ERROR');
    expectStyleA(await inject('GET', `/v1/verifications/addresses/${LONG_DIGITS}`), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await inject('DELETE', `/v1/verifications/businesses/${LONG}`), 400, 'VALIDATION_ERROR');
    expectStyleA(await inject('GET', `/v1/verifications/business/${LONG_DIGITS}`), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await inject('GET', `/v1/verifications/guarantors/${LONG}`), 400, 'VALIDATION_ERROR');
    expectStyleA(await inject('GET', `/v1/verifications/employments/${LONG_DIGITS}`), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await inject('POST', `/v1/test-helpers/addresses/${LONG}/complete`, secret, { outcome: 'verified' }), 400, 'VALIDATION_ERROR');
    expectStyleA(await inject('POST', `/v1/agent/tasks/address/${LONG}/start`, agentCredential), 400, 'VALIDATION_ERROR');
    expectStyleA(await inject('POST', `/v1/agent/tasks/${LONG}/1/start`, agentCredential), 400, 'VALIDATION_ERROR');
    expectStyleA(await inject('GET', `/v1/files/${LONG}?expires=1&signature=00`), 403, 'FORBIDDEN');
    expectStyleB(await inject('POST', `/v1/verifications/identities/bvn/${LONG_DIGITS}`), 400, 'Bad Request');
    expectStyleB(await inject('POST', `/v1/verifications/identities/nin/${LONG}`), 400, 'Bad Request');
    expectStyleB(await inject('GET', `/v1/verifications/identities/tin/${LONG}`), 400, 'Bad Request');
  });

  it('answers a segment past the router limit 414 in the family style, without echoing it', async () => {
    const workflow = await inject('GET', `/v1/verifications/addresses/${HUGE}`);
    expectStyleA(workflow, 414, 'URI_TOO_LONG');
    expect(workflow.body.length).toBeLessThan(300);
    expectStyleA(await inject('POST', `/v1/agent/tasks/address/${HUGE}/start`, agentCredential), 414, 'URI_TOO_LONG');
    expectStyleA(await inject('POST', `/v1/test-helpers/businesses/${HUGE}/complete`, secret, { outcome: 'verified' }), 414, 'URI_TOO_LONG');
    expectStyleB(await inject('POST', `/v1/verifications/identities/bvn/${HUGE}`), 414, 'URI Too Long');
  });

  it('answers a path that is not valid percent-encoding 400 in the family style', async () => {
    expectStyleA(await inject('GET', '/v1/verifications/addresses/%E0%A4%A'), 400, 'BAD_REQUEST');
    expectStyleB(await inject('POST', '/v1/verifications/identities/nin/%E0%A4%A'), 400, 'Bad Request');
  });

  it('takes a very long query string and a very long unknown path without a 500', async () => {
    const listed = await inject('GET', `/v1/verifications/addresses?${'filter=x&'.repeat(5_000)}limit=5`);
    expect(listed.status, listed.body).toBe(200);
    expect(JSON.parse(listed.body)._pagination.limit).toBe(5);
    const unknown = await inject('GET', `/v1/${'a/'.repeat(20_000)}`);
    expectStyleA(unknown, 404, 'NOT_FOUND_ERROR');
    // The message names the route, cut short.
    expect(unknown.body.length).toBeLessThan(400);
  });

  it('over a real socket, a URL past Node\'s 16 KB limit is 431 in the family style, not a bare parser error', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const get = async (url: string): Promise<Answer> => {
      const res = await fetch(`${base}${url}`, { headers: bearer(secret) });
      return { status: res.status, contentType: res.headers.get('content-type') ?? undefined, body: await res.text() };
    };
    const within = await get(`/v1/verifications/addresses?filter=${'x'.repeat(12_000)}`);
    expect(within.status, within.body).toBe(200);
    expectStyleA(await get(`/v1/verifications/addresses/${LONG}`), 400, 'VALIDATION_ERROR');
    expectStyleA(await get(`/v1/verifications/addresses?filter=${'x'.repeat(20_000)}`), 431, 'HEADERS_TOO_LARGE');
    expectStyleA(await get(`/v1/verifications/addresses/${HUGE}`), 431, 'HEADERS_TOO_LARGE');
    expectStyleB(await get(`/v1/verifications/identities/tin/${HUGE}`), 431, 'Request Header Fields Too Large');
  });
});
