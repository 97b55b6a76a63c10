import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityHeaders } from '../../src/platform/security-headers.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

/** helmet's headers are computed once at start and set on every answer, whatever route or error answers it. */
describe('security headers', () => {
  let t: TestContext;

  beforeAll(async () => {
    t = await buildTestContext();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('computes helmet\'s headers from the options, CSP directives included', () => {
    const headers = Object.fromEntries(securityHeaders({ contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], imgSrc: ["'self'", 'https://photos.example'] } } }));
    expect(headers['Content-Security-Policy']).toContain("img-src 'self' https://photos.example");
    expect(headers['X-Content-Type-Options']).toBe('nosniff');
    expect(headers['Strict-Transport-Security']).toMatch(/max-age=\d+/);
    expect(headers['X-Frame-Options']).toBe('SAMEORIGIN');
    expect(Object.fromEntries(securityHeaders({ contentSecurityPolicy: false, frameguard: { action: 'deny' } }))).toMatchObject({ 'X-Frame-Options': 'DENY' });
    expect(Object.keys(Object.fromEntries(securityHeaders({ contentSecurityPolicy: false })))).not.toContain('Content-Security-Policy');
  });

  it('sets them on a success, an API error, an unknown route and a malformed body alike', async () => {
    const org = await t.org();
    const answers = [
      await t.app.inject({ method: 'POST', url: '/v1/verifications/identities/bvn/22345678901?type=basic', headers: bearer(org.testSecret), payload: {} }),
      await t.app.inject({ method: 'POST', url: '/v1/verifications/identities/bvn/22222222222?type=basic', payload: {} }),
      await t.app.inject({ method: 'GET', url: '/v1/no-such-route' }),
      await t.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: { ...bearer(org.testSecret), 'content-type': 'application/json' }, payload: '{"broken' }),
    ];
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 401, 404, 400]);
    for (const answer of answers) {
      expect(answer.headers['content-security-policy']).toMatch(/default-src 'self';.*script-src 'self'/);
      expect(answer.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['referrer-policy']).toBe('no-referrer');
      expect(answer.headers['cross-origin-opener-policy']).toBe('same-origin');
    }
  });
});
