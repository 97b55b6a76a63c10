import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_TIMEOUT_MS } from '../../src/app.js';
import { FRAMES_LIMIT } from '../../src/sessions/end-user-routes.js';
import { ATTEMPT_TTL_MS } from '../../src/sessions/liveness.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { httpClient, SANDBOX, tokenOf, type HttpClient } from './fixtures.js';

/**
 * The frames upload over a raw socket (docs/sessions.md, "Limits"; docs/security.md): a body
 * announced larger than the frames form can be is refused with 413 before a byte of it is read,
 * instead of the server waiting for bytes that never come; and no request body may take longer
 * than REQUEST_TIMEOUT_MS to arrive (docs/deploy.md).
 */

describe('verification sessions: the frames upload is bounded in size and time', () => {
  let t: TestContext;
  let http: HttpClient;
  let port: number;

  beforeAll(async () => {
    t = await buildTestContext();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    http = httpClient(base);
    port = Number(new URL(base).port);
  });
  afterAll(async () => {
    await t.close();
  });

  /** Sends `head` and `body` on a new connection; resolves with what the server wrote before `waitMs`, or closed. */
  function raw(head: string, body: string, waitMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      const done = () => {
        clearTimeout(timer);
        socket.destroy();
        resolve(received);
      };
      const timer = setTimeout(done, waitMs);
      socket.on('data', (chunk) => {
        received += chunk.toString('utf8');
        if (/\r\n\r\n[\s\S]*\}$/.test(received)) done();
      });
      socket.on('end', done);
      socket.on('error', reject);
      socket.write(head + body);
    });
  }

  async function openAttempt() {
    const org = await t.org();
    const created = (await http.post('/v1/verifications/sessions', org.testSecret, { checks: { liveness: true, faceMatch: false } })).json().data;
    const token = tokenOf(created.url);
    await http.post(`/verify/api/${token}/consent`, undefined, { accepted: true });
    expect((await http.post(`/verify/api/${token}/id`, undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber })).json().step).toBe('liveness');
    const { attemptId } = (await http.post(`/verify/api/${token}/liveness/attempts`, undefined, {})).json();
    return `/verify/api/${token}/liveness/attempts/${attemptId}/frames`;
  }

  it('a Content-Length over the frames limit is answered 413 at once, in the end-user API style, without reading the body', async () => {
    const path = await openAttempt();
    const started = Date.now();
    const answer = await raw(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=vouch\r\nContent-Length: 99999999\r\n\r\n`,
      '--vou',
      10_000,
    );
    expect(answer, 'no answer within 10 s').toMatch(/^HTTP\/1\.1 413 /);
    expect(Date.now() - started).toBeLessThan(5_000);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ status: 'error', code: 'PAYLOAD_TOO_LARGE', message: expect.stringMatching(/At most 25 frames/) });
    // The attempt was not spent: it still takes frames.
    expect((await http.get(path.replace(/\/liveness\/.*$/, ''))).json()).toMatchObject({ step: 'liveness', lastAttempt: null });
  });

  it('a multipart Content-Type with parameters in other cases is recognised too; a body within the limit is read as usual', async () => {
    const path = await openAttempt();
    const tooLarge = await raw(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: Multipart/Form-Data;boundary=x\r\nContent-Length: ${FRAMES_LIMIT + 1}\r\n\r\n`, '', 10_000);
    expect(tooLarge).toMatch(/^HTTP\/1\.1 413 /);
    const form = '--x\r\nContent-Disposition: form-data; name="timestamps"\r\n\r\n[0]\r\n--x--\r\n';
    const small = await raw(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${form.length}\r\n\r\n`, form, 10_000);
    expect(small).toMatch(/^HTTP\/1\.1 400 /);
    expect(small).toMatch(/Send the frames as files named/);
  });

  it('every request body must arrive within REQUEST_TIMEOUT_MS, which a slow phone can still meet with the largest frames form', () => {
    expect(t.app.server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    // The largest frames form at 256 kbit/s, a poor mobile uplink, arrives within the limit...
    expect(((FRAMES_LIMIT * 8) / 256_000) * 1000).toBeLessThan(REQUEST_TIMEOUT_MS);
    // ...and the limit is no shorter than an attempt's life: frames that arrive in time for it are never cut.
    expect(REQUEST_TIMEOUT_MS).toBeGreaterThanOrEqual(ATTEMPT_TTL_MS);
  });
});
