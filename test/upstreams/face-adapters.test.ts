import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamFailure, type FaceMatchRequest, type ProviderFaceMatch, type UpstreamAdapter } from '../../src/identities/upstreams/adapter.js';
import { dojah } from '../../src/identities/upstreams/dojah/kind.js';
import { verifyme } from '../../src/identities/upstreams/verifyme/kind.js';
import { youverify } from '../../src/identities/upstreams/youverify/kind.js';
import { dojahFixture, startDojahServer, type DojahServer } from './dojah-server.js';
import { startServer, type TestServer } from './servers.js';
import { fixture, startYouverifyServer, type YouverifyServer } from './youverify-server.js';

/**
 * Each adapter's `compareFace` against its provider's documented answers and the ways they go
 * wrong, over real sockets: every failure is one of the lookup failure kinds, so the breaker,
 * health and 503 treat a face match as they treat a lookup. (The engines' routing is
 * test/upstreams/face-match.test.ts.)
 */

const SELFIE = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwg';
const NIN = '70123456789';
const TOKEN = 'yv_test_token_0123456789';

let dojahServer: DojahServer;
let youverifyServer: YouverifyServer;
const servers: TestServer[] = [];

beforeAll(async () => {
  [dojahServer, youverifyServer] = await Promise.all([startDojahServer(), startYouverifyServer(TOKEN)]);
  for (const server of [dojahServer, youverifyServer]) server.faces.set(NIN, new Set([SELFIE]));
});

afterAll(async () => {
  await Promise.all([dojahServer.close(), youverifyServer.close(), ...servers.map((server) => server.close())]);
});

function compare(adapter: UpstreamAdapter, request: Partial<FaceMatchRequest> = {}): Promise<ProviderFaceMatch | undefined> {
  return adapter.compareFace!({ type: 'nin', key: NIN, photoJpegBase64: SELFIE, signal: AbortSignal.timeout(5_000), ...request });
}

async function failure(promise: Promise<unknown>): Promise<UpstreamFailure> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(UpstreamFailure);
  return error as UpstreamFailure;
}

/** A provider that answers every request with one status and body. */
async function answering(status: number, body: unknown): Promise<string> {
  const server = await startServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  servers.push(server);
  return server.url;
}

describe('dojah compareFace', () => {
  const adapter = () => dojah.create({ url: dojahServer.url, secret: `${dojahServer.appId}:${dojahServer.secretKey}` });

  it('reads the documented match, non-match and not found, at the documented cut-off', async () => {
    expect(await compare(adapter())).toEqual({ match: true, confidence: 99.90354919433594, threshold: 90, maxScore: 100 });
    expect(await compare(adapter(), { photoJpegBase64: `${SELFIE}AAAA` })).toEqual({ match: false, confidence: 0, threshold: 90, maxScore: 100 });
    expect(await compare(adapter(), { key: '70123456788' })).toBeUndefined();
  });

  it('fails as the lookups do: bad credentials, a selfie field missing, an error page', async () => {
    const wrong = dojah.create({ url: dojahServer.url, secret: `${dojahServer.appId}:prod_sk_wrong` });
    expect((await failure(compare(wrong))).kind).toBe('refused');
    dojahServer.override = (documented) => {
      const body = JSON.parse(documented.body) as { entity: Record<string, unknown> };
      delete body.entity.selfie_verification;
      return { status: 200, body: JSON.stringify(body) };
    };
    expect(await failure(compare(adapter()))).toMatchObject({ kind: 'malformed', message: 'entity.selfie_verification missing' });
    dojahServer.override = () => ({ status: 404, body: '<html>Not Found</html>' });
    expect((await failure(compare(adapter()))).kind).toBe('http');
    dojahServer.override = undefined;
    // The licence has no documented selfie match: the kind does not offer it.
    expect(dojah.faceMatchTypes).toEqual(['bvn', 'nin']);
    expect(dojahFixture('nin-selfie').entity).toHaveProperty('selfie_verification');
  });
});

