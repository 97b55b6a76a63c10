import { Compile } from 'typebox/compile';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { recordTypeOf, UpstreamFailure, type UpstreamAdapter, type UpstreamRecordOf, type UpstreamType } from '../../src/identities/upstreams/adapter.js';
import { dojah } from '../../src/identities/upstreams/dojah/kind.js';
import { RECORD_SCHEMAS } from '../../src/identities/records.js';
import { dojahFixture, startDojahServer, type DojahServer } from './dojah-server.js';

/**
 * The Dojah adapter against a local server that answers with Dojah's documented bodies
 * (test/fixtures/upstreams/dojah, sources in its README.md), over real sockets.
 */

const PHOTO = '/9j/4AAQSkZJRgABAgAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwg';

let server: DojahServer;
let adapter: UpstreamAdapter;

beforeAll(async () => {
  server = await startDojahServer();
  adapter = dojah.create({ url: `${server.url}/`, secret: `${server.appId}:${server.secretKey}` });
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  server.override = undefined;
});

function find<T extends UpstreamType>(type: T, key: string, signal = AbortSignal.timeout(5_000)): Promise<UpstreamRecordOf[T] | undefined> {
  return adapter.find({ type, key, signal });
}

async function failure(promise: Promise<unknown>): Promise<UpstreamFailure> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(UpstreamFailure);
  return error as UpstreamFailure;
}

const lastQuery = () => server.requests.at(-1)!;

interface Case<T extends UpstreamType = UpstreamType> {
  type: T;
  key: string;
  path: string;
  query: Record<string, string>;
  expected: UpstreamRecordOf[T];
  /** A key Dojah does not know, in the same format. */
  unknown: string;
}

const CASES: Case[] = [
  {
    type: 'bvn',
    key: '22222222222',
    path: '/api/v1/kyc/bvn/advance',
    query: { bvn: '22222222222' },
    unknown: '22222222229',
    expected: {
      bvn: '22222222222',
      firstname: 'JOSHUA',
      lastname: 'ISAAC',
      middlename: 'THOMPSONBROWN',
      gender: 'Male',
      phone: '07012345678',
      birthdate: '28-06-2000',
      photo: PHOTO,
      email: 'ISAACTHOMPSONBROWN@YAHOO.COM',
      nationality: 'Nigeria',
      maritalStatus: 'Single',
      lgaOfResidence: 'Ilorin South',
      lgaOfOrigin: 'Odo Otin',
      residentialAddress: '24, OSHODI SURULERE, ILORIN',
      stateOfOrigin: 'Osun State',
      enrollmentBank: '058',
      enrollmentBranch: 'UNILORIN',
      nameOnCard: 'ISAAC, THOMPSON O',
      title: 'Mr',
      levelOfAccount: 'Level 2 - Medium Level Accounts',
    },
  },
  {
    type: 'nin',
    key: '55648152772',
    path: '/api/v1/kyc/nin',
    query: { nin: '55648152772' },
    unknown: '55648152779',
    expected: {
      nin: '55648152772',
      firstname: 'MOSHOOD',
      lastname: 'SALIU',
      middlename: 'KOLAWOLE',
      phone: '08137877844',
      gender: 'Male',
      birthdate: '10-06-1993',
      photo: (dojahFixture('nin').entity as { picture: string }).picture,
      nationality: 'nigeria',
    },
  },
  {
    type: 'nin_phone',
    key: '+2348034628633',
    path: '/api/v1/kyc/phone_number',
    query: { phone_number: '08034628633' },
    unknown: '+2348034628639',
    expected: {
      nin: '11111111111',
      firstname: 'John',
      lastname: 'Doe',
      middlename: 'Doe',
      phone: '09011111111',
      gender: 'Male',
      birthdate: '11-11-1972',
      photo: PHOTO,
    },
  },
  {
    type: 'vnin',
    key: 'AB012345678910YZ',
    path: '/api/v1/kyc/vnin',
    query: { vnin: 'AB012345678910YZ' },
    unknown: 'AB012345678910ZZ',
    expected: {
      id: expect.any(Number) as unknown as number,
      vNin: 'AB012345678910YZ',
      firstname: 'John',
      lastname: 'Alamutu',
      birthdate: '01-01-1982',
      gender: 'M',
      phone: '08012345678',
      photo: 'data:image/jpeg;base64,/9j/4AAQSkZJRgABAgAAAQABAAD/2wBDAAgGBgc',
    },
  },
  {
    type: 'drivers_license',
    key: 'FKJ494A2133',
    path: '/api/v1/kyc/dl',
    query: { license_number: 'FKJ494A2133' },
    unknown: 'FKJ494A2139',
    expected: {
      licenseNo: 'FKJ494A2133',
      firstname: 'JOHN',
      lastname: 'DOE',
      issuedDate: '25-01-2019',
      expiryDate: '17-08-2024',
      stateOfIssue: 'LAGOS',
      gender: 'Male',
      birthdate: '28-09-1998',
      photo: PHOTO,
    },
  },
  {
    type: 'vin',
    key: '90F5B1C5BD295355586',
    path: '/api/v1/kyc/vin',
    query: { vin: '90F5B1C5BD295355586' },
    unknown: '90F5B1C5BD295355589',
    expected: {
      vin: '90F5B1C5BD295355586',
      fullname: 'SALIU MOSHOOD KOLAWOLE',
      firstName: 'MOSHOOD',
      lastName: 'SALIU',
      gender: 'Male',
      occupation: 'STUDENT',
      pollingUnitCode: '28/08/08/005',
    },
  },
  {
    type: 'cac',
    key: 'business:1234567',
    path: '/api/v1/kyc/cac/basic',
    query: { rc_number: '1234567', company_type: 'BUSINESS_NAME' },
    unknown: 'business:7654321',
    expected: {
      type: 'business',
      rcNumber: '1234567',
      companyName: 'JOHN DOE LIMITED',
      companyType: 'BUSINESS_NAME',
      registrationDate: '2021-03-18T09:53:20.310+00:00',
      headOfficeAddress: '25A James Street Magodo Phase I, Lagos, Nigeria.',
      companyEmail: 'ABC@GMAIL.COM',
      city: 'Lagos',
      lga: 'Kosofe',
      state: 'Lagos',
      status: 'INACTIVE',
    },
  },
  {
    type: 'tin',
    key: '21148119-0001',
    path: '/api/v1/kyc/tin',
    query: { tin: '21148119-0001' },
    unknown: '21148119-0009',
    expected: {
      tin: '21148119-0001',
      taxpayerName: 'SMILE IDENTITY NIGERIA LIMITED LAGOS',
      cacRegNo: '1539621',
      jittin: '',
      taxOffice: 'MSTO IKOYI',
      // Dojah's sample has these two values swapped; we map by field name, as a client would.
      phone: 'sundayoguntola@hotmail.com',
      email: '07055427676',
    },
  },
];

