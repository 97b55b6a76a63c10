import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signatureHeader } from '../../src/webhooks/delivery.js';
import {
  generateWebhookSecret,
  getWebhookEndpoint,
  PREVIOUS_SECRET_VALIDITY_MS,
  rotateWebhookSecret,
  setWebhookEndpoint,
  WebhookEndpointError,
} from '../../src/webhooks/endpoints.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';

const PUBLIC_URL = 'https://93.184.215.14/hooks/vouch';
const strict = { allowPrivateUrls: false };
const lenient = { allowPrivateUrls: true };

describe('webhook endpoints', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await buildTestContext();
  });
  afterAll(async () => {
    await ctx.close();
  });

  it.each([
    ['http://127.0.0.1:8080/hook', /loopback or private/],
    ['http://localhost:8080/hook', /loopback or private/],
    ['http://[::1]/hook', /loopback or private/],
    ['http://10.0.0.5/hook', /loopback or private/],
    ['http://192.168.1.10/hook', /loopback or private/],
    ['http://169.254.169.254/latest/meta-data', /loopback or private/],
    ['http://[::ffff:127.0.0.1]/hook', /loopback or private/],
    ['not a url', /is not a valid URL/],
    ['ftp://93.184.215.14/hook', /must be an http or https URL/],
    ['https://user:pass@93.184.215.14/hook', /must not carry credentials/],
  ])('refuses %s without VOUCH_ALLOW_PRIVATE_URLS', async (url, reason) => {
    const org = await ctx.org();
    const attempt = setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' }, { url }, strict);
    await expect(attempt).rejects.toBeInstanceOf(WebhookEndpointError);
    await expect(attempt).rejects.toThrow(reason);
    expect(await getWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' })).toBeUndefined();
  });

  it('accepts a loopback URL with VOUCH_ALLOW_PRIVATE_URLS, and a public one without', async () => {
    const org = await ctx.org();
    await expect(setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' }, { url: 'http://127.0.0.1:9/hook' }, lenient)).resolves.toMatchObject({
      url: 'http://127.0.0.1:9/hook',
    });
    await expect(setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'live' }, { url: PUBLIC_URL }, strict)).resolves.toMatchObject({ url: PUBLIC_URL });
  });

  it('refuses an unknown organization', async () => {
    for (const orgId of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      await expect(setWebhookEndpoint(ctx.database.db, { orgId, mode: 'test' }, { url: PUBLIC_URL }, strict)).rejects.toThrow(`no organization ${orgId}`);
    }
  });

  it('makes a secret on the first set, keeps it when only the URL changes, and has one per mode', async () => {
    const org = await ctx.org();
    const first = await setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' }, { url: PUBLIC_URL }, strict);
    expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(first.previousSecretExpiresAt).toBeNull();
    const moved = await setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' }, { url: `${PUBLIC_URL}/v2` }, strict);
    expect(moved).toMatchObject({ url: `${PUBLIC_URL}/v2`, secret: first.secret, previousSecretExpiresAt: null });
    const live = await setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'live' }, { url: PUBLIC_URL }, strict);
    expect(live.secret).not.toBe(first.secret);
    expect(await getWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' })).toMatchObject({ url: `${PUBLIC_URL}/v2`, secret: first.secret });
  });

  it('rotates with --rotate or rotate-secret, keeping the old secret for 24 hours from the rotation', async () => {
    const org = await ctx.org();
    const now = new Date('2026-03-01T10:00:00Z');
    const scope = { orgId: org.id, mode: 'live' as const };
    await expect(rotateWebhookSecret(ctx.database.db, scope)).rejects.toThrow('has no live webhook endpoint');
    const first = await setWebhookEndpoint(ctx.database.db, scope, { url: PUBLIC_URL }, strict);
    const viaSet = await setWebhookEndpoint(ctx.database.db, scope, { url: PUBLIC_URL, rotate: true }, { ...strict, now: () => now, generateSecret: () => 'whsec_AAAA' });
    expect(viaSet.secret).toBe('whsec_AAAA');
    expect(viaSet.previousSecretExpiresAt).toEqual(new Date(now.getTime() + PREVIOUS_SECRET_VALIDITY_MS));
    expect(first.secret).not.toBe(viaSet.secret);
    const viaRotate = await rotateWebhookSecret(ctx.database.db, scope, { now: () => now });
    expect(viaRotate.secret).toMatch(/^whsec_/);
    expect(viaRotate.secret).not.toBe('whsec_AAAA');
    expect(viaRotate.previousSecretExpiresAt).toEqual(new Date('2026-03-02T10:00:00Z'));
  });
});

describe('signature header', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('carries one v1 signature per secret, each verifiable by standardwebhooks on its own', () => {
    const now = new Date('2026-03-01T10:00:00Z');
    vi.useFakeTimers({ now });
    const [current, previous, unrelated] = [generateWebhookSecret(), generateWebhookSecret(), generateWebhookSecret()];
    const body = JSON.stringify({ type: 'address.completed', timestamp: now.toISOString(), data: { id: 1 } });
    const header = signatureHeader([new Webhook(current), new Webhook(previous)], 'msg_1', now, body);
    expect(header).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(now.getTime() / 1000), 'webhook-signature': header };
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(unrelated).verify(body, headers)).toThrow('No matching signature found');
    expect(() => new Webhook(current).verify(body.replace('1}', '2}'), headers)).toThrow('No matching signature found');
  });
});
