import { Compile } from 'typebox/compile';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RECORD_SCHEMAS } from '../../src/identities/records.js';
import { recordTypeOf, UpstreamFailure, type UpstreamAdapter, type UpstreamType } from '../../src/identities/upstreams/adapter.js';
import { youverify } from '../../src/identities/upstreams/youverify/kind.js';
import { startYouverifyServer, type YouverifyServer } from './youverify-server.js';

const TOKEN = 'yv-test-token.0123456789';

const EXPECTED = {
  nin: {
    key: '11111111111',
    record: {
      nin: '11111111111',
      firstname: 'Sarah',
      middlename: 'Jane',
      lastname: 'Doe',
      gender: 'Female',
      birthdate: '04-04-1988',
      phone: '08000000000',
      photo: '/9j/4AAQSkZJRgABAQEBLAEsAAD/2wCEAAoHBwgHBgip3OR/1n/9k=',
    },
    missing: 'data.lastName missing',
    unknownKey: '22222222222',
  },
  vnin: {
    key: 'YV111111111111FY',
    record: {
      id: 0x96b1fa6a8d3f,
      vNin: 'YV111111111111FY',
      firstname: 'PROUD',
      lastname: 'CITIZEN',
      birthdate: '01-10-1960',
      gender: 'Male',
      phone: '01234567890',
    },
    missing: 'data.lastName missing',
    unknownKey: 'AB222222222222CD',
  },
  tin: {
    key: '00000000-0000',
    record: {
      tin: '00000000-0000',
      taxpayerName: 'JOHN DOE LTD',
      cacRegNo: 'RC00000000',
      jittin: '0000000000',
      taxOffice: 'MSTO ILUPEJU I',
      phone: '08000000000',
      email: 'johndoe@gmail.co',
    },
    missing: 'data.name missing',
    unknownKey: '20504133-0002',
  },
} as const;

const TYPES = Object.keys(EXPECTED) as Array<keyof typeof EXPECTED>;

let server: YouverifyServer;
let adapter: UpstreamAdapter;

beforeAll(async () => {
  server = await startYouverifyServer(TOKEN);
  adapter = youverify.create({ url: server.url, secret: TOKEN });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.mode = 'documented';
  server.requests.length = 0;
});

function lookup(type: UpstreamType, key: string, signal: AbortSignal = AbortSignal.timeout(5_000)) {
  return adapter.find({ type, key, signal });
}

async function failure(promise: Promise<unknown>): Promise<UpstreamFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamFailure);
  return err as UpstreamFailure;
}

describe('youverify kind', () => {
  it('lists the types whose documented answers it maps', () => {
    expect(youverify.kind).toBe('youverify');
    expect([...youverify.types].sort()).toEqual([...TYPES].sort());
  });

  it('rejects a malformed secret without echoing it', () => {
    for (const bad of ['', 'short', 'has a space in it', 'Bearer abc.def-ghi', 'x'.repeat(600)]) {
      let message = '';
      try {
        youverify.checkSecret(bad);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/Youverify secret/);
      if (bad.length >= 3) expect(message).not.toContain(bad);
    }
    expect(() => youverify.checkSecret(TOKEN)).not.toThrow();
  });
});

describe.each(TYPES)('youverify %s', (type) => {
  const expected = EXPECTED[type];
  const validator = Compile(RECORD_SCHEMAS[recordTypeOf(type)]);

  it('maps the documented found answer to a valid record', async () => {
    const record = await lookup(type, expected.key);
    expect(record).toEqual(expected.record);
    expect(validator.Check(record)).toBe(true);

    const [request] = server.requests;
    expect(request?.headers.token).toBe(TOKEN);
    expect(request?.headers['content-type']).toBe('application/json');
    const idField = type === 'tin' ? 'tin' : 'id';
    expect(request?.body).toMatchObject({ [idField]: expected.key, isSubjectConsent: true });
  });

  it('answers undefined for the documented not_found answer', async () => {
    expect(await lookup(type, expected.unknownKey)).toBeUndefined();
  });

  it('is refused on wrong credentials (HTTP 401)', async () => {
    const wrong = youverify.create({ url: server.url, secret: 'another-token-123' });
    const err = await failure(wrong.find({ type, key: expected.key, signal: AbortSignal.timeout(5_000) }));
    expect(err.kind).toBe('refused');
  });

  it('fails as http on a 500', async () => {
    server.mode = 'status-500';
    const err = await failure(lookup(type, expected.key));
    expect(err.kind).toBe('http');
    expect(err.message).toBe('HTTP 500');
  });

  it('fails as malformed on a body that is not JSON', async () => {
    server.mode = 'garbage';
    const err = await failure(lookup(type, expected.key));
    expect(err.kind).toBe('malformed');
  });

  it('fails as malformed, naming the field and not its value, when a field is missing', async () => {
    server.mode = 'missing-field';
    const err = await failure(lookup(type, expected.key));
    expect(err.kind).toBe('malformed');
    expect(err.message).toBe(expected.missing);
    expect(err.message).not.toContain(expected.key);
  });

  it('fails as timeout when the server hangs past the signal', async () => {
    server.mode = 'hang';
    const err = await failure(lookup(type, expected.key, AbortSignal.timeout(200)));
    expect(err.kind).toBe('timeout');
  });
});

describe('youverify answers', () => {
  it('fails as malformed when data.status is neither found nor not_found', async () => {
    const { foundData } = await import('../../src/identities/upstreams/youverify/map.js');
    expect(() => foundData({ success: true, data: { status: 'pending' } })).toThrow(UpstreamFailure);
    expect(() => foundData([])).toThrow('body is not a JSON object');
    expect(() => foundData({ success: true })).toThrow('data missing');
  });

  it('fails as connection when nothing listens', async () => {
    const closed = await startYouverifyServer(TOKEN);
    await closed.close();
    const gone = youverify.create({ url: closed.url, secret: TOKEN });
    const err = await failure(gone.find({ type: 'nin', key: '11111111111', signal: AbortSignal.timeout(5_000) }));
    expect(err.kind).toBe('connection');
  });
});