const validators = new Map(Object.entries(RECORD_SCHEMAS).map(([type, schema]) => [type, Compile(schema)]));

describe('dojah: the documented answers', () => {
  it('offers every lookup type', () => {
    expect([...dojah.types].sort()).toEqual(CASES.map((c) => c.type).sort());
  });

  for (const c of CASES) {
    it(`${c.type}: maps the documented body onto a valid record`, async () => {
      const record = await find(c.type, c.key);
      expect(record).toEqual(c.expected);
      expect(validators.get(recordTypeOf(c.type))!.Check(record)).toBe(true);
      expect(lastQuery()).toEqual({ path: c.path, query: c.query, appId: server.appId, authorization: server.secretKey });
    });

    it(`${c.type}: Dojah's 404 {"error"} is not found`, async () => {
      expect(await find(c.type, c.unknown)).toBeUndefined();
    });
  }

  it('vnin: the same vNIN always has the same id', async () => {
    const [first, second] = await Promise.all([find('vnin', 'AB012345678910YZ'), find('vnin', 'AB012345678910YZ')]);
    expect(first!.id).toBe(second!.id);
    expect(first!.id).toBeGreaterThanOrEqual(1);
  });

  it('cac: each of our company types is sent as Dojah names it', async () => {
    await find('cac', 'limited_company:0001234567');
    expect(lastQuery().query).toEqual({ rc_number: '1234567', company_type: 'COMPANY' });
    await find('cac', 'incorprated_trustee:55');
    expect(lastQuery().query).toEqual({ rc_number: '55', company_type: 'INCORPORATED_TRUSTEES' });
  });
});

