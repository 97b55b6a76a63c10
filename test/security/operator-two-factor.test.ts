import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator } from '../../src/console/operators.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { enrolTotp, portal, type PortalUser } from '../helpers/portal.js';

/**
 * The console moves money: an operator without two-factor can do nothing there (issue 18). Every
 * /api/console route of the OpenAPI document answers 403 with what to do, until two-factor is on.
 */
let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx.close());

/** An operator who set a password from the link and signed in, without two-factor. */
async function operatorWithoutTotp(): Promise<PortalUser> {
  const email = `ops-plain-${Date.now()}@vouch.example`;
  const created = await createOperator(ctx.database.db, { email }, 'http://127.0.0.1:8080');
  const token = new URL(created.signInLink).searchParams.get('token')!;
  const password = 'operator password 1';
  expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token, password } })).statusCode).toBe(200);
  const signIn = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email, password } });
  expect(signIn.json()).toEqual({ totpRequired: false });
  const cookie = signIn.cookies.find((c) => c.name === 'vouch_session')!;
  return { personId: created.id, email, password, cookie: `vouch_session=${cookie.value}` };
}

const UUID = '00000000-0000-4000-8000-000000000000';

describe('an operator without two-factor', () => {
  it('is refused by every console route with a 403 saying to set it up; with it on, the console answers', async () => {
    const operator = await operatorWithoutTotp();
    const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const calls = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/api/console'))
      .flatMap(([path, methods]) => Object.keys(methods).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).map((method) => [method.toUpperCase(), path.replace(/\{[^}]+\}/g, UUID)] as const));
    expect(calls.length).toBeGreaterThan(20);
    for (const [method, url] of calls) {
      const res = await portal(ctx.app, operator, { method, url, ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }) });
      expect([method, url, res.statusCode]).toEqual([method, url, 403]);
      expect(res.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN', message: expect.stringMatching(/^Set up two-factor authentication first/) });
    }
    // The portal's own account routes still answer, so the operator can turn it on.
    const me = (await portal(ctx.app, operator, { method: 'GET', url: '/api/me' })).json();
    expect(me.person).toMatchObject({ operator: true, totpEnabled: false });
    await enrolTotp(ctx.app, operator);
    expect((await portal(ctx.app, operator, { method: 'GET', url: '/api/console/organizations' })).statusCode).toBe(200);
  });
});