describe('youverify compareFace', () => {
  const adapter = () => youverify.create({ url: youverifyServer.url, secret: TOKEN });

  it("reads the verdict with the provider's own threshold, and the envelope's not_found", async () => {
    expect(await compare(adapter())).toEqual({ match: true, confidence: 96.73, threshold: 80, maxScore: 100 });
    expect(await compare(adapter(), { photoJpegBase64: `${SELFIE}AAAA` })).toEqual({ match: false, confidence: 12.5, threshold: 80, maxScore: 100 });
    expect(await compare(adapter(), { key: '70123456788' })).toBeUndefined();
    expect(youverify.faceMatchTypes).toEqual(['nin']);
  });

  it('never makes a verdict of an answer without one, or of "could not compare" (-1)', async () => {
    const found = fixture('nin-found');
    const withoutBlock = youverify.create({ url: await answering(200, found), secret: TOKEN });
    expect(await failure(compare(withoutBlock))).toMatchObject({ kind: 'malformed', message: 'data.validations.selfie.selfieVerification missing' });
    const minusOne = { ...found, data: { ...(found.data as object), validations: { selfie: { selfieVerification: { confidenceLevel: -1, threshold: 80, match: false } } } } };
    const unprocessed = youverify.create({ url: await answering(200, minusOne), secret: TOKEN });
    expect((await failure(compare(unprocessed))).message).toMatch(/could not compare the faces/);
    youverifyServer.mode = 'status-500';
    expect((await failure(compare(adapter()))).kind).toBe('http');
    youverifyServer.mode = 'documented';
  });
});

describe('verifyme compareFace', () => {
  const at = (url: string) => verifyme.create({ url, secret: 'sk_live_upstream_face' });

  it('reads photoMatching of a success record, and the style C 404 as not found', async () => {
    const record = { status: 'success', data: { photoMatching: { match: false, matchScore: 31.2, matchingThreshold: 42, maxScore: 100 } } };
    expect(await compare(at(await answering(200, record)))).toEqual({ match: false, confidence: 31.2, threshold: 42, maxScore: 100 });
    expect(await compare(at(await answering(404, { code: 'NOT_FOUND_ERROR', message: 'NIN not found. Please provide a valid NIN' })))).toBeUndefined();
  });

  it('fails on a route that is not there, a busy upstream, and a record without photoMatching', async () => {
    expect((await failure(compare(at(await answering(404, { statusCode: 404, error: 'Not Found', message: 'Route POST:/v1/x not found' })))))).toMatchObject({ kind: 'http' });
    expect((await failure(compare(at(await answering(429, { statusCode: 429, error: 'Too Many Requests', message: 'busy' })))))).toMatchObject({ kind: 'http' });
    expect(await failure(compare(at(await answering(200, { status: 'success', data: {} }))))).toMatchObject({ kind: 'malformed', message: 'data.photoMatching missing' });
  });

  it('sends the spec form: idType (frsc for a licence), idNumber and the photo as a JPEG file', async () => {
    let received = { contentType: '', body: '' };
    const server = await startServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received = { contentType: String(req.headers['content-type']), body: Buffer.concat(chunks).toString('latin1') };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'success', data: { photoMatching: { match: true, matchScore: 90, matchingThreshold: 42, maxScore: 100 } } }));
      });
    });
    servers.push(server);
    await compare(at(server.url), { type: 'drivers_license', key: 'FKJ494A2133' });
    expect(received.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(received.body).toContain('name="idType"\r\n\r\nfrsc\r\n');
    expect(received.body).toContain('name="idNumber"\r\n\r\nFKJ494A2133\r\n');
    expect(received.body).toContain('name="photo"; filename="selfie.jpg"\r\nContent-Type: image/jpeg\r\n\r\n\xff\xd8\xff');
  });
});
