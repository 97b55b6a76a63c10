import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

const BVN_PATH = '/v1/verifications/identities/bvn/22345678901';

describe('authentication and error styles of identity endpoints', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await buildTestContext();
  });
  afterAll(() => t.close());

  it('answers 401 style B without, with malformed, or with unknown credentials', async () => {
    const cases = [
      {},
      { authorization: 'Basic abc' },
      { authorization: 'Bearer ' },
      { authorization: 'Bearer sk_test_short' },
      { authorization: `Bearer sk_test_${'A'.repeat(43)}` },
      { authorization: `Bearer sk_live_${'A'.repeat(43)}` },
    ];
    for (const headers of cases) {
      const res = await t.app.inject({ method: 'POST', url: BVN_PATH, headers, payload: {} });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      expect(typeof res.json().message).toBe('string');
    }
  });

  it('answers 401 on every identity route, including GET TIN and CAC', async () => {
    const routes = [
      ['POST', '/v1/verifications/identities/bvn/22345678901/match'],
      ['POST', '/v1/verifications/identities/nin/70412358961'],
      ['POST', '/v1/verifications/identities/nin_phone/08051234567'],
      ['POST', '/v1/verifications/identities/virtual-nin/TV738291046518QK'],
      ['POST', '/v1/verifications/identities/drivers_license/KJA83927AA02'],
      ['POST', '/v1/verifications/identities/vin/90F5B1234C567890123'],
      ['POST', '/v1/verifications/identities/cac'],
      ['GET', '/v1/verifications/identities/tin/23456789-0001'],
    ] as const;
    for (const [method, url] of routes) {
      const res = await t.app.inject({ method, url });
      expect(res.statusCode, url).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    }
  });

  it('lets a test secret work before enablement and refuses the live secret with 403', async () => {
    const org = await t.org({ enabled: false });
    const test = await t.app.inject({ method: 'POST', url: BVN_PATH, headers: bearer(org.testSecret), payload: {} });
    expect(test.statusCode).toBe(200);
    const live = await t.app.inject({ method: 'POST', url: BVN_PATH, headers: bearer(org.liveSecret), payload: {} });
    expect(live.statusCode).toBe(403);
    expect(live.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    expect(live.json().message).toMatch(/awaits API access/);
  });

  it('stops accepting a rotated secret at once and accepts the new one', async () => {
    const org = await t.org();
    const fresh = await t.accounts.rotateSecret(org.id, 'test');
    const old = await t.app.inject({ method: 'POST', url: BVN_PATH, headers: bearer(org.testSecret), payload: {} });
    expect(old.statusCode).toBe(401);
    const now = await t.app.inject({ method: 'POST', url: BVN_PATH, headers: bearer(fresh), payload: {} });
    expect(now.statusCode).toBe(200);
    // The live secret is untouched by rotating the test one.
    const live = await t.app.inject({ method: 'POST', url: BVN_PATH, headers: bearer(org.liveSecret), payload: {} });
    expect(live.statusCode).not.toBe(401);
  });

  it('never stores a plain live secret; the test secret only in the column the portal shows', async () => {
    const org = await t.org();
    const rows = await t.database.db.selectFrom('api_secrets').selectAll().where('org_id', '=', org.id).execute();
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
      const { test_value, ...rest } = row;
      expect(JSON.stringify(rest)).not.toContain(org.testSecret);
      expect(JSON.stringify(row)).not.toContain(org.liveSecret);
      expect(test_value).toBe(row.mode === 'test' ? org.testSecret : null);
    }
    expect(org.testSecret).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    expect(org.liveSecret).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
  });

  describe('bad requests answer JSON in style B, never HTML or a stack', () => {
    let secret: string;
    beforeAll(async () => {
      secret = (await t.org()).testSecret;
    });

    it('malformed JSON', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: BVN_PATH,
        headers: { ...bearer(secret), 'content-type': 'application/json' },
        payload: '{"firstname": ',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(res.body).not.toMatch(/at .*\.js/);
    });

    it('wrong content type', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: BVN_PATH,
        headers: { ...bearer(secret), 'content-type': 'text/plain' },
        payload: 'firstname=Adaeze',
      });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type' });
    });

    it('wrong field types', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: BVN_PATH,
        headers: bearer(secret),
        payload: { firstname: { nested: true } },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(res.json().message).toMatch(/firstname/);
    });

    it('a JSON body that is not an object', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: BVN_PATH,
        headers: { ...bearer(secret), 'content-type': 'application/json' },
        payload: '[1,2]',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    });

    it('oversize body', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: BVN_PATH,
        headers: bearer(secret),
        payload: { firstname: 'x'.repeat(2 * 1024 * 1024) },
      });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toMatchObject({ statusCode: 413, error: 'Payload Too Large' });
    });

    it('unknown routes in the identity family and elsewhere', async () => {
      const identity = await t.app.inject({ method: 'POST', url: '/v1/verifications/identities/passport/123', headers: bearer(secret) });
      expect(identity.statusCode).toBe(404);
      expect(identity.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
      const other = await t.app.inject({ method: 'POST', url: '/nowhere' });
      expect(other.statusCode).toBe(404);
      expect(other.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
      expect(other.headers['content-type']).toMatch(/application\/json/);
      // A page address outside the APIs belongs to the web app (its router shows its own 404).
      const page = await t.app.inject({ method: 'GET', url: '/nowhere' });
      expect(page.headers['content-type']).toMatch(/text\/html/);
    });

    it('wrong method', async () => {
      const res = await t.app.inject({ method: 'GET', url: BVN_PATH, headers: bearer(secret) });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/json/);
    });
  });

  it('serves health, readiness, the OpenAPI document and the docs UI', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().status).toBe('ok');
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const paths = Object.keys(spec.paths);
    for (const path of [
      '/v1/verifications/identities/bvn/{ref}',
      '/v1/verifications/identities/bvn/{ref}/match',
      '/v1/verifications/identities/nin/{ref}',
      '/v1/verifications/identities/nin_phone/{ref}',
      '/v1/verifications/identities/virtual-nin/{vNin}',
      '/v1/verifications/identities/drivers_license/{ref}',
      '/v1/verifications/identities/vin/{ref}',
      '/v1/verifications/identities/cac',
      '/v1/verifications/identities/tin/{ref}',
    ]) {
      expect(paths, path).toContain(path);
    }
    const bvn = spec.paths['/v1/verifications/identities/bvn/{ref}'].post;
    expect(Object.keys(bvn.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '402', '404']));
    expect(bvn.responses['404'].content['application/json'].schema.properties).toHaveProperty('code');
    const docs = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toMatch(/text\/html/);
  });
});
