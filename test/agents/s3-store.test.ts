import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { amzDate, S3FileStore, S3StoreError, signRequest } from '../../src/files/s3.js';
import { buildTestContext } from '../helpers/app.js';
import { ADDRESS_BODY, client, multipartBody } from './fixtures.js';

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const EXAMPLE = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1' };

describe('Signature Version 4', () => {
  // The two S3 examples of AWS's "Signature Calculations for the Authorization Header" page.
  const at = new Date('2013-05-24T00:00:00Z');

  it('signs the documented GET Object example', () => {
    const empty = sha256('');
    const headers = { Host: 'examplebucket.s3.amazonaws.com', Range: 'bytes=0-9', 'x-amz-content-sha256': empty, 'x-amz-date': amzDate(at) };
    expect(signRequest({ method: 'GET', path: '/test.txt', headers, payloadHash: empty }, EXAMPLE, at)).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('signs the documented PUT Object example (a path character to encode, a body)', () => {
    const body = sha256('Welcome to Amazon S3.');
    const headers = {
      Host: 'examplebucket.s3.amazonaws.com',
      Date: 'Fri, 24 May 2013 00:00:00 GMT',
      'x-amz-storage-class': 'REDUCED_REDUNDANCY',
      'x-amz-content-sha256': body,
      'x-amz-date': '20130524T000000Z',
    };
    expect(signRequest({ method: 'PUT', path: '/test$file.text', headers, payloadHash: body }, EXAMPLE, at)).toMatch(
      /SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd$/,
    );
  });
});

/** A loopback stand-in for an S3 bucket: checks each request's signature and payload hash, keeps objects in memory. */
async function fakeBucket(credentials: typeof EXAMPLE) {
  const objects = new Map<string, { body: Buffer; type: string }>();
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = decodeURIComponent(new URL(req.url!, 'http://x').pathname);
      seen.push(`${req.method} ${path}`);
      const headers: Record<string, string> = { host: req.headers.host!, 'x-amz-content-sha256': String(req.headers['x-amz-content-sha256']), 'x-amz-date': String(req.headers['x-amz-date']) };
      if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
      const date = String(req.headers['x-amz-date']).replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z');
      const expected = signRequest({ method: req.method!, path, headers, payloadHash: headers['x-amz-content-sha256']! }, credentials, new Date(date));
      if (req.headers.authorization !== expected || sha256(body) !== headers['x-amz-content-sha256']) {
        res.writeHead(403).end('<Error><Code>SignatureDoesNotMatch</Code></Error>');
        return;
      }
      if (req.method === 'PUT') {
        objects.set(path, { body, type: String(req.headers['content-type']) });
        res.writeHead(200).end();
      } else if (req.method === 'GET') {
        const object = objects.get(path);
        if (!object) res.writeHead(404).end('<Error><Code>NoSuchKey</Code></Error>');
        else res.writeHead(200, { 'content-type': object.type }).end(object.body);
      } else if (req.method === 'DELETE') {
        objects.delete(path);
        res.writeHead(204).end();
      } else res.writeHead(405).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    objects,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('S3 file store', () => {
  let bucket: Awaited<ReturnType<typeof fakeBucket>>;
  const id = '3f2a1c9e-1111-4222-8333-444455556666';

  beforeAll(async () => {
    bucket = await fakeBucket(EXAMPLE);
  });
  afterAll(() => bucket.close());

  const config = () => ({ endpoint: bucket.endpoint, bucket: 'vouch-photos', region: 'us-east-1', accessKeyId: EXAMPLE.accessKeyId, secretAccessKey: EXAMPLE.secretAccessKey });

  it('puts, gets and deletes objects under <bucket>/files/<id>, signed', async () => {
    const store = new S3FileStore(config());
    await store.put(id, Buffer.from('jpeg bytes'), 'image/jpeg');
    expect(bucket.objects.get(`/vouch-photos/files/${id}`)).toEqual({ body: Buffer.from('jpeg bytes'), type: 'image/jpeg' });
    expect((await store.get(id))!.toString()).toBe('jpeg bytes');
    await store.delete(id);
    expect(await store.get(id)).toBeUndefined();
    expect(bucket.seen.slice(-4)).toEqual([`PUT /vouch-photos/files/${id}`, `GET /vouch-photos/files/${id}`, `DELETE /vouch-photos/files/${id}`, `GET /vouch-photos/files/${id}`]);
  });

  it('reports a refused request (wrong secret) as an error naming the status', async () => {
    const store = new S3FileStore({ ...config(), secretAccessKey: 'wrong' });
    await expect(store.put(id, Buffer.from('x'), 'image/png')).rejects.toThrow(S3StoreError);
    await expect(store.get(id)).rejects.toThrow(/answered 403/);
  });

  it('keeps visit photos in the bucket when S3 is configured, served through the signed URLs', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-s3-'));
    const t = await buildTestContext({ config: { dataDir, s3: config() } });
    try {
      const org = await t.org({ riskLevel: 'LOW', fund: 10_000_000 });
      const agent = await createAgent(t.database.db, { name: 'S3 Agent', email: 's3@agents.example', phone: '08031238888', states: ['Lagos'] });
      const http = client(t.app);
      const created = (await http.post('/v1/verifications/addresses', org.liveSecret, ADDRESS_BODY)).json().data;
      const jpeg = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } }).jpeg().toBuffer();
      const form = multipartBody({ outcome: 'verified', latitude: 6.45, longitude: 3.47 }, [{ filename: 'a.jpg', type: 'image/jpeg', bytes: jpeg }]);
      const res = await t.app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${created.id}/report`, headers: { authorization: `Bearer ${agent.credential}`, ...form.headers }, payload: form.payload });
      expect(res.statusCode, res.body).toBe(200);
      const [photo] = (await http.get(`/v1/verifications/addresses/${created.id}`, org.liveSecret)).json().data.photos;
      const fileId = new URL(photo).pathname.split('/').pop()!;
      expect(bucket.objects.get(`/vouch-photos/files/${fileId}`)?.body.equals(jpeg)).toBe(true);
      const download = await t.app.inject({ method: 'GET', url: new URL(photo).pathname + new URL(photo).search });
      expect(download.statusCode).toBe(200);
      expect(download.rawPayload.equals(jpeg)).toBe(true);
      await expect(fs.readdir(path.join(dataDir, 'files'))).rejects.toThrow();
    } finally {
      await t.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
