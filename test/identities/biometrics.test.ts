import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService, type CreateOrganizationInput } from '../../src/accounts/service.js';
import { buildApp } from '../../src/app.js';
import { FaceEngine, sharedFaceEngine } from '../../src/identities/biometrics/face-engine.js';
import type { DecodedImage } from '../../src/identities/biometrics/image.js';
import { LruCache } from '../../src/identities/biometrics/lru.js';
import { FaceMatcher } from '../../src/identities/biometrics/matcher.js';
import { fetchPhoto } from '../../src/identities/biometrics/photo-url.js';
import { faceCrop, samplePath, samplePortraitBase64, TEST_IDENTITY_FACES, type SampleFace } from '../../src/identities/biometrics/samples.js';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { metrics } from '../../src/platform/metrics.js';
import { loadTestIdentities } from '../../src/identities/registry/test-identities.js';
import { sansRequestId, testConfig } from '../helpers/app.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

const PATH = '/v1/verifications/identities/biometrics';
const ALIAS = '/verifications/identities/biometrics';
const TEST_NIN = '70412358961';
const TEST_BVN = '22345678901';
const TEST_LICENSE = 'KJA83927AA02';
const PRICE = IDENTITY_BILLABLES.biometrics.defaultPrice;

/** A live registry person wearing a face no test identity wears (the woman at the front left of sample5.jpg). */
const LIVE_FACE: SampleFace = { sample: 5, box: { x: 377, y: 859, width: 172, height: 301 } };
const LIVE_NIN = { nin: '31313131313', firstname: 'Halima', lastname: 'Yusuf', gender: 'Female', birthdate: '12-12-1992' };
const LIVE_LICENSE_FACELESS = {
  licenseNo: 'LAG12345ZZ01', firstname: 'Musa', lastname: 'Garba', gender: 'Male', birthdate: '03-04-1975',
  issuedDate: '01-01-2020', expiryDate: '31-12-2030', stateOfIssue: 'Lagos',
};
const LIVE_NIN_UNREADABLE = { nin: '31313131314', firstname: 'Ngozi', lastname: 'Obi', gender: 'Female', birthdate: '05-06-1988' };
const LIVE_BVN_NO_PHOTO = { bvn: '22777777777', firstname: 'Tayo', lastname: 'Ade', gender: 'Male', phone: '08020000000', birthdate: '01-02-1980' };

/** The shared face model, counting the images it is shown. */
class CountingEngine extends FaceEngine {
  described = 0;
  override describe(image: DecodedImage) {
    this.described++;
    return sharedFaceEngine().describe(image);
  }
}

interface Upload {
  bytes: Buffer;
  filename?: string;
  type?: string;
}

/** A multipart/form-data body as a browser or curl would send it. */
async function form(fields: Record<string, string | Upload>) {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') data.append(name, value);
    else data.append(name, new Blob([new Uint8Array(value.bytes)], { type: value.type ?? 'image/jpeg' }), value.filename ?? 'photo.jpg');
  }
  const request = new Request('http://localhost/', { method: 'POST', body: data });
  return { payload: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type')! };
}

/** A selfie-like JPEG: the face's head and shoulders, 640 px tall, cut from its demo photo. */
async function selfie(face: SampleFace, options: { mirror?: boolean } = {}): Promise<Buffer> {
  const region = await faceCrop(face, 2.5);
  let image = sharp(samplePath(face.sample)).extract(region);
  if (options.mirror) image = image.flop();
  return image.resize(512, 640, { fit: 'inside' }).jpeg({ quality: 88 }).toBuffer();
}

