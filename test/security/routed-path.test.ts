import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Funding } from '../../src/portal/billing/service.js';
import { buildApp } from '../../src/app.js';
import { buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { ORIGIN, operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';

/**
 * Which area a request belongs to (the portal API's CSRF check and per-address limit, the error
 * style, the web app's fallback, log redaction) is decided on the path the router matched, never
 * on the raw URL: the router decodes `/%61pi/...` to the `/api/...` routes.
 */

interface Answer {
  status: number;
  body: string;
}

/** One request over a real socket with the path sent byte for byte (app.inject would normalise `/./`). */
function send(port: number, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('routed-path decisions', () => {
  let t: TestContext;
  let operator: PortalUser;
  let port: number;

  beforeAll(async () => {
    t = await buildTestContext();
    operator = await operatorUser(t.app, t.database.db);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });

  const balanceOf = async (orgId: string) =>
    Number((await t.database.db.selectFrom('organizations').select('balance').where('id', '=', orgId).executeTakeFirstOrThrow()).balance);

  it('refuses a forged cross-origin POST to the console under every spelling of /api that reaches a route, and changes nothing', async () => {
    const { org, owner } = await portalOrg(t.database.db, { fund: 0 });
    const request = await new Funding(t.database.db).request(org.id, { amount: 2_500_000 }, { kind: 'member', personId: owner.personId });
    const confirm = `/console/funding-requests/${request.id}/confirm`;
    const forgedHeaders = { origin: 'https://evil.example', cookie: operator.cookie };

    const routed = [`/%61pi${confirm}`, `/%61%70%69${confirm}`, `/api/%63onsole/funding-requests/${request.id}/confirm`, `/%61pi/console/funding-requests/${request.id}/%63onfirm`];
    for (const path of routed) {
      const forged = await send(port, 'POST', path, forgedHeaders);
      expect([path, forged.status]).toEqual([path, 403]);
      expect(JSON.parse(forged.body)).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
      // No Origin at all (an old browser, a script) is refused the same way.
      expect((await send(port, 'POST', path, { cookie: operator.cookie })).status).toBe(403);
    }
    // Spellings the router does not match reach no route at all.
    for (const path of [`//api${confirm}`, `/API${confirm}`, `/api/.${confirm}`, `/./api${confirm}`, `/api${confirm}/`]) {
      const forged = await send(port, 'POST', path, forgedHeaders);
      expect([path, [403, 404].includes(forged.status)]).toEqual([path, true]);
    }

    expect(await balanceOf(org.id)).toBe(0);
    const stored = await t.database.db.selectFrom('funding_requests').select('status').where('id', '=', request.id).executeTakeFirstOrThrow();
    expect(stored.status).toBe('pending');

    // The encoded spelling does reach the route: from the web app's own origin it confirms.
    const genuine = await send(port, 'POST', `/%61pi${confirm}`, { origin: ORIGIN, cookie: operator.cookie });
    expect(genuine.status).toBe(200);
    expect(await balanceOf(org.id)).toBe(2_500_000);
  });

  it('counts the portal API per address whatever the spelling of its path', async () => {
    const limited = await buildApp({ config: testConfig({ rateLimits: { perSecret: 100, perAddress: 4 } }), database: t.database });
    try {
      const remoteAddress = '203.0.113.21';
      const codes = [];
      for (const url of ['/api/me', '/%61pi/me', '/%61%70%69/me', '/api/%6de', '/%61pi/me']) {
        codes.push((await limited.inject({ method: 'GET', url, remoteAddress })).statusCode);
      }
      expect(codes).toEqual([401, 401, 401, 401, 429]);
    } finally {
      await limited.close();
    }
  });

  it('answers an identity route reached by an encoded path in its own style (B)', async () => {
    const answer = await t.app.inject({ method: 'POST', url: '/v1/%76erifications/identities/bvn/22345678901?type=basic', payload: {}, remoteAddress: '203.0.113.22' });
    expect(answer.statusCode).toBe(401);
    expect(answer.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.stringMatching(/^Missing Authorization header/) , requestId: expect.stringMatching(/^req_/) });
  });

  it('keeps the JSON 404 of an API family for an encoded path, never the web app', async () => {
    const answer = await t.app.inject({ method: 'GET', url: '/%61pi/no-such-thing', remoteAddress: '203.0.113.23' });
    expect(answer.statusCode).toBe(404);
    expect(answer.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
  });

  it('redacts an identity number from the log however its path is encoded', async () => {
    t.logs.length = 0;
    const encoded = '%32%32%33%34%35%36%37%38%39%30%31';
    await t.app.inject({ method: 'POST', url: `/v1/%76erifications/identities/bvn/${encoded}?type=basic`, payload: {}, remoteAddress: '203.0.113.24' });
    const logs = t.logs.join('');
    expect(logs).toContain('identities/bvn/[redacted]');
    expect(logs).not.toContain(encoded);
    expect(logs).not.toContain('22345678901');
  });
});
