import http from 'node:http';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { PASSWORD_PER_EMAIL } from '../../src/portal/auth/service.js';
import { buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { ORIGIN, portal, portalUser } from '../helpers/portal.js';

/**
 * Nobody can lock anybody out (issue 18, finding 10): wrong passwords pause the (email, client
 * address) that made them, not the account; guessing spread over many addresses stops at a cap per
 * email that the person's known addresses pass; the counts are in the database, so every API
 * process sees them. Over real sockets from two loopback addresses.
 */
let ctx: TestContext;
let base: string;
let second: FastifyInstance;
beforeAll(async () => {
  ctx = await buildTestContext();
  base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  // A second API process on the same database.
  second = await buildApp({ config: testConfig(), database: ctx.database, logStream: new Writable({ write: (_c, _e, done) => done() }) });
  await second.ready();
});
afterAll(async () => {
  await second.close();
  await ctx.close();
});

/** A JSON POST over a real socket from `from` (a loopback address: Linux answers all of 127/8). */
function post(path: string, body: unknown, from: string): Promise<{ status: number; body: string; cookie?: string }> {
  const url = new URL(path, base);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', localAddress: from, headers: { origin: ORIGIN, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('vouch_session='));
          resolve({ status: res.statusCode ?? 0, body: text, ...(cookie ? { cookie: cookie.split(';')[0]! } : {}) });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('wrong passwords', () => {
  it("pause the attacker's address, not the owner signing in from another one", async () => {
    const owner = await portalUser(ctx.database.db);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await post('/api/auth/sign-in', { email: owner.email, password: 'guess guess guess' }, '127.0.0.2')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    expect((await post('/api/auth/sign-in', { email: owner.email, password: owner.password }, '127.0.0.2')).status).toBe(429);
    const ownerIn = await post('/api/auth/sign-in', { email: owner.email, password: owner.password }, '127.0.0.1');
    expect(ownerIn.status).toBe(200);
    expect(ownerIn.cookie).toMatch(/^vouch_session=/);
  });

  it('spread over many addresses stop at the per-email cap, which the owner passes from an address they signed in from before', async () => {
    const owner = await portalUser(ctx.database.db);
    // The owner signed in from 127.0.0.1 before.
    expect((await post('/api/auth/sign-in', { email: owner.email, password: owner.password }, '127.0.0.1')).status).toBe(200);
    for (let i = 0; i < PASSWORD_PER_EMAIL.limit; i++) {
      const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: owner.email, password: `guess ${i} guess` }, remoteAddress: `10.40.${i}.1` });
      expect(res.statusCode).toBe(401);
    }
    const stranger = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: owner.email, password: owner.password }, remoteAddress: '10.41.0.1' });
    expect(stranger.statusCode).toBe(429);
    expect((await post('/api/auth/sign-in', { email: owner.email, password: owner.password }, '127.0.0.1')).status).toBe(200);
  });

  it('from an IPv6 network are counted per /64: a new address in it is the same client', async () => {
    const owner = await portalUser(ctx.database.db);
    const statuses = [];
    for (let i = 1; i <= 6; i++) {
      const res = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: owner.email, password: 'guess guess guess' }, remoteAddress: `2001:db8:40:7::${i.toString(16)}` });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    // The owner's own network is another /64.
    const ownerIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: owner.email, password: owner.password }, remoteAddress: '2001:db8:40:8::1' });
    expect(ownerIn.statusCode).toBe(200);
  });
});

describe('the counts', () => {
  it('hold across API processes: the per-address budget and the (email, address) pause', async () => {
    const owner = await portalUser(ctx.database.db);
    const from = '10.50.0.1';
    const attempt = (app: FastifyInstance, password: string) =>
      portal(app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email: owner.email, password }, remoteAddress: from });
    const statuses = [];
    for (const app of [ctx.app, second, ctx.app, second, ctx.app]) statuses.push((await attempt(app, 'wrong wrong wrong')).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    expect((await attempt(second, owner.password)).statusCode).toBe(429);

    const busy = '10.50.0.2';
    const forgot = (app: FastifyInstance) => portal(app, undefined, { method: 'POST', url: '/api/auth/forgot-password', payload: { email: 'nobody@example.com' }, remoteAddress: busy });
    for (let i = 0; i < 30; i++) expect((await forgot(i % 2 === 0 ? ctx.app : second)).statusCode).toBe(200);
    const over = await forgot(second);
    expect(over.statusCode).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
  });
});
