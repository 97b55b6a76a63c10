import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateVerifyTypes, VERIFY_TYPES_FILE } from '../../scripts/openapi-types.js';
import { embeddableOrigin, framingFor } from '../../src/sessions/hosted/embedding.js';
import { hostedFlowDir } from '../../src/sessions/hosted/routes.js';
import type { LivenessAttempt, View } from '../../web/verify/src/api.js';
import { returnUrl, sessionStatus } from '../../web/verify/src/steps/result.js';
import { capturePlan } from '../../web/verify/src/steps/selfie.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';

/**
 * The hosted flow's page shell, its assets and the web SDK as the server answers them (headers,
 * framing rules, caching, size); the flow itself runs in Chromium in verify-flow.test.ts.
 */

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx?.close());

const URL_TOKEN = 'Qx7dYl0pN2cVbW3kR9sT4uH6jE8fA1gM5oZqLrKiXyC';
const SECRET = `vcs_${URL_TOKEN}`;

function csp(headers: Record<string, unknown>): Record<string, string> {
  const directives: Record<string, string> = {};
  for (const part of String(headers['content-security-policy']).split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) directives[name] = values.join(' ');
  }
  return directives;
}

describe('GET /verify/:token', () => {
  it('answers the page shell: no caching, no referrer, strict CSP, never framed', async () => {
    for (const token of [URL_TOKEN, SECRET, 'not-a-token']) {
      const res = await ctx.app.inject({ url: `/verify/${token}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['permissions-policy']).toMatch(/camera=\(self\)/);
      expect(res.headers['permissions-policy']).toMatch(/microphone=\(\)/);
      const policy = csp(res.headers);
      expect(policy).toMatchObject({
        'default-src': "'none'",
        'script-src': "'self'",
        'style-src': "'self'",
        'connect-src': "'self'",
        'frame-ancestors': "'none'",
        'base-uri': "'none'",
        'form-action': "'none'",
      });
      expect(res.body).toMatch(/<script defer src="\/verify\/assets\/flow-[A-Z0-9]+\.js"><\/script>/);
      expect(res.body).toContain('<meta name="referrer" content="no-referrer">');
      // The same shell for every token: the token is never written into the page.
      expect(res.body).not.toContain(token);
    }
  });

  it('lets the SDK frame it from the one origin it names, with the client secret only', async () => {
    const embedded = await ctx.app.inject({ url: `/verify/${SECRET}?embed=1&origin=${encodeURIComponent('https://shop.example.com')}` });
    expect(embedded.statusCode).toBe(200);
    expect(csp(embedded.headers)['frame-ancestors']).toBe('https://shop.example.com');
    expect(embedded.headers['x-frame-options']).toBeUndefined();
    const local = await ctx.app.inject({ url: `/verify/${SECRET}?embed=1&origin=${encodeURIComponent('http://localhost:5173')}` });
    expect(csp(local.headers)['frame-ancestors']).toBe('http://localhost:5173');

    const refused = [
      `/verify/${URL_TOKEN}?embed=1&origin=${encodeURIComponent('https://shop.example.com')}`,
      `/verify/${SECRET}?embed=1`,
      `/verify/${SECRET}?embed=yes&origin=${encodeURIComponent('https://shop.example.com')}`,
      `/verify/${SECRET}?embed=1&origin=${encodeURIComponent('http://shop.example.com')}`,
      `/verify/${SECRET}?embed=1&origin=${encodeURIComponent('https://shop.example.com/')}`,
      `/verify/${SECRET}?embed=1&origin=${encodeURIComponent('https://shop.example.com/pay')}`,
      `/verify/${SECRET}?embed=1&origin=${encodeURIComponent("https://a.example; script-src 'unsafe-inline'")}`,
      `/verify/${SECRET}?embed=1&origin=${encodeURIComponent('https://*.example.com')}`,
      `/verify/${SECRET}?embed=1&origin=null`,
      `/verify/${SECRET}?embed=1&origin=a&origin=b`,
    ];
    for (const url of refused) {
      const res = await ctx.app.inject({ url });
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(csp(res.headers)['frame-ancestors'], url).toBe("'none'");
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.body).toContain('cannot be shown inside this website');
    }
  });

  it('keeps tokens out of the log', async () => {
    const before = ctx.logs.length;
    await ctx.app.inject({ url: `/verify/${SECRET}?embed=1&origin=${encodeURIComponent('https://shop.example.com')}` });
    await ctx.app.inject({ url: `/verify/${URL_TOKEN}` });
    expect(ctx.logs.slice(before).join('')).not.toContain(URL_TOKEN);
  });
});

describe('the flow\'s assets and the web SDK', () => {
  it('serves the hashed assets pre-compressed and cached for a year; unknown ones are JSON 404s', async () => {
    const shell = (await ctx.app.inject({ url: `/verify/${URL_TOKEN}` })).body;
    for (const asset of [...shell.matchAll(/(?:src|href)="(\/verify\/assets\/[^"]+)"/g)].map((m) => m[1]!)) {
      const res = await ctx.app.inject({ url: asset, headers: { 'accept-encoding': 'br, gzip' } });
      expect(res.statusCode, asset).toBe(200);
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    for (const url of ['/verify/assets/missing.js', '/sdk/v1/missing.js', '/sdk/v2/vouch.js']) {
      const res = await ctx.app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    }
  });

  it('serves /sdk/v1/vouch.js to other sites: readable cross-origin, cached for minutes', async () => {
    const res = await ctx.app.inject({ url: '/sdk/v1/vouch.js', headers: { 'accept-encoding': 'gzip' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const plain = await ctx.app.inject({ url: '/sdk/v1/vouch.js' });
    expect(plain.body).toContain('vouch.complete');
    expect(plain.body.length).toBeLessThan(10 * 1024);
  });

  it('keeps the first screen within 150 KB of compressed JavaScript', async () => {
    const shell = await readFile(path.join(hostedFlowDir(), 'index.html'), 'utf8');
    const scripts = [...shell.matchAll(/src="\/verify\/assets\/([^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    let brotli = 0;
    let gzip = 0;
    for (const script of scripts) {
      brotli += (await stat(path.join(hostedFlowDir(), 'assets', `${script}.br`))).size;
      gzip += (await stat(path.join(hostedFlowDir(), 'assets', `${script}.gz`))).size;
    }
    // Measured: about 10 KB with brotli, 11 KB with gzip (docs/sdk.md).
    expect(brotli).toBeLessThanOrEqual(150 * 1024);
    expect(gzip).toBeLessThanOrEqual(150 * 1024);
  });
});

describe('embedding rules', () => {
  it('accepts exact https origins and loopback http, nothing else', () => {
    expect(embeddableOrigin('https://shop.example.com')).toBe('https://shop.example.com');
    expect(embeddableOrigin('https://shop.example.com:8443')).toBe('https://shop.example.com:8443');
    expect(embeddableOrigin('http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
    expect(embeddableOrigin('http://[::1]:3000')).toBe('http://[::1]:3000');
    for (const bad of ['', 'null', 'shop.example.com', 'HTTPS://SHOP.EXAMPLE.COM', 'https://shop.example.com:443', 'https://user@shop.example.com', 'http://10.0.0.5', 'javascript:alert(1)', 'https://xn--a;b.com', 'file:///etc']) {
      expect(embeddableOrigin(bad), bad).toBeNull();
    }
    expect(framingFor(SECRET, {})).toEqual({ kind: 'none' });
    expect(framingFor(SECRET, { embed: '1', origin: 'https://a.example' })).toEqual({ kind: 'embed', origin: 'https://a.example' });
    expect(framingFor(URL_TOKEN, { embed: '1', origin: 'https://a.example' }).kind).toBe('refused');
  });
});

describe('the page\'s API types', () => {
  it('match the OpenAPI document the end-user routes produce (run `npm run verify:types` when this fails)', async () => {
    const committed = await readFile(VERIFY_TYPES_FILE, 'utf8');
    expect(committed === (await generateVerifyTypes()), 'web/verify/src/api-schema.d.ts is stale: run npm run verify:types').toBe(true);
  });
});

describe('the page\'s own rules', () => {
  const view = (patch: Partial<View>): View =>
    ({ sessionId: 'ses_0123456789abcdef0123', status: 'verified', redirectUrl: 'https://shop.example.com/kyc/done?step=2', result: { outcome: 'verified', reasons: [] }, ...patch }) as View;

  it('returns to the redirectUrl with session_id and status, keeping its query, and never to anything but http(s)', () => {
    expect(returnUrl(view({}))).toBe('https://shop.example.com/kyc/done?step=2&session_id=ses_0123456789abcdef0123&status=verified');
    expect(returnUrl(view({ status: 'cancelled', result: { outcome: 'failed', reasons: ['CANCELLED'] } }))).toMatch(/&status=cancelled$/);
    expect(returnUrl(view({ redirectUrl: null }))).toBeNull();
    expect(returnUrl(view({ redirectUrl: 'javascript:alert(1)' }))).toBeNull();
    expect(returnUrl(view({ redirectUrl: 'data:text/html,hi' }))).toBeNull();
    expect(sessionStatus(view({ status: 'expired', result: { outcome: 'failed', reasons: ['EXPIRED'] } }))).toBe('expired');
    expect(sessionStatus(view({ status: 'failed', result: { outcome: 'failed', reasons: ['FACE_MISMATCH'] } }))).toBe('failed');
  });

  it('shares the server\'s frame budget: 3 frames looking straight, then equal shares per movement, the rest to the last', () => {
    const attempt = (challenges: string[], maxFrames: number) => ({ attemptId: 'att_1', expiresAt: '', challenges, capture: { maxFrames, frameIntervalMs: 200, maxWidth: 480 } }) as LivenessAttempt;
    const frames = (plan: ReturnType<typeof capturePlan>) => plan.segments.map((segment) => `${segment.key}:${segment.frames}`);
    expect(frames(capturePlan(attempt(['turn_left', 'blink', 'look_up'], 25)))).toEqual(['straight:3', 'turn_left:7', 'blink:7', 'look_up:8']);
    expect(frames(capturePlan(attempt(['turn_right', 'blink'], 25)))).toEqual(['straight:3', 'turn_right:11', 'blink:11']);
    expect(frames(capturePlan(attempt(['turn_right', 'blink'], 20)))).toEqual(['straight:3', 'turn_right:8', 'blink:9']);
    // Every frame the server allows is used, never one more.
    for (const [challenges, maxFrames] of [[['blink'], 20], [['turn_left', 'look_up', 'blink'], 30], [['turn_left', 'blink'], 9]] as const) {
      expect(capturePlan(attempt([...challenges], maxFrames)).segments.reduce((sum, segment) => sum + segment.frames, 0)).toBe(maxFrames);
    }
  });
});
