import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { ORIGIN, portalUser } from '../helpers/portal.js';

/**
 * VOUCH_TRUST_PROXY names the proxies whose X-Forwarded-For is believed: the client's address is
 * the rightmost entry no trusted proxy added, so a client that writes the header itself cannot
 * pick its address, escape a per-address limit or put a false address on its session.
 */

const trustProxy = (value: string) => loadConfig({ VOUCH_TRUST_PROXY: value }).trustProxy;

interface Answer {
  status: number;
  body: string;
  cookies: string[];
}

function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text, cookies: response.headers['set-cookie'] ?? [] }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function listening(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

/** Four requests to the portal API, each with a new forged address on the left of the header. */
async function forgedSeries(port: number, series: string, appended: string | undefined): Promise<number[]> {
  const codes = [];
  for (let i = 1; i <= 4; i++) {
    const forwarded = [`1.2.3.4, 10.${series}.0.${i}`, appended].filter(Boolean).join(', ');
    codes.push((await send(port, 'GET', '/api/me', { 'x-forwarded-for': forwarded })).status);
  }
  return codes;
}

describe('trusted proxies', () => {
  let t: TestContext;
  let port: number;
  const others: FastifyInstance[] = [];

  beforeAll(async () => {
    t = await buildTestContext({ config: { trustProxy: trustProxy('127.0.0.1'), rateLimits: { perSecret: 100, perAddress: 3 } } });
    port = await listening(t.app);
  });
  afterAll(async () => {
    for (const app of others) await app.close();
    await t?.close();
  });

  /** Another app on the same database with its own VOUCH_TRUST_PROXY. */
  async function appTrusting(value: string): Promise<number> {
    const app = await buildApp({ config: testConfig({ trustProxy: trustProxy(value), rateLimits: { perSecret: 100, perAddress: 3 } }), database: t.database });
    others.push(app);
    return listening(app);
  }

  it('takes the address the trusted proxy added, whatever the client wrote to its left: the limit bites', async () => {
    expect(await forgedSeries(port, '1', '203.0.113.50')).toEqual([401, 401, 401, 429]);
    // Another client behind the same proxy is counted apart.
    expect((await send(port, 'GET', '/api/me', { 'x-forwarded-for': '203.0.113.51' })).status).toBe(401);
  });

  it('believes nothing from a sender that is not a trusted proxy', async () => {
    const untrusted = await appTrusting('10.0.0.1, 192.168.0.0/16');
    expect(await forgedSeries(untrusted, '2', undefined)).toEqual([401, 401, 401, 429]);
  });

  it('counts hops from the server with a number, and reads on/true as loopback', async () => {
    expect(await forgedSeries(await appTrusting('1'), '3', '203.0.113.60')).toEqual([401, 401, 401, 429]);
    expect(await forgedSeries(await appTrusting('on'), '4', '203.0.113.61')).toEqual([401, 401, 401, 429]);
  });

  it('records the client\'s address on the session, not the one it wrote', async () => {
    const user = await portalUser(t.database.db);
    const signIn = await send(
      port,
      'POST',
      '/api/auth/sign-in',
      { origin: ORIGIN, 'content-type': 'application/json', 'x-forwarded-for': '6.6.6.6, 203.0.113.77' },
      JSON.stringify({ email: user.email, password: user.password }),
    );
    expect(signIn.status).toBe(200);
    const cookie = signIn.cookies.map((line) => line.split(';')[0]!).find((pair) => pair.startsWith('vouch_session='))!;
    const sessions = await send(port, 'GET', '/api/account/sessions', { cookie, 'x-forwarded-for': '203.0.113.77' });
    expect(sessions.status).toBe(200);
    const current = (JSON.parse(sessions.body) as { data: { ip: string | null; current: boolean }[] }).data.find((row) => row.current);
    expect(current?.ip).toBe('203.0.113.77');
  });

  it('reads VOUCH_TRUST_PROXY as a list, a hop count or off, and refuses anything else in one line', () => {
    expect(trustProxy('')).toBe(false);
    expect(trustProxy('off')).toBe(false);
    expect(trustProxy('0')).toBe(false);
    expect(trustProxy('2')).toBe(2);
    expect(trustProxy('true')).toEqual(['loopback']);
    expect(trustProxy('10.0.0.5, 10.1.0.0/16,fd00::/8,Loopback,10.2.0.0/255.255.0.0')).toEqual(['10.0.0.5', '10.1.0.0/16', 'fd00::/8', 'loopback', '10.2.0.0/255.255.0.0']);
    for (const bad of ['banana', '10.0.0.0/33', '0.0.0.0/0', '::/0', '1.2.3', '10.0.0.1,', '10.0.0.0/255.0.255.0', '11']) {
      expect(() => trustProxy(bad)).toThrow(ConfigError);
      expect(() => trustProxy(bad)).toThrow(/^VOUCH_TRUST_PROXY: .*(name the proxies|at most 10)/);
    }
  });
});