describe('dojah: failures', () => {
  it('wrong credentials: 401 is refused', async () => {
    const wrong = dojah.create({ url: server.url, secret: `${server.appId}:test_sk_wrong` });
    const error = await failure(wrong.find({ type: 'bvn', key: '22222222222', signal: AbortSignal.timeout(5_000) }));
    expect(error.kind).toBe('refused');
  });

  it('500 is an http failure', async () => {
    server.override = () => ({ status: 500, body: '{"error":"Internal Server Error"}' });
    expect((await failure(find('nin', '55648152772'))).kind).toBe('http');
  });

  it('a 404 that is not Dojah answering (no error body) is an http failure, not "not found"', async () => {
    server.override = () => ({ status: 404, body: '<html>Not Found</html>' });
    expect((await failure(find('bvn', '22222222222'))).kind).toBe('http');
  });

  it('garbage is malformed', async () => {
    server.override = () => ({ status: 200, body: '<html>502 Bad Gateway</html>' });
    const error = await failure(find('bvn', '22222222222'));
    expect(error.kind).toBe('malformed');
    server.override = () => ({ status: 200, body: '{"data":{}}' });
    expect((await failure(find('bvn', '22222222222'))).message).toBe('entity missing');
  });

  it('a missing field is malformed, named without its value', async () => {
    server.override = (documented) => {
      const body = JSON.parse(documented.body) as { entity: Record<string, unknown> };
      delete body.entity.first_name;
      return { status: 200, body: JSON.stringify(body) };
    };
    const error = await failure(find('bvn', '22222222222'));
    expect(error.kind).toBe('malformed');
    expect(error.message).toBe('entity.first_name missing');
  });

  it('an unreadable date or photo is malformed, without echoing it', async () => {
    server.override = (documented) => {
      const body = JSON.parse(documented.body) as { entity: Record<string, unknown> };
      body.entity.birthDate = '31-02-1998';
      return { status: 200, body: JSON.stringify(body) };
    };
    const date = await failure(find('drivers_license', 'FKJ494A2133'));
    expect(date.message).toBe('entity.birthDate is not a date');
    server.override = (documented) => {
      const body = JSON.parse(documented.body) as { entity: Record<string, unknown> };
      body.entity.image = '<base64 encoded image>';
      return { status: 200, body: JSON.stringify(body) };
    };
    const photo = await failure(find('bvn', '22222222222'));
    expect(photo.message).toBe('entity.image is not base64');
    expect(photo.message).not.toContain('22222222222');
  });

  it('nin_phone without a NIN in the answer is malformed', async () => {
    server.override = (documented) => {
      const body = JSON.parse(documented.body) as { entity: Record<string, unknown> };
      delete body.entity.nin;
      return { status: 200, body: JSON.stringify(body) };
    };
    expect((await failure(find('nin_phone', '+2348034628633'))).message).toBe('entity.nin missing');
  });

  it('a hanging server with an aborted signal is a timeout', async () => {
    server.override = 'hang';
    const error = await failure(find('tin', '21148119-0001', AbortSignal.timeout(200)));
    expect(error.kind).toBe('timeout');
  });

  it('a refused connection is a connection failure', async () => {
    const closed = await startDojahServer();
    await closed.close();
    const gone = dojah.create({ url: closed.url, secret: 'a:b' });
    const error = await failure(gone.find({ type: 'bvn', key: '22222222222', signal: AbortSignal.timeout(5_000) }));
    expect(error.kind).toBe('connection');
  });
});

describe('dojah: the secret', () => {
  it('accepts APP_ID:SECRET_KEY', () => {
    expect(() => dojah.checkSecret('62f5f4a92f94ab003408ba4c:prod_sk_1T1eSavlZxy02OT3OWlvbxK4G')).not.toThrow();
  });

  for (const secret of ['prod_sk_onlyTheKey9', ':prod_sk_noAppId9', '62f5f4a92f94ab003408ba4c:', '62f5f4a9 2f94ab:prod_sk_space9', 'a:b:c9']) {
    it(`rejects ${JSON.stringify(secret.replace(/[^:\s]/g, 'x'))} without echoing it`, () => {
      expect(() => dojah.checkSecret(secret)).toThrow(/APP_ID:SECRET_KEY/);
      try {
        dojah.checkSecret(secret);
      } catch (err) {
        for (const part of secret.split(/[:\s]/).filter((p) => p.length > 2)) expect((err as Error).message).not.toContain(part);
      }
    });
  }

  it('create refuses a malformed secret too', () => {
    expect(() => dojah.create({ url: server.url, secret: 'prod_sk_onlyTheKey9' })).toThrow(/APP_ID:SECRET_KEY/);
  });
});
