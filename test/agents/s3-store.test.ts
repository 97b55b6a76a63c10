import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AwsClient, AwsV4Signer } from 'aws4fetch';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { reencodePhoto } from '../../src/files/photos.js';
import { amzDate, PRESIGNED_URL_TTL_SECONDS, S3FileStore, S3StoreError } from '../../src/files/s3.js';
import { loadSigningKey, signFileUrl } from '../../src/files/urls.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { startS3Server, type S3TestServer } from '../helpers/s3-server.js';
import { ADDRESS_BODY, client, expectStyleA, multipartBody } from './fixtures.js';

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const EXAMPLE = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1', service: 's3' };
const MINUTE = 60_000;

/**
 * s3rver does not recompute Signature Version 4 signatures, so these pin aws4fetch, signing the
 * way the store signs, to the examples AWS publishes for S3 ("Signature Calculations for the
 * Authorization Header" and "Authenticating Requests: Using Query Parameters").
 */
describe('Signature Version 4 (aws4fetch) against the AWS S3 examples', () => {
  const datetime = '20130524T000000Z';

  it('signs the GET Object example (Authorization header)', async () => {
    const signer = new AwsV4Signer({
      ...EXAMPLE,
      url: 'https://examplebucket.s3.amazonaws.com/test.txt',
      method: 'GET',
      headers: { Range: 'bytes=0-9', 'x-amz-content-sha256': sha256('') },
      datetime,
      // The example signs Range, which aws4fetch leaves out unless told (the store sends no Range).
      allHeaders: true,
    });
    expect(await signer.authHeader()).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('signs the PUT Object example (a path character to encode, a hashed body)', async () => {
    const signer = new AwsV4Signer({
      ...EXAMPLE,
      url: 'https://examplebucket.s3.amazonaws.com/test$file.text',
      method: 'PUT',
      headers: { Date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY', 'x-amz-content-sha256': sha256('Welcome to Amazon S3.') },
      body: 'Welcome to Amazon S3.',
      datetime,
    });
    expect(await signer.signature()).toBe('98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd');
  });

  it('presigns the GET Object example (signQuery, as the store presigns)', async () => {
    const url = new URL('https://examplebucket.s3.amazonaws.com/test.txt');
    url.searchParams.set('X-Amz-Expires', '86400');
    const signed = await new AwsClient(EXAMPLE).sign(url, { method: 'GET', aws: { signQuery: true, datetime } });
    expect(signed.url).toBe(
      'https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Expires=86400&X-Amz-Date=20130524T000000Z&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    );
  });
});

describe('S3 file store on a real S3-compatible server (s3rver)', () => {
  let s3: S3TestServer;
  beforeAll(async () => {
    s3 = await startS3Server();
  });
  afterAll(() => s3?.close());

  it('puts, gets and deletes objects under <bucket>/files/<id>', async () => {
    const store = new S3FileStore(s3.config());
    const id = randomUUID();
    await store.put(id, Buffer.from('jpeg bytes'), 'image/jpeg');
    expect(await s3.object(`files/${id}`)).toEqual({
      body: Buffer.from('jpeg bytes'),
      contentType: 'image/jpeg',
      cacheControl: `private, max-age=${PRESIGNED_URL_TTL_SECONDS}, immutable`,
    });
    expect((await store.get(id))?.toString()).toBe('jpeg bytes');
    await store.delete(id);
    expect(await s3.object(`files/${id}`)).toBeUndefined();
    expect(await store.get(id)).toBeUndefined();
    // Deleting what is gone is not an error (an upload rolled back twice).
    await expect(store.delete(id)).resolves.toBeUndefined();
  });

  it('answers a missing object with undefined, the not-found of every FileStore', async () => {
    expect(await new S3FileStore(s3.config()).get(randomUUID())).toBeUndefined();
  });

  it('refuses ids that are not file ids before any request', async () => {
    await expect(new S3FileStore(s3.config()).get('../other-bucket/key')).rejects.toThrow(RangeError);
  });

  it('hands out presigned GET URLs valid 15 minutes from a signing time rounded down to 5 minutes', async () => {
    const now = new Date('2030-06-01T10:17:42.500Z');
    const store = new S3FileStore(s3.config(), { now: () => now });
    const id = randomUUID();
    const { url, expiresAt } = await store.directUrl(id);
    const link = new URL(url);
    expect(`${link.origin}${link.pathname}`).toBe(`${s3.endpoint}/vouch-photos/files/${id}`);
    expect(link.searchParams.get('X-Amz-Date')).toBe('20300601T101500Z');
    expect(link.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(link.searchParams.get('X-Amz-Credential')).toBe('S3RVER/20300601/us-east-1/s3/aws4_request');
    expect(link.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    expect(link.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(expiresAt.toISOString()).toBe('2030-06-01T10:30:00.000Z');
    // Within the window the URL is the same (browsers cache the photo); a different secret signs differently.
    const later = new S3FileStore(s3.config(), { now: () => new Date('2030-06-01T10:19:59Z') });
    expect((await later.directUrl(id)).url).toBe(url);
    const otherSecret = new S3FileStore(s3.config({ secretAccessKey: 'another' }), { now: () => now });
    expect(new URL((await otherSecret.directUrl(id)).url).searchParams.get('X-Amz-Signature')).not.toBe(link.searchParams.get('X-Amz-Signature'));
  });

  it('presigned URLs fetch the photo from the server without credentials, until they expire', async () => {
    const store = new S3FileStore(s3.config());
    const id = randomUUID();
    const png = await sharp({ create: { width: 3, height: 3, channels: 3, background: '#0a0' } }).png().toBuffer();
    await store.put(id, png, 'image/png');
    const fetched = await fetch((await store.directUrl(id)).url);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await fetched.arrayBuffer()).equals(png)).toBe(true);

    const signedLongAgo = new S3FileStore(s3.config(), { now: () => new Date(Date.now() - 16 * MINUTE) });
    const expired = await fetch((await signedLongAgo.directUrl(id)).url);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toMatch(/<Code>AccessDenied<\/Code>[\s\S]*Request has expired/);
  });

  it('reports wrong credentials as a store error naming the status, the code and what to check', async () => {
    const store = new S3FileStore(s3.config({ accessKeyId: 'WRONGKEY' }));
    const id = randomUUID();
    const put = await store.put(id, Buffer.from('x'), 'image/png').catch((err: unknown) => err);
    expect(put).toBeInstanceOf(S3StoreError);
    expect((put as S3StoreError).detail).toBe(
      `object store PUT ${id} answered 403 InvalidAccessKeyId The AWS Access Key Id you provided does not exist in our records. (check S3_ACCESS_KEY_ID)`,
    );
    // What a caller of the API would see: a 503 that reveals nothing.
    expect((put as S3StoreError).statusCode).toBe(503);
    expect((put as S3StoreError).message).not.toMatch(/WRONGKEY|403/);
    await expect(store.get(id)).rejects.toMatchObject({ detail: expect.stringMatching(/^object store GET .* answered 403 InvalidAccessKeyId/) });
    await expect(store.delete(id)).rejects.toThrow(S3StoreError);
  });

  it('reports a missing bucket as an error, not as a missing file', async () => {
    const store = new S3FileStore(s3.config({ bucket: 'no-such-bucket' }));
    await expect(store.get(randomUUID())).rejects.toMatchObject({ detail: expect.stringMatching(/answered 404 NoSuchBucket .*\(check S3_BUCKET\)$/) });
    await expect(store.put(randomUUID(), Buffer.from('x'), 'image/png')).rejects.toMatchObject({ detail: expect.stringMatching(/answered 404 NoSuchBucket/) });
  });

  it('dates each request by its clock (the server refuses a skewed one)', async () => {
    const store = new S3FileStore(s3.config(), { now: () => new Date(Date.now() - 60 * MINUTE) });
    await expect(store.put(randomUUID(), Buffer.from('x'), 'image/png')).rejects.toMatchObject({
      detail: expect.stringMatching(/answered 403 RequestTimeTooSkewed .*\(check this machine's clock\)$/),
    });
  });

  it('reports an unreachable store as a store error', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const store = new S3FileStore(s3.config({ endpoint: `http://127.0.0.1:${port}` }));
    const id = randomUUID();
    await expect(store.get(id)).rejects.toMatchObject({ detail: `object store GET ${id} failed: fetch failed` });
  });
});

describe('the app with photos on S3', () => {
  let s3: S3TestServer;
  let dataDir: string;
  let t: TestContext;
  let jpeg: Buffer;

  beforeAll(async () => {
    s3 = await startS3Server();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-s3-'));
    t = await buildTestContext({ config: { dataDir, s3: s3.config() } });
    jpeg = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } }).jpeg().toBuffer();
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  async function fileReport(ctx: TestContext, phone: string) {
    const org = await ctx.org({ riskLevel: 'LOW', fund: 10_000_000 });
    const agent = await createAgent(ctx.database.db, { name: 'S3 Agent', email: `${phone}@agents.example`, phone, states: ['Lagos'] });
    const created = (await client(ctx.app).post('/v1/verifications/addresses', org.liveSecret, ADDRESS_BODY)).json().data;
    // Two photos: a verified address with one is held for review (docs/field-agents.md).
    const form = multipartBody({ outcome: 'verified', latitude: 6.45, longitude: 3.47 }, [
      { filename: 'a.jpg', type: 'image/jpeg', bytes: jpeg },
      { filename: 'b.jpg', type: 'image/jpeg', bytes: jpeg },
    ]);
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/agent/tasks/address/${created.id}/report`,
      headers: { authorization: `Bearer ${agent.credential}`, ...form.headers },
      payload: form.payload,
    });
    return { org, id: created.id as number, res };
  }

  it('keeps visit photos in the bucket, encrypted; the signed photo URL serves the decrypted image', async () => {
    const { org, id, res } = await fileReport(t, '08031238888');
    expect(res.statusCode, res.body).toBe(200);
    const [photo] = (await client(t.app).get(`/v1/verifications/addresses/${id}`, org.liveSecret)).json().data.photos as string[];
    const link = new URL(photo!);
    expect(link.pathname).toMatch(/^\/v1\/files\/[0-9a-f-]{36}$/);
    const fileId = link.pathname.split('/').pop()!;
    // The bucket holds ciphertext only (docs/data-protection.md): a presigned link would serve it, so there is none.
    const object = (await s3.object(`files/${fileId}`))!.body;
    expect(object.subarray(0, 4).toString('latin1')).toBe('VXF1');
    const stored = (await reencodePhoto(jpeg)).bytes;
    expect(object.includes(stored.subarray(0, 64))).toBe(false);
    await expect(fs.readdir(path.join(dataDir, 'files'))).rejects.toThrow();

    const opened = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['content-type']).toBe('image/jpeg');
    expect(opened.headers['cache-control']).toMatch(/^private, max-age=\d+, immutable$/);
    expect(opened.rawPayload.equals(stored)).toBe(true);

    // The app still checks its own signature and the file's record before serving anything.
    const altered = await t.app.inject({ method: 'GET', url: `${link.pathname}?expires=${link.searchParams.get('expires')}&signature=${'0'.repeat(64)}` });
    expect(expectStyleA(altered, 403, 'FORBIDDEN').message).toMatch(/not valid/);
    const ghost = randomUUID();
    const expires = Math.floor(Date.now() / 1000) + 3600;
    const key = await loadSigningKey(t.database.db);
    expectStyleA(await t.app.inject({ method: 'GET', url: `/v1/files/${ghost}?expires=${expires}&signature=${signFileUrl(key, ghost, expires)}` }), 404, 'NOT_FOUND_ERROR');
  });

  it('answers a clear 503 when the bucket refuses the credentials, and logs what to check', async () => {
    const wrong = await buildTestContext({ config: { dataDir, s3: s3.config({ accessKeyId: 'WRONGKEY' }) } });
    try {
      const { res } = await fileReport(wrong, '08031238889');
      expect(expectStyleA(res, 503, 'SERVICE_UNAVAILABLE').message).toBe('The photo store is not available right now; try again shortly');
      const logs = wrong.logs.join('');
      expect(logs).toContain('InvalidAccessKeyId');
      expect(logs).toContain('check S3_ACCESS_KEY_ID');
      expect(logs).not.toContain(jpeg.toString('base64').slice(0, 40));
      // The app keeps answering.
      expect((await wrong.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    } finally {
      await wrong.close();
    }
  });
});

describe('amzDate', () => {
  it('is the x-amz-date form', () => {
    expect(amzDate(new Date('2013-05-24T00:00:00.123Z'))).toBe('20130524T000000Z');
  });
});
