import net from 'node:net';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService } from '../../src/accounts/service.js';
import { buildApp, REQUEST_TIMEOUT_MS } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { FRAMES_LIMIT } from '../../src/sessions/end-user-routes.js';
import { FRAME_UPLOAD_TIMEOUT_MS, FrameUploadPlaces } from '../../src/sessions/frame-upload-places.js';
import { ATTEMPT_TTL_MS } from '../../src/sessions/liveness.js';
import { testConfig } from '../helpers/app.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { httpClient, SANDBOX, tokenOf, until, type HttpClient } from './fixtures.js';

/**
 * The frames upload over a raw socket (docs/sessions.md, "Limits"; docs/security.md): a body
 * announced larger than the frames form can be is refused with 413 before a byte of it is read;
 * an upload whose token, session or attempt would be refused is answered before its body is read,
 * and its connection closed; uploads in flight are capped per client address (429), per process
 * (503) and per attempt (409), and their places come back however they end; an upload must arrive
 * within an attempt's life, and no request body may take longer than REQUEST_TIMEOUT_MS.
 */

const LIMITS = { perAddress: 2, perProcess: 3 };
/** The second app's upload deadline: short enough to wait out. */
const SHORT_TIMEOUT_MS = 1_000;
const BOUNDARY = 'vouch';
/** The start of a frames form: the timestamps, then a frame whose bytes are still to come. */
const FORM_START = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="timestamps"\r\n\r\n[0]\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="frame"; filename="f.jpg"\r\nContent-Type: image/jpeg\r\n\r\n\xff\xd8\xff`;
/** A whole form without frames: read to its end and answered 400. */
const FORM_WITHOUT_FRAMES = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="timestamps"\r\n\r\n[0]\r\n--${BOUNDARY}--\r\n`;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** Whether the server closed the connection. */
  closed: boolean;
}

/** An upload over its own connection whose body arrives only as far as the test writes it. */
interface Upload {
  socket: net.Socket;
  /** The server's answer, once it has answered and closed the connection, or as things stand after `ms`. */
  settled(ms?: number): Promise<Answer | undefined>;
}