describe('biometrics: POST /v1/verifications/identities/biometrics', () => {
  let database: TestDatabase;
  /** VOUCH_ALLOW_PRIVATE_URLS=1, as in development. */
  let app: FastifyInstance;
  /** The production default: photoUrl may not reach loopback or private addresses. */
  let strictApp: FastifyInstance;
  /** Like `app`, with a face model that counts its runs. */
  let countedApp: FastifyInstance;
  const engine = new CountingEngine();
  let accounts: AccountsService;
  let photoServer: http.Server;
  let photoBase: string;
  const images: Record<string, Buffer> = {};
  let orgCounter = 0;

  const org = (input: Partial<CreateOrganizationInput> = {}) =>
    accounts.create({ name: `Biometrics ${++orgCounter}`, enabled: true, riskLevel: 'NONE', payloadType: 'FULL', fund: 100_000, ...input });

  async function postForm(secret: string, fields: Record<string, string | Upload>, url = PATH, target = app) {
    const { payload, contentType } = await form(fields);
    return target.inject({ method: 'POST', url, headers: { authorization: `Bearer ${secret}`, 'content-type': contentType }, payload });
  }

  function postJson(secret: string, payload: object, url = PATH, target = app) {
    return target.inject({ method: 'POST', url, headers: { authorization: `Bearer ${secret}` }, payload });
  }

  async function usage(orgId: string) {
    return database.db.selectFrom('usage_events').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
  }

  beforeAll(async () => {
    database = await openTestDatabase();
    app = await buildApp({ config: testConfig({ logLevel: 'warn', allowPrivateUrls: true }), database });
    strictApp = await buildApp({ config: testConfig({ logLevel: 'warn', allowPrivateUrls: false }), database });
    countedApp = await buildApp({ config: testConfig({ logLevel: 'warn', allowPrivateUrls: true }), database, faceMatcher: new FaceMatcher(engine) });
    await Promise.all([app.ready(), strictApp.ready(), countedApp.ready()]);
    accounts = new AccountsService(database.db);

    const [livePhoto, ninSelfie, bvnSelfie, licenseSelfie, otherSelfie, liveSelfie, blank] = await Promise.all([
      samplePortraitBase64(LIVE_FACE),
      selfie(TEST_IDENTITY_FACES.nin),
      selfie(TEST_IDENTITY_FACES.bvn, { mirror: true }),
      selfie(TEST_IDENTITY_FACES.drivers_license),
      selfie({ sample: 4, box: { x: 664, y: 53, width: 187, height: 258 } }),
      selfie(LIVE_FACE),
      // No face: an evenly lit wall.
      sharp({ create: { width: 480, height: 600, channels: 3, background: '#b9a58c' } }).png().toBuffer(),
    ]);
    Object.assign(images, { ninSelfie, bvnSelfie, licenseSelfie, otherSelfie, liveSelfie, blank });
    images.webp = await sharp(ninSelfie).webp().toBuffer();
    images.png = await sharp(ninSelfie).png().toBuffer();
    // Past 1 MB: JPEG magic bytes followed by noise (the size is refused before anything decodes it).
    images.oversize = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(1024 * 1024 + 10, 7)]);
    images.gif = Buffer.from('474946383961010001000000002c00000000010001000002024401003b', 'hex');

    const lines = [
      { type: 'nin', record: { ...LIVE_NIN, photo: livePhoto } },
      { type: 'bvn', record: LIVE_BVN_NO_PHOTO },
      { type: 'nin', record: { ...LIVE_NIN_UNREADABLE, photo: Buffer.from('not a picture at all').toString('base64') } },
      { type: 'drivers_license', record: { ...LIVE_LICENSE_FACELESS, photo: blank.toString('base64') } },
    ].map((line) => JSON.stringify(line));
    const imported = await importRegistry(database.db, Readable.from([lines.join('\n')]));
    expect(imported).toMatchObject({ imported: 4, rejected: 0 });

    photoServer = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const hops = Number(url.searchParams.get('hops') ?? 0);
      if (url.pathname === '/redirect') {
        const next = hops > 1 ? `/redirect?hops=${hops - 1}` : '/nin-selfie.jpg';
        res.writeHead(302, { location: next }).end();
      } else if (url.pathname === '/nin-selfie.jpg') {
        res.writeHead(200, { 'content-type': 'image/jpeg' }).end(images.ninSelfie);
      } else if (url.pathname === '/huge') {
        // No content-length: the fetch must stop on its own once it passes 1 MB.
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        const chunk = Buffer.alloc(64 * 1024, 1);
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => undefined);
        pump();
      } else if (url.pathname === '/slow') {
        // Headers sent, then nothing: only the fetch's own deadline ends the wait.
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.write(images.ninSelfie!.subarray(0, 100));
      } else if (url.pathname === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('not an image');
      } else {
        res.writeHead(404).end('no such photo');
      }
    });
    photoServer.listen(0, '127.0.0.1');
    await new Promise((resolve) => photoServer.once('listening', resolve));
    photoBase = `http://127.0.0.1:${(photoServer.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    photoServer?.closeAllConnections();
    await new Promise((resolve) => photoServer?.close(resolve));
    await app?.close();
    await strictApp?.close();
    await countedApp?.close();
    await database?.cleanup();
  });

  describe('test mode', () => {
    it('matches a selfie of the same person and returns the spec record with photoMatching', async () => {
      const { testSecret } = await org();
      const res = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: { bytes: images.ninSelfie! } });
      expect(res.statusCode, res.body).toBe(200);
      const { nin } = await loadTestIdentities();
      const body = res.json();
      expect(body).toEqual({
        status: 'success',
        data: {
          bvn: '',
          firstname: 'Babatunde',
          lastname: 'Adeyemi',
          middlename: 'Oluwaseun',
          gender: 'Male',
          phone: '08051234567',
          birthdate: '02-11-1985',
          nationality: 'Nigerian',
          photo: nin.photo,
          photoMatching: { match: true, matchScore: expect.any(Number), matchingThreshold: 43, maxScore: 100 },
          faceMatchEngine: 'local',
        },
      });
      expect(body.data.photoMatching.matchScore).toBeGreaterThanOrEqual(70);
      expect(body.data.photoMatching.matchScore).toBeLessThanOrEqual(100);
    });

    it('does not match a different person, and fills bvn for a BVN identity', async () => {
      const { testSecret } = await org();
      const timed = async (outcome: string) => (await metrics.faceMatchDuration.get()).values.find((v) => v.metricName === 'vouch_face_match_duration_seconds_count' && v.labels.outcome === outcome)?.value ?? 0;
      const [matchesBefore, misses] = [await timed('match'), await timed('no_match')];
      const res = await postForm(testSecret, { idType: 'bvn', idNumber: TEST_BVN, photo: { bytes: images.otherSelfie! } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ bvn: TEST_BVN, firstname: 'Adaeze', photoMatching: { match: false, matchingThreshold: 43 } });
      expect(res.json().data.photoMatching.matchScore).toBeLessThan(43);
      // The same BVN with its own person's (mirrored) selfie matches.
      const same = await postForm(testSecret, { idType: 'bvn', idNumber: TEST_BVN, photo: { bytes: images.bvnSelfie! } });
      expect(same.json().data.photoMatching.match).toBe(true);
      // Each comparison's duration is in /metrics by outcome.
      expect(await timed('no_match')).toBe(misses + 1);
      expect(await timed('match')).toBe(matchesBefore + 1);
    });

    it('matches each test identity with its whole demo photo, as docs/test-mode.md promises, and no other', async () => {
      const { testSecret } = await org();
      const photos = { bvn: 6, nin: 2, frsc: 3 } as const;
      const numbers = { bvn: TEST_BVN, nin: TEST_NIN, frsc: TEST_LICENSE };
      for (const [idType, idNumber] of Object.entries(numbers)) {
        for (const [otherType, sample] of Object.entries(photos)) {
          const res = await postForm(testSecret, { idType, idNumber, photo: { bytes: fs.readFileSync(samplePath(sample)) } });
          expect(res.statusCode, res.body).toBe(200);
          expect(res.json().data.photoMatching.match, `${idType} against sample${sample}.jpg`).toBe(otherType === idType);
        }
        for (const sample of [1, 4, 5] as const) {
          const crowd = await postForm(testSecret, { idType, idNumber, photo: { bytes: fs.readFileSync(samplePath(sample)) } });
          expect(crowd.json().data.photoMatching.match, `${idType} against sample${sample}.jpg`).toBe(false);
        }
      }
    });

    it('accepts frsc (drivers license, spaces and hyphens ignored), PNG and WebP, on the /v1-less alias too', async () => {
      const { testSecret } = await org();
      const license = await postForm(testSecret, { idType: 'FRSC', idNumber: 'KJA-83927 AA02', photo: { bytes: images.licenseSelfie! } }, ALIAS);
      expect(license.statusCode, license.body).toBe(200);
      expect(license.json().data).toMatchObject({ bvn: '', firstname: 'Ibrahim', lastname: 'Bello', phone: '', photoMatching: { match: true } });
      for (const [bytes, type] of [[images.png!, 'image/png'], [images.webp!, 'image/webp']] as const) {
        const res = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: { bytes, type, filename: 'selfie' } });
        expect(res.statusCode, type).toBe(200);
        expect(res.json().data.photoMatching.match, type).toBe(true);
      }
    });

    it('accepts a JSON body with the photo in base64 or as a data URL, and with a photoUrl; and base64 in a form field', async () => {
      const { testSecret } = await org();
      const base64 = images.ninSelfie!.toString('base64');
      for (const photo of [base64, `data:image/jpeg;base64,${base64}`]) {
        const res = await postJson(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data.photoMatching.match).toBe(true);
      }
      const byUrl = await postJson(testSecret, { idType: 'nin', idNumber: TEST_NIN, photoUrl: `${photoBase}/nin-selfie.jpg` }, ALIAS);
      expect(byUrl.statusCode, byUrl.body).toBe(200);
      expect(byUrl.json().data.photoMatching.match).toBe(true);
      const asFormField = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: base64 });
      expect(asFormField.statusCode, asFormField.body).toBe(200);
      expect(asFormField.json().data.photoMatching.match).toBe(true);
      const notBase64 = await postJson(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: 'this is not base64!' });
      expect(notBase64.statusCode).toBe(400);
      expect(notBase64.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/base64/) });
    });

    it('leaves the phone and photo out for a HALF payload account, as NIN lookups do', async () => {
      const { testSecret } = await org({ payloadType: 'HALF' });
      const res = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: { bytes: images.ninSelfie! } });
      expect(res.json().data).toMatchObject({ phone: '', photo: '', photoMatching: { match: true } });
    });

    it('answers 404 style C NOT_FOUND_ERROR for an unknown identity, and never shows live records', async () => {
      const { testSecret } = await org();
      for (const [idType, idNumber] of [['nin', '70412358962'], ['bvn', '22345678902'], ['frsc', 'ABC123456'], ['nin', LIVE_NIN.nin]]) {
        const res = await postForm(testSecret, { idType: idType!, idNumber: idNumber!, photo: { bytes: images.ninSelfie! } });
        expect(res.statusCode, `${idType} ${idNumber}`).toBe(404);
        expect(res.json()).toEqual({ code: 'NOT_FOUND_ERROR', message: expect.stringMatching(/valid (NIN|BVN|license number)/) , requestId: expect.stringMatching(/^req_/) });
      }
    });
  });

  describe('bad requests answer style B', () => {
    it('says which photo had no face: the supplied one', async () => {
      const { testSecret } = await org();
      const res = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: { bytes: images.blank!, type: 'image/png' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/No face was found in the supplied photo/) , requestId: expect.stringMatching(/^req_/) });
    });

    it('refuses an upload over 1 MB with 413, with or without a declared length, and in base64', async () => {
      const { testSecret } = await org();
      const declared = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: { bytes: images.oversize! } });
      expect(declared.statusCode).toBe(413);
      expect(declared.json()).toMatchObject({ statusCode: 413, error: 'Payload Too Large', message: expect.stringMatching(/larger than 1 MB/) });

      // Streamed without a content-length, the upload is cut off at the limit by the form parser.
      const { payload, contentType } = await form({ idType: 'nin', idNumber: TEST_NIN, photo: { bytes: images.oversize! } });
      const streamed = await app.inject({
        method: 'POST',
        url: PATH,
        headers: { authorization: `Bearer ${testSecret}`, 'content-type': contentType },
        payload: Readable.from([payload.subarray(0, 100_000), payload.subarray(100_000)]),
      });
      expect(streamed.statusCode).toBe(413);
      expect(streamed.json()).toMatchObject({ statusCode: 413, message: expect.stringMatching(/photo is larger than 1 MB/) });

      const base64 = await postJson(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: images.oversize!.toString('base64') });
      expect(base64.statusCode).toBe(413);
      expect(base64.json().message).toMatch(/larger than 1 MB/);
    });

    it('refuses anything but JPEG, PNG and WebP, whatever the declared type', async () => {
      const { testSecret } = await org();
      const cases: Upload[] = [
        { bytes: images.gif!, type: 'image/gif', filename: 'a.gif' },
        { bytes: Buffer.from('just some text'), type: 'image/jpeg', filename: 'selfie.jpg' },
        { bytes: images.ninSelfie!.subarray(0, 2_000), type: 'image/jpeg' },
        { bytes: Buffer.alloc(0) },
      ];
      for (const photo of cases) {
        const res = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo });
        expect(res.statusCode, photo.filename).toBe(400);
        expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/^The supplied photo (must be a JPEG, PNG or WebP image|could not be decoded|is empty)/) });
      }
    });

    it('wants exactly one of photo and photoUrl', async () => {
      const { testSecret } = await org();
      const both = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photoUrl: `${photoBase}/nin-selfie.jpg`, photo: { bytes: images.ninSelfie! } });
      expect(both.statusCode).toBe(400);
      expect(both.json()).toMatchObject({ statusCode: 400, message: 'Send either photo or photoUrl, not both' });
      const neither = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN });
      expect(neither.statusCode).toBe(400);
      expect(neither.json().message).toMatch(/photo or photoUrl is required/);
      const jsonBoth = await postJson(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: 'AAAA', photoUrl: 'https://example.com/a.jpg' });
      expect(jsonBoth.statusCode).toBe(400);
      const jsonNeither = await postJson(testSecret, { idType: 'nin', idNumber: TEST_NIN });
      expect(jsonNeither.statusCode).toBe(400);
    });

    it('validates idType and idNumber, and refuses a second file', async () => {
      const { testSecret } = await org();
      const photo = { bytes: images.ninSelfie! };
      const cases: [Record<string, string | Upload>, RegExp][] = [
        [{ idNumber: TEST_NIN, photo }, /idType is required/],
        [{ idType: 'nin', photo }, /idNumber is required/],
        [{ idType: 'vnin', idNumber: TEST_NIN, photo }, /idType must be one of nin, frsc, bvn/],
        [{ idType: 'nin', idNumber: '1234', photo }, /11-digit NIN/],
        [{ idType: 'frsc', idNumber: '12', photo }, /drivers license number/],
        [{ idType: 'nin', idNumber: TEST_NIN, photo, selfie: photo }, /(Send one file|Unexpected file field)/],
      ];
      for (const [fields, message] of cases) {
        const res = await postForm(testSecret, fields);
        expect(res.statusCode, String(message)).toBe(400);
        expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(message) });
      }
    });

    it('answers 401 style B without valid credentials, on both paths', async () => {
      for (const url of [PATH, ALIAS]) {
        for (const authorization of [undefined, 'Bearer sk_test_nope']) {
          const { payload, contentType } = await form({ idType: 'nin', idNumber: TEST_NIN, photo: { bytes: images.ninSelfie! } });
          const res = await app.inject({ method: 'POST', url, headers: { 'content-type': contentType, ...(authorization ? { authorization } : {}) }, payload });
          expect(res.statusCode).toBe(401);
          expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
        }
      }
    });
  });

  describe('photoUrl', () => {
    it('fetches from a loopback server when private URLs are allowed, following redirects', async () => {
      const { testSecret } = await org();
      const direct = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photoUrl: `${photoBase}/nin-selfie.jpg` });
      expect(direct.statusCode, direct.body).toBe(200);
      expect(direct.json().data.photoMatching.match).toBe(true);
      const redirected = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photoUrl: `${photoBase}/redirect?hops=3` });
      expect(redirected.statusCode, redirected.body).toBe(200);
    });

    it('refuses loopback and private addresses when they are not allowed (the default)', async () => {
      const { testSecret } = await org();
      for (const photoUrl of [`${photoBase}/nin-selfie.jpg`, 'http://localhost/a.jpg', 'http://10.0.0.8/a.jpg', 'http://[::1]/a.jpg', 'http://169.254.169.254/latest']) {
        const res = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photoUrl }, PATH, strictApp);
        expect(res.statusCode, photoUrl).toBe(400);
        expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/^photoUrl .*(loopback or private|does not resolve)/) });
      }
    });

    it('answers a clear 4xx when the fetch fails: too many redirects, HTTP errors, not an image, too large, bad URL', async () => {
      const { testSecret } = await org();
      const cases: [string, number, RegExp][] = [
        [`${photoBase}/redirect?hops=4`, 400, /redirected more than 3 times/],
        [`${photoBase}/missing.jpg`, 400, /answered HTTP 404/],
        [`${photoBase}/text`, 400, /The image at photoUrl must be a JPEG, PNG or WebP image/],
        [`${photoBase}/huge`, 413, /The image at photoUrl is larger than 1 MB/],
        ['ftp://example.com/a.jpg', 400, /must be an http or https URL/],
        ['not a url', 400, /not a valid URL/],
      ];
      for (const [photoUrl, status, message] of cases) {
        const res = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photoUrl });
        expect(res.statusCode, photoUrl).toBe(status);
        expect(res.json(), photoUrl).toMatchObject({ statusCode: status, message: expect.stringMatching(message) });
      }
    });
    it('gives up on a photo server that stops answering, at its deadline (5 s in the service)', async () => {
      const started = performance.now();
      const slow = fetchPhoto(`${photoBase}/slow`, { allowPrivate: true, maxBytes: 1024 * 1024, timeoutMs: 300, maxRedirects: 3 });
      await expect(slow).rejects.toThrow('could not be fetched within 0.3 seconds');
      expect(performance.now() - started).toBeLessThan(2_000);
    });
  });

  describe('live mode and billing', () => {
    it('compares against the live registry photo and charges the biometrics price', async () => {
      const live = await org({ fund: 100_000 });
      const res = await postForm(live.liveSecret, { idType: 'nin', idNumber: LIVE_NIN.nin, photo: { bytes: images.liveSelfie! } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ bvn: '', firstname: 'Halima', nationality: '', phone: '', photoMatching: { match: true } });
      const other = await postForm(live.liveSecret, { idType: 'nin', idNumber: LIVE_NIN.nin, photo: { bytes: images.ninSelfie! } });
      expect(other.json().data.photoMatching.match).toBe(false);
      expect((await accounts.get(live.id)).balance).toBe(100_000 - 2 * PRICE);
      expect((await usage(live.id)).map((row) => [row.type, row.outcome, row.price])).toEqual([
        ['biometrics', 'success', PRICE],
        ['biometrics', 'success', PRICE],
      ]);
      // The live registry only: the test identity is unknown to a live secret.
      const testIdentity = await postForm(live.liveSecret, { idType: 'nin', idNumber: TEST_NIN, photo: { bytes: images.ninSelfie! } });
      expect(testIdentity.statusCode).toBe(404);
    });

    it('answers 402 and charges nothing when the wallet is short, before the photo reaches the face model', async () => {
      const poor = await org({ fund: PRICE - 1 });
      const before = engine.described;
      const res = await postForm(poor.liveSecret, { idType: 'nin', idNumber: LIVE_NIN.nin, photo: { bytes: images.liveSelfie! } }, PATH, countedApp);
      expect(res.statusCode).toBe(402);
      expect(res.json()).toEqual({ statusCode: 402, error: 'Payment Required', message: expect.stringMatching(/funded/) , requestId: expect.stringMatching(/^req_/) });
      // The model never ran (counted, not timed: a busy machine took 1.1 s for the answer alone).
      expect(engine.described - before).toBe(0);
      // A photoUrl is not even fetched: the unreachable one here would otherwise be a 400.
      const byUrl = await postForm(poor.liveSecret, { idType: 'nin', idNumber: LIVE_NIN.nin, photoUrl: `${photoBase}/missing.jpg` }, PATH, countedApp);
      expect(byUrl.statusCode).toBe(402);
      expect((await accounts.get(poor.id)).balance).toBe(PRICE - 1);
      expect((await usage(poor.id)).map((row) => [row.type, row.outcome, row.price])).toEqual([
        ['biometrics', 'insufficient_funds', 0],
        ['biometrics', 'insufficient_funds', 0],
      ]);
      // An unknown identity gets the same 402: a wallet that cannot pay learns nothing about the number.
      const unknown = await postForm(poor.liveSecret, { idType: 'nin', idNumber: '99999999999', photo: { bytes: images.liveSelfie! } }, PATH, countedApp);
      expect(unknown.statusCode).toBe(402);
      expect(sansRequestId(unknown.json())).toEqual(sansRequestId(res.json()));

      // Funded with exactly the price, the same request runs the model, matches and is charged.
      await accounts.fund(poor.id, 1);
      const funded = await postForm(poor.liveSecret, { idType: 'nin', idNumber: LIVE_NIN.nin, photo: { bytes: images.liveSelfie! } }, PATH, countedApp);
      expect(funded.statusCode, funded.body).toBe(200);
      expect(funded.json().data.photoMatching.match).toBe(true);
      expect(engine.described - before).toBeGreaterThanOrEqual(1);
      expect((await accounts.get(poor.id)).balance).toBe(0);
    });

    it('charges nothing when no comparison was made: no face (supplied or held), bad image, failed fetch, no photo on record, unknown identity', async () => {
      const live = await org({ fund: 100_000 });
      const attempts = [
        [{ idType: 'nin', idNumber: LIVE_NIN.nin, photo: { bytes: images.blank!, type: 'image/png' } }, 400],
        [{ idType: 'nin', idNumber: LIVE_NIN.nin, photo: { bytes: images.gif!, type: 'image/gif' } }, 400],
        [{ idType: 'nin', idNumber: LIVE_NIN.nin, photoUrl: `${photoBase}/missing.jpg` }, 400],
        [{ idType: 'nin', idNumber: '99999999999', photo: { bytes: images.liveSelfie! } }, 404],
      ] as const;
      for (const [fields, status] of attempts) {
        const res = await postForm(live.liveSecret, fields);
        expect(res.statusCode, res.body).toBe(status);
      }
      expect((await accounts.get(live.id)).balance).toBe(100_000);
      expect((await usage(live.id)).map((row) => [row.outcome, row.price])).toEqual([['not_found', 0]]);
    });

    it('a record that cannot be compared (no photo, one that does not decode, no face in it) answers as an unknown number, uncharged', async () => {
      const live = await org({ fund: 100_000 });
      const pairs = [
        ['bvn', LIVE_BVN_NO_PHOTO.bvn, '22700000000'],
        ['nin', LIVE_NIN_UNREADABLE.nin, '99999999998'],
        ['frsc', LIVE_LICENSE_FACELESS.licenseNo, 'LAG99999ZZ99'],
      ] as const;
      for (const [idType, known, unknown] of pairs) {
        const held = await postForm(live.liveSecret, { idType, idNumber: known, photo: { bytes: images.liveSelfie! } });
        const missing = await postForm(live.liveSecret, { idType, idNumber: unknown, photo: { bytes: images.liveSelfie! } });
        expect(held.statusCode, held.body).toBe(404);
        expect(held.json()).toMatchObject({ code: 'NOT_FOUND_ERROR' });
        // Alike but for each answer's own request id, which is as long in both.
        expect(sansRequestId(held.json())).toEqual(sansRequestId(missing.json()));
        expect(held.body.length).toBe(missing.body.length);
      }
      expect((await accounts.get(live.id)).balance).toBe(100_000);
      expect((await usage(live.id)).map((row) => [row.outcome, row.price])).toEqual(Array(6).fill(['not_found', 0]));
    });

    it('reads the photo before the identity: a bad image or a failed fetch answers alike for a known and an unknown number', async () => {
      const live = await org({ fund: 100_000 });
      const photos: Record<string, Upload | string>[] = [{ photo: { bytes: images.gif!, type: 'image/gif' } }, { photo: { bytes: images.blank!, type: 'image/png' } }, { photoUrl: `${photoBase}/missing.jpg` }];
      for (const photo of photos) {
        const known = await postForm(live.liveSecret, { idType: 'nin', idNumber: LIVE_NIN.nin, ...photo });
        const unknown = await postForm(live.liveSecret, { idType: 'nin', idNumber: '99999999999', ...photo });
        expect(known.statusCode).toBe(400);
        expect([unknown.statusCode, sansRequestId(unknown.json()), unknown.body.length]).toEqual([known.statusCode, sansRequestId(known.json()), known.body.length]);
      }
      // Neither number was looked up: nothing in the usage the account reads tells them apart.
      expect(await usage(live.id)).toEqual([]);
      expect((await accounts.get(live.id)).balance).toBe(100_000);
    });

    it('never charges test mode', async () => {
      const { id, testSecret } = await org({ fund: 0 });
      const res = await postForm(testSecret, { idType: 'nin', idNumber: TEST_NIN, photo: { bytes: images.ninSelfie! } });
      expect(res.statusCode).toBe(200);
      expect((await usage(id)).map((row) => [row.mode, row.type, row.price])).toEqual([['test', 'biometrics', 0]]);
    });
  });

  it('works over a real socket, and answers 413 to an oversize upload while it is still being sent', async () => {
    const { testSecret } = await org();
    const server = await buildApp({ config: testConfig({ logLevel: 'warn' }), database });
    try {
      const address = await server.listen({ host: '127.0.0.1', port: 0 });
      const send = async (bytes: Buffer) => {
        const body = new FormData();
        body.append('idType', 'nin');
        body.append('idNumber', TEST_NIN);
        body.append('photo', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), 'selfie.jpg');
        const res = await fetch(`${address}${PATH}`, { method: 'POST', headers: { authorization: `Bearer ${testSecret}` }, body });
        return { status: res.status, body: (await res.json()) as { data?: { photoMatching: { match: boolean } }; message?: string } };
      };
      const ok = await send(images.ninSelfie!);
      expect(ok.status).toBe(200);
      expect(ok.body.data?.photoMatching.match).toBe(true);
      const big = await send(Buffer.concat([images.oversize!, Buffer.alloc(4 * 1024 * 1024, 3)]));
      expect(big.status).toBe(413);
      expect(big.body.message).toMatch(/The request is too large: a biometrics image may be at most 1 MB/);
    } finally {
      await server.close();
    }
  });

  it('is in the OpenAPI document with both request forms; the alias is not', async () => {
    const spec = app.swagger() as { paths: Record<string, { post?: { requestBody?: { content?: Record<string, unknown> } } }> };
    expect(Object.keys(spec.paths[PATH]?.post?.requestBody?.content ?? {}).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(spec.paths[ALIAS]).toBeUndefined();
  });
});

describe('LruCache', () => {
  it('keeps at most its capacity, forgetting the least recently used first', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect(cache.has('b')).toBe(false);
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
    expect(() => new LruCache(0)).toThrow(RangeError);
  });
});
