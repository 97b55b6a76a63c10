import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKey, signFileUrl } from '../../src/files/urls.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { GUARANTOR_BODY, linkOf } from '../respondents/fixtures.js';

/**
 * The request log never holds a bearer-like value from a URL: a respondent's link token or a
 * signed file URL's signature. The log stream is captured whole (every line the app wrote).
 */
describe('request logs: respondent tokens and file signatures', () => {
  let t: TestContext;

  beforeAll(async () => {
    t = await buildTestContext({ config: { logLevel: 'debug' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const incoming = () =>
    t.logs
      .map((line) => JSON.parse(line) as { msg: string; req?: { method: string; url: string } })
      .filter((entry) => entry.msg === 'incoming request')
      .map((entry) => `${entry.req!.method} ${entry.req!.url}`);

  it('replaces the token of a respondent link with a marker, whatever the method or outcome', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const created = await t.app.inject({ method: 'POST', url: '/v1/verifications/guarantors', headers: bearer(org.testSecret), payload: GUARANTOR_BODY });
    expect(created.statusCode, created.body).toBe(201);
    const { token } = await linkOf(t.database.db, 'guarantor_request', created.json().data.id);
    t.logs.length = 0;

    const answers = [];
    for (const [method, url] of [
      ['GET', `/respond/${token}`],
      ['HEAD', `/respond/${token}`],
      ['OPTIONS', `/respond/${token}`],
      ['PUT', `/respond/${token}`],
      ['DELETE', `/respond/${token}?from=sms`],
      ['GET', `/respond/${token}/%E0%A4%A`],
      ['GET', `//respond/${token}`],
    ] as const) {
      answers.push((await t.app.inject({ method, url })).statusCode);
    }
    // A doubled slash reaches the same route (docs/errors.md): the page answers, and its log line is redacted too.
    expect(answers).toEqual([200, 200, 404, 404, 404, 400, 200]);

    const logs = t.logs.join('');
    expect(logs).not.toContain(token);
    // The requests are still there to see, with the marker in place of the token.
    expect(incoming()).toEqual(
      expect.arrayContaining([
        'OPTIONS /respond/[redacted]',
        'PUT /respond/[redacted]',
        'DELETE /respond/[redacted]?[redacted]',
        'GET /respond/[redacted]',
      ]),
    );
  });

  it('drops the signature of a signed file URL, however the URL arrives', async () => {
    const { testSecret } = await t.org();
    const key = await loadSigningKey(t.database.db);
    const id = randomUUID();
    const expires = Math.floor(Date.now() / 1000) + 3600;
    const signature = signFileUrl(key, id, expires);
    t.logs.length = 0;

    for (const url of [
      `/v1/files/${id}?expires=${expires}&signature=${signature}`,
      // The `?` percent-encoded by a client that escaped the whole link: all of it is path now.
      `/v1/files/${id}%3Fexpires=${expires}%26signature=${signature}`,
      `/v1/files/${id}&signature=${signature}`,
    ]) {
      const res = await t.app.inject({ method: 'GET', url, headers: bearer(testSecret) });
      expect(res.statusCode, url).toBeLessThan(500);
    }

    const logs = t.logs.join('');
    expect(logs).not.toContain(signature);
    expect(logs).not.toContain(String(expires));
    // The file id (not a secret) stays, so the request can still be traced.
    expect(incoming()).toEqual(expect.arrayContaining([`GET /v1/files/${id}?[redacted]`]));
    expect(incoming().filter((line) => line.startsWith(`GET /v1/files/${id}`))).toHaveLength(3);
  });

  it('drops the identity number or phone of a lookup, however many slashes the path has', async () => {
    const { testSecret } = await t.org();
    t.logs.length = 0;
    const lookups = [
      ['//v1/verifications/identities/drivers_license/KJA83927AA02', 'KJA83927AA02'],
      ['/v1//verifications/identities/nin_phone/0805-123-4567', '0805-123-4567'],
      ['/v1/verifications/identities/vin//90F5B1234C567890123', '90F5B1234C'],
    ] as const;
    for (const [url] of lookups) {
      const res = await t.app.inject({ method: 'POST', url, headers: bearer(testSecret), payload: {} });
      // The router takes these paths (docs/errors.md): each reached its lookup.
      expect(res.statusCode, url).toBeLessThan(404);
    }
    const logs = t.logs.join('');
    for (const [url, value] of lookups) expect(logs, url).not.toContain(value);
    expect(incoming().filter((line) => /^POST \/v1\/verifications\/identities\/(drivers_license|nin_phone|vin)\/\[redacted\]$/.test(line))).toHaveLength(3);
  });
});