describe('verification sessions: the frames upload is bounded in size, time and number', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  /** An app on the same database whose uploads must arrive within SHORT_TIMEOUT_MS. */
  let hasty: FastifyInstance;
  const places = new FrameUploadPlaces(LIMITS);
  const hastyPlaces = new FrameUploadPlaces(LIMITS, SHORT_TIMEOUT_MS);
  let accounts: AccountsService;
  let http: HttpClient;
  let port: number;
  let hastyPort: number;
  let counter = 0;
  const open: net.Socket[] = [];

  beforeAll(async () => {
    database = await openTestDatabase();
    // The test's sockets stand for clients behind one proxy, on 127.0.0.1: X-Forwarded-For gives their addresses.
    const config = testConfig({ logLevel: 'warn', trustProxy: ['127.0.0.1'], frameUploads: LIMITS });
    app = await buildApp({ config, database, frameUploads: places });
    hasty = await buildApp({ config, database, frameUploads: hastyPlaces });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    http = httpClient(base);
    port = Number(new URL(base).port);
    hastyPort = Number(new URL(await hasty.listen({ port: 0, host: '127.0.0.1' })).port);
    accounts = new AccountsService(database.db);
  });
  afterAll(async () => {
    for (const socket of open) socket.destroy();
    await app?.close();
    await hasty?.close();
    await database?.cleanup();
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

  /**
   * Starts a frames upload to `path` from `from` (X-Forwarded-For), announcing a form just within
   * the limit, and writes `body` of it: the rest never comes unless the test writes it.
   */
  function upload(path: string, { from = '203.0.113.1', body = FORM_START, length = FRAMES_LIMIT - 1, to = port }: { from?: string; body?: string | Buffer; length?: number; to?: number } = {}): Upload {
    const socket = net.connect(to, '127.0.0.1');
    open.push(socket);
    // A refusal closes the connection while the body is still being written: the writes then fail.
    socket.on('error', () => undefined);
    const chunks: Buffer[] = [];
    let answered!: () => void;
    const whole = new Promise<void>((resolve) => (answered = resolve));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (complete(Buffer.concat(chunks))) answered();
    });
    const closed = new Promise<void>((resolve) => socket.once('end', resolve).once('close', resolve));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: ${from}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n`);
    socket.write(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
    return {
      socket,
      async settled(ms = 5_000) {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
        let ended = false;
        void closed.then(() => (ended = true));
        // An answer that keeps the connection open is whole with its body; one that closes it, once closed.
        const keptOpen = whole.then(() => (/\r\nconnection: *close\r\n/i.test(Buffer.concat(chunks).toString('latin1')) ? new Promise<void>(() => undefined) : undefined));
        await Promise.race([closed, late, keptOpen]);
        clearTimeout(timer);
        return parse(Buffer.concat(chunks).toString('utf8'), ended);
      },
    };
  }

  /** Whether `received` holds a whole answer (its headers, and as many body bytes as they announce). */
  function complete(received: Buffer): boolean {
    const split = received.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: *(\d+)/i.exec(received.subarray(0, split).toString('latin1'));
    return split >= 0 && length !== null && received.length - split - 4 >= Number(length[1]);
  }

  function parse(text: string, closed: boolean): Answer | undefined {
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
    if (!status) return undefined;
    const split = text.indexOf('\r\n\r\n');
    const headers = Object.fromEntries(
      text
        .slice(0, split)
        .split('\r\n')
        .slice(1)
        .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    return { status: Number(status[1]), headers, body: JSON.parse(text.slice(split + 4)), closed };
  }

  /** An answer given at once: the body was not waited for, and the connection is closed. */
  async function refusedAtOnce(pending: Upload, status: number, code: string): Promise<Answer> {
    const answer = await pending.settled();
    expect(answer, 'no answer, or the connection stayed open, within 5 s').toMatchObject({ status, body: { status: 'error', code, message: expect.any(String) }, closed: true });
    expect(answer!.headers.connection).toBe('close');
    return answer!;
  }

  /** A session at the liveness step with an open attempt; the path its frames are sent to. */
  async function openAttempt() {
    const org = await accounts.create({ name: `Uploads ${++counter}`, enabled: true, riskLevel: 'NONE', payloadType: 'FULL', fund: 100_000 });
    const created = (await http.post('/v1/verifications/sessions', org.testSecret, { checks: { liveness: true, faceMatch: false } })).json().data;
    const token = tokenOf(created.url);
    await http.post(`/verify/api/${token}/consent`, undefined, { accepted: true });
    expect((await http.post(`/verify/api/${token}/id`, undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber })).json().step).toBe('liveness');
    const { attemptId } = (await http.post(`/verify/api/${token}/liveness/attempts`, undefined, {})).json();
    return { token, attemptId: attemptId as string, path: `/verify/api/${token}/liveness/attempts/${attemptId}/frames` };
  }

  /** Waits until the uploads in flight from `from` and in all are as given. */
  const held = (from: string, address: number, total: number, watched = places) =>
    until(() => {
      const now = watched.inUse(from);
      return now.address === address && now.total === total;
    }, `${address} uploads in flight from ${from}, ${total} in all`);

  /** Closes the test's open uploads and waits until their places are back. */
  async function dropAll(): Promise<void> {
    for (const socket of open.splice(0)) socket.destroy();
    await until(() => places.inUse('').total === 0 && hastyPlaces.inUse('').total === 0, 'every place given back');
  }

  it('a Content-Length over the frames limit is answered 413 at once, in the end-user API style, without reading the body', async () => {
    const { path, token } = await openAttempt();
    const started = Date.now();
    const answer = await raw(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=vouch\r\nContent-Length: 99999999\r\n\r\n`,
      '--vou',
      10_000,
    );
    expect(answer, 'no answer within 10 s').toMatch(/^HTTP\/1\.1 413 /);
    expect(Date.now() - started).toBeLessThan(5_000);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ status: 'error', code: 'PAYLOAD_TOO_LARGE', message: expect.stringMatching(/At most 25 frames/) , requestId: expect.stringMatching(/^req_/) });
    // The attempt was not spent: it still takes frames.
    expect((await http.get(`/verify/api/${token}`)).json()).toMatchObject({ step: 'liveness', lastAttempt: null });
  });

  it('a multipart Content-Type with parameters in other cases is recognised too; a body within the limit is read as usual', async () => {
    const { path } = await openAttempt();
    const tooLarge = await raw(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: Multipart/Form-Data;boundary=x\r\nContent-Length: ${FRAMES_LIMIT + 1}\r\n\r\n`, '', 10_000);
    expect(tooLarge).toMatch(/^HTTP\/1\.1 413 /);
    const form = '--x\r\nContent-Disposition: form-data; name="timestamps"\r\n\r\n[0]\r\n--x--\r\n';
    const small = await raw(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${form.length}\r\n\r\n`, form, 10_000);
    expect(small).toMatch(/^HTTP\/1\.1 400 /);
    expect(small).toMatch(/Send the frames as files named/);
  });

  it('an upload with a token that opens nothing is answered 404 before its body arrives, and its connection closed', async () => {
    const unknown = `/verify/api/${'A'.repeat(43)}/liveness/attempts/att_${'0'.repeat(24)}/frames`;
    const notAToken = '/verify/api/nope/liveness/attempts/nope/frames';
    for (const path of [unknown, notAToken]) {
      const answer = await refusedAtOnce(upload(path), 404, 'NOT_FOUND_ERROR');
      expect(answer.body.message).toMatch(/link is not valid/);
    }
    // A token of a session, with an attempt that is not one of its own.
    const { token } = await openAttempt();
    await refusedAtOnce(upload(`/verify/api/${token}/liveness/attempts/att_${'0'.repeat(24)}/frames`), 404, 'NOT_FOUND_ERROR');
    expect(places.inUse('203.0.113.1').total).toBe(0);
  });

  it('an upload to an attempt already answered or expired, or of a session that ended, is answered 409 before its body arrives', async () => {
    const answered = await openAttempt();
    await database.db.updateTable('session_liveness_attempts').set({ status: 'failed' }).where('id', '=', answered.attemptId).execute();
    expect((await refusedAtOnce(upload(answered.path), 409, 'CONFLICT')).body.message).toMatch(/already answered/);

    const expired = await openAttempt();
    await database.db.updateTable('session_liveness_attempts').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', expired.attemptId).execute();
    expect((await refusedAtOnce(upload(expired.path), 409, 'CONFLICT')).body.message).toMatch(/time for these challenges is up/);

    const cancelled = await openAttempt();
    expect((await http.post(`/verify/api/${cancelled.token}/cancel`, undefined, {})).status).toBe(200);
    expect((await refusedAtOnce(upload(cancelled.path), 409, 'CONFLICT')).body.message).toMatch(/already ended/);
  });

  it('a second upload of an attempt while the first is in flight is answered 409 at once', async () => {
    const { path } = await openAttempt();
    upload(path, { from: '203.0.113.7' });
    await held('203.0.113.7', 1, 1);
    expect((await refusedAtOnce(upload(path, { from: '203.0.113.8' }), 409, 'CONFLICT')).body.message).toMatch(/already being sent/);
    await dropAll();
  });

  it('uploads in flight from one address are capped (429 with Retry-After, at once); another address is still served', async () => {
    const [first, second, third, other] = [await openAttempt(), await openAttempt(), await openAttempt(), await openAttempt()];
    upload(first.path, { from: '198.51.100.10' });
    upload(second.path, { from: '198.51.100.10' });
    await held('198.51.100.10', 2, 2);
    const refused = await refusedAtOnce(upload(third.path, { from: '198.51.100.10' }), 429, 'RATE_LIMITED');
    expect(refused.headers['retry-after']).toBe('5');
    // An IPv6 client counts by its /64: another address in it is the same client.
    upload(third.path, { from: '2001:db8:1:2::1' });
    await held('2001:db8:1:2::/64', 1, 3);
    await dropAll();
    upload(first.path, { from: '2001:db8:1:2::1' });
    upload(second.path, { from: '2001:db8:1:2:aaaa::9' });
    await held('2001:db8:1:2::/64', 2, 2);
    await refusedAtOnce(upload(third.path, { from: '2001:db8:1:2:ffff::1' }), 429, 'RATE_LIMITED');
    // Another client is served: its form is read to the end and answered.
    const served = await upload(other.path, { from: '198.51.100.20', body: FORM_WITHOUT_FRAMES, length: FORM_WITHOUT_FRAMES.length }).settled();
    expect(served).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', message: expect.stringMatching(/Send the frames as files named/) } });
    await dropAll();
  });

  it('uploads in flight in the process are capped (503 with Retry-After, at once)', async () => {
    const attempts = [await openAttempt(), await openAttempt(), await openAttempt(), await openAttempt()];
    for (const [i, attempt] of attempts.slice(0, 3).entries()) upload(attempt.path, { from: `192.0.2.${i + 1}` });
    await until(() => places.inUse('').total === 3, 'three uploads in flight');
    const refused = await refusedAtOnce(upload(attempts[3]!.path, { from: '192.0.2.99' }), 503, 'SERVICE_UNAVAILABLE');
    expect(refused.headers['retry-after']).toBe('5');
    await dropAll();
  });

  it('an upload whose client goes away gives its places back; its attempt was not spent', async () => {
    const [first, second, third] = [await openAttempt(), await openAttempt(), await openAttempt()];
    const dropped = upload(first.path, { from: '198.51.100.30' });
    upload(second.path, { from: '198.51.100.30' });
    await held('198.51.100.30', 2, 2);
    await refusedAtOnce(upload(third.path, { from: '198.51.100.30' }), 429, 'RATE_LIMITED');
    dropped.socket.destroy();
    await held('198.51.100.30', 1, 1);
    // The address has a place again, and the dropped attempt takes frames again.
    upload(third.path, { from: '198.51.100.30' });
    await held('198.51.100.30', 2, 2);
    const again = await upload(first.path, { from: '198.51.100.31', body: FORM_WITHOUT_FRAMES, length: FORM_WITHOUT_FRAMES.length }).settled();
    expect(again).toMatchObject({ status: 400, body: { message: expect.stringMatching(/Send the frames as files named/) } });
    await dropAll();
    expect((await http.get(`/verify/api/${first.token}`)).json()).toMatchObject({ step: 'liveness', lastAttempt: null });
  });

  it('an upload must arrive within its deadline: 408, its connection closed and its place given back; the attempt was not spent', async () => {
    const { path, token } = await openAttempt();
    const started = Date.now();
    const late = upload(path, { to: hastyPort });
    await held('203.0.113.1', 1, 1, hastyPlaces);
    const answer = await late.settled(SHORT_TIMEOUT_MS + 5_000);
    expect(answer).toMatchObject({ status: 408, body: { status: 'error', code: 'REQUEST_TIMEOUT' }, closed: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS);
    await held('203.0.113.1', 0, 0, hastyPlaces);
    expect((await http.get(`/verify/api/${token}`)).json()).toMatchObject({ step: 'liveness', lastAttempt: null });
    await dropAll();
  });

  it('50 stalled uploads of 1 MB with a token that opens nothing leave no memory held', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const used = () => {
      gc();
      gc();
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      return heapUsed + arrayBuffers;
    };
    // Four frames of 250 KB each (within the 300 KB a frame may weigh), one buffer for every upload.
    const frame = (i: number) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="frame"; filename="${i}.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;
    const body = Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="timestamps"\r\n\r\n[0,100,200,300]\r\n`),
      ...[0, 1, 2, 3].flatMap((i) => [Buffer.from(frame(i)), Buffer.alloc(250 * 1024, 0xd8), Buffer.from('\r\n')]),
    ]);
    const path = `/verify/api/${'B'.repeat(43)}/liveness/attempts/att_${'1'.repeat(24)}/frames`;
    const before = used();
    const uploads = Array.from({ length: 50 }, (_, i) => upload(path, { from: `192.0.2.${100 + i}`, body }));
    const answers = await Promise.all(uploads.map((pending) => pending.settled(10_000)));
    const grown = used() - before;
    expect(grown, `memory grew ${(grown / 1024 / 1024).toFixed(1)} MB`).toBeLessThan(16 * 1024 * 1024);
    for (const answer of answers) expect(answer).toMatchObject({ status: 404, closed: true });
    await dropAll();
  });

  it('every request body must arrive within REQUEST_TIMEOUT_MS, a frames form within an attempt\'s life', () => {
    expect(app.server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    // The largest frames form at 256 kbit/s, a poor mobile uplink, arrives within the limit...
    expect(((FRAMES_LIMIT * 8) / 256_000) * 1000).toBeLessThan(REQUEST_TIMEOUT_MS);
    // ...and the limit is no shorter than an attempt's life: frames that arrive in time for it are never cut.
    expect(REQUEST_TIMEOUT_MS).toBeGreaterThanOrEqual(ATTEMPT_TTL_MS);
    // An upload still arriving after an attempt's whole life would find it expired: it holds its place no longer.
    expect(FRAME_UPLOAD_TIMEOUT_MS).toBe(ATTEMPT_TTL_MS);
    expect(places.timeoutMs).toBe(FRAME_UPLOAD_TIMEOUT_MS);
  });

  it('the caps are configuration, checked at start', () => {
    expect(loadConfig({}).frameUploads).toEqual({ perAddress: 8, perProcess: 32 });
    expect(loadConfig({ VOUCH_FRAME_UPLOADS_PER_ADDRESS: '2', VOUCH_FRAME_UPLOADS_PER_PROCESS: '100' }).frameUploads).toEqual({ perAddress: 2, perProcess: 100 });
    expect(() => loadConfig({ VOUCH_FRAME_UPLOADS_PER_ADDRESS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ VOUCH_FRAME_UPLOADS_PER_PROCESS: 'lots' })).toThrow(/^VOUCH_FRAME_UPLOADS_PER_PROCESS: must be a whole number/);
  });
});
