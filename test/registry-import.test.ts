import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { normalizePhone } from '../src/identities/matching.js';
import { cacKey, type IdentityType, type RecordOf } from '../src/identities/records.js';
import { EmbeddedRegistry } from '../src/identities/registry/embedded.js';
import { keyringOf } from '../src/platform/crypto/fields.js';
import { importRegistry, type ImportProgress } from '../src/identities/registry/import.js';
import { DATE_FIELDS, vninId } from '../src/identities/registry/import-records.js';
import { bearer, buildTestContext, type TestContext } from './helpers/app.js';
import { Statements } from './helpers/statements.js';
import { cliJson, runCli, throwawayEnv, type CliEnv, type ThrowawayEnv } from './helpers/cli.js';

const RECORDS: { [T in IdentityType]: RecordOf[T] } = {
  bvn: {
    bvn: '22200000001', firstname: 'Emeka', lastname: 'Obi', gender: 'Male', phone: '08091112222',
    birthdate: '01-01-1980', email: 'emeka@example.com',
  },
  nin: {
    nin: '12100000001', firstname: 'Aisha', lastname: 'Bello', gender: 'Female', phone: '0803 123 4567', birthdate: '05-06-1995',
  },
  vnin: { id: 7, vNin: 'ab12cd34ef56gh78', firstname: 'Ngozi', lastname: 'Eze', birthdate: '21-07-1993', gender: 'F' },
  drivers_license: {
    licenseNo: 'kja83927aa02', firstname: 'Ibrahim', lastname: 'Bello', issuedDate: '01-02-2020', expiryDate: '01-02-2025',
    stateOfIssue: 'Lagos', gender: 'Male', birthdate: '09-05-1988',
  },
  vin: { vin: '90f5b1d2e3c4a5b6c7d', fullname: 'Chidi Okafor', firstName: 'Chidi', lastName: 'Okafor', gender: 'Male' },
  // Through unknown: records.ts types CacRecord['type'] as never (Type.Union over a mapped array, not a tuple).
  cac: { type: 'limited_company', rcNumber: 'RC 123', companyName: 'OBI VENTURES LIMITED', status: 'ACTIVE' } as unknown as RecordOf['cac'],
  tin: { tin: '1111aaaa-0001', taxpayerName: 'OBI VENTURES' },
};

const ID = '/v1/verifications/identities';
const line = (type: string, record: object) => JSON.stringify({ type, record });
const bvn = (number: string, firstname = 'Emeka') => line('bvn', { ...RECORDS.bvn, bvn: number, firstname });
const jsonl = (lines: string[]) => Readable.from([lines.join('\n')]);
// The records above carry no photo: the photo check (test/identities/registry-photo-check.test.ts) has nothing to count.
const NO_PHOTO_COUNTS = { checked: 0, noFace: 0, unreadable: 0, unchecked: 0 };
const NO_PHOTOS = { ...NO_PHOTO_COUNTS, problems: [] };
const counts = (imported: number, outcome: { new?: number; updated?: number; unchanged?: number }, rejected = 0) => ({
  imported, rejected, new: outcome.new ?? 0, updated: outcome.updated ?? 0, unchanged: outcome.unchanged ?? 0,
});

describe('registry import', () => {
  let t: TestContext;
  let registry: EmbeddedRegistry;
  const db = () => t.database.db;
  const count = async () => Number((await db().selectFrom('registry_records').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const snapshot = () => db().selectFrom('registry_records').select(['type', 'key', 'phone', 'record', 'updated_at']).orderBy('type').orderBy('key').execute();

  beforeAll(async () => {
    t = await buildTestContext();
    registry = new EmbeddedRegistry(db());
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await db().deleteFrom('registry_records').execute();
  });

  it('imports a record of every type, found through the embedded registry by its normalised key', async () => {
    const lines = Object.entries(RECORDS).map(([type, record]) => line(type, record));
    expect(await importRegistry(db(), jsonl(lines))).toEqual({ ...counts(7, { new: 7 }), errors: [], photos: NO_PHOTOS });

    expect(await registry.find('bvn', '22200000001')).toEqual(RECORDS.bvn);
    expect(await registry.find('nin', '12100000001')).toEqual(RECORDS.nin);
    expect(await registry.find('vnin', 'AB12CD34EF56GH78')).toEqual(RECORDS.vnin);
    expect(await registry.find('drivers_license', 'KJA83927AA02')).toEqual(RECORDS.drivers_license);
    expect(await registry.find('vin', '90F5B1D2E3C4A5B6C7D')).toEqual(RECORDS.vin);
    expect(await registry.find('tin', '1111AAAA-0001')).toEqual(RECORDS.tin);
    for (const rcNumber of ['RC 123', 'rc123', '123', 123, 'RC0123']) {
      expect(await registry.find('cac', cacKey('limited_company', rcNumber))).toEqual(RECORDS.cac);
    }
    expect(await registry.find('cac', cacKey('business', 'RC 123'))).toBeUndefined();
    expect(await registry.find('bvn', '12100000001')).toBeUndefined();
  });

  it('reads the lookups of a type that arrive together in one statement, each answered with its own copy', async () => {
    await importRegistry(db(), jsonl([bvn('22200000001'), bvn('22200000002', 'Ada'), line('nin', RECORDS.nin)]));
    const statements = new Statements();
    const batched = new EmbeddedRegistry(db().withPlugin(statements));
    const found = await Promise.all([
      batched.find('bvn', '22200000001'),
      batched.find('bvn', '22200000002'),
      batched.find('bvn', '22200000001'),
      batched.find('bvn', '22299999999'),
      batched.find('nin', '12100000001'),
      batched.find('nin', '22200000002'),
    ]);
    expect(found).toEqual([RECORDS.bvn, { ...RECORDS.bvn, bvn: '22200000002', firstname: 'Ada' }, RECORDS.bvn, undefined, RECORDS.nin, undefined]);
    // Per type: the first lookup alone, then the ones that arrived while it ran, together.
    expect(statements.results).toBe(4);
    // Two lookups of one number share the read, not the record: changing one leaves the other.
    expect(found[0]).not.toBe(found[2]);
    // Alone, a lookup is one statement, as before.
    expect(await batched.find('bvn', '22200000002')).toMatchObject({ firstname: 'Ada' });
    expect(statements.results).toBe(5);
  });

  it('finds a NIN by its phone in E.164 whatever form the file and the caller wrote it in', async () => {
    await importRegistry(db(), jsonl([line('nin', RECORDS.nin), bvn('22200000002')]));
    for (const form of ['08031234567', '+234 803 123 4567', '2348031234567', '(0803) 123-4567', '8031234567']) {
      const phone = normalizePhone(form);
      expect(phone).toBe('+2348031234567');
      expect(await registry.findNinByPhone(phone!)).toEqual(RECORDS.nin);
    }
    // A BVN's phone is not a NIN-by-phone key.
    expect(await registry.findNinByPhone('+2348091112222')).toBeUndefined();
  });

  it('stores no number, phone or record in clear: blind-indexed keys and phones, encrypted records', async () => {
    await importRegistry(db(), jsonl([line('nin', RECORDS.nin), line('bvn', RECORDS.bvn)]));
    const { rows } = await sql<{ type: string; key: string; phone: string | null; record: string; record_mac: string }>`
      select type, key, phone, record::text as record, record_mac from registry_records order by type`.execute(db().withoutPlugins());
    expect(rows.map((row) => row.type)).toEqual(['bvn', 'nin']);
    const keyring = keyringOf(db());
    expect(rows[0]!.key).toBe(keyring.blindIndex('bvn', RECORDS.bvn.bvn));
    expect(rows[1]!.key).toBe(keyring.blindIndex('nin', RECORDS.nin.nin));
    expect(rows[1]!.phone).toBe(keyring.blindIndex('phone', '+2348031234567'));
    expect(rows[0]!.phone).toBeNull();
    const raw = JSON.stringify(rows);
    for (const value of [RECORDS.bvn.bvn, RECORDS.nin.nin, '8031234567', '0803 123 4567', RECORDS.nin.firstname, RECORDS.bvn.firstname]) expect(raw).not.toContain(value);
    for (const row of rows) {
      expect(row.record).toMatch(/^"vx1:[0-9a-f]{8}:[A-Za-z0-9_-]+"$/);
      expect(row.key).toMatch(/^[0-9a-f]{64}$/);
      expect(row.record_mac).toMatch(/^[0-9a-f]{64}$/);
    }
    // Read through the app's database, the record is the record.
    expect((await db().selectFrom('registry_records').select('record').where('type', '=', 'nin').executeTakeFirstOrThrow()).record).toEqual(RECORDS.nin);
  });

  it('keeps a NIN whose phone is not a valid number, without a phone key', async () => {
    const record = { ...RECORDS.nin, phone: '12345' };
    expect((await importRegistry(db(), jsonl([line('nin', record)]))).imported).toBe(1);
    expect(await registry.find('nin', RECORDS.nin.nin)).toEqual(record);
    const row = await db().selectFrom('registry_records').select('phone').executeTakeFirstOrThrow();
    expect(row.phone).toBeNull();
  });

  describe('dates', () => {
    // The same person's dates in each accepted form: every date field of every type.
    const FORMS = {
      dmy: { birthdate: '14-03-1991', issuedDate: '29-02-2020', expiryDate: '28-02-2025' },
      slashes: { birthdate: '14/03/1991', issuedDate: '29/02/2020', expiryDate: '28/02/2025' },
      iso: { birthdate: '1991-03-14', issuedDate: '2020-02-29', expiryDate: '2025-02-28' },
    };
    const dated = (type: IdentityType, form: keyof typeof FORMS) => {
      const dates = FORMS[form];
      const record: Record<string, unknown> = { ...RECORDS[type] };
      for (const field of DATE_FIELDS[type]) record[field] = dates[field as keyof typeof dates];
      return record;
    };
    const withKey = (type: IdentityType, record: Record<string, unknown>, index: number): Record<string, unknown> => {
      const keyField = { bvn: 'bvn', nin: 'nin', vnin: 'vNin', drivers_license: 'licenseNo', vin: 'vin', cac: 'rcNumber', tin: 'tin' }[type];
      const value = String(record[keyField]);
      return { ...record, [keyField]: `${value.slice(0, -1)}${index}`, ...(type === 'nin' ? { phone: `0803123450${index}` } : {}) };
    };

    it('finds every date field of every type, and each has one', () => {
      expect(DATE_FIELDS).toEqual({
        bvn: ['birthdate'], nin: ['birthdate'], vnin: ['birthdate'], drivers_license: ['issuedDate', 'expiryDate', 'birthdate'],
        vin: ['birthdate'], cac: [], tin: [],
      });
    });

    it('stores ISO, day-month-year and slashed dates of every date field as one form: 14-03-1991', async () => {
      const types = (Object.keys(DATE_FIELDS) as IdentityType[]).filter((type) => DATE_FIELDS[type].length > 0);
      const forms = Object.keys(FORMS) as (keyof typeof FORMS)[];
      const lines = types.flatMap((type) => forms.map((form, index) => line(type, withKey(type, dated(type, form), index + 1))));
      expect(await importRegistry(db(), jsonl(lines))).toMatchObject({ imported: lines.length, rejected: 0 });

      const rows = await db().selectFrom('registry_records').select(['type', 'record']).execute();
      expect(rows).toHaveLength(lines.length);
      for (const { type, record } of rows) {
        const fields = record as Record<string, unknown>;
        for (const field of DATE_FIELDS[type as IdentityType]) expect(fields[field], `${type}.${field}`).toBe(FORMS.dmy[field as keyof typeof FORMS.dmy]);
      }
    });

    it('answers a live lookup the same for a record imported with ISO dates as for one with day-month-year dates', async () => {
      const org = await t.org({ fund: 1_000_000 });
      const isoBvn = { ...RECORDS.bvn, bvn: '22200000081', birthdate: '1991-03-14' };
      const dmyBvn = { ...RECORDS.bvn, bvn: '22200000082', birthdate: '14-03-1991' };
      const isoLicense = { ...dated('drivers_license', 'iso'), licenseNo: 'ISO00000001' };
      const dmyLicense = { ...dated('drivers_license', 'dmy'), licenseNo: 'DMY00000001' };
      const lines = [line('bvn', isoBvn), line('bvn', dmyBvn), line('drivers_license', isoLicense), line('drivers_license', dmyLicense)];
      expect(await importRegistry(db(), jsonl(lines))).toMatchObject({ imported: 4, rejected: 0 });

      const lookup = async (url: string, dob: string) => {
        const res = await t.app.inject({ method: 'POST', url: `${ID}${url}`, headers: bearer(org.liveSecret), payload: { firstname: 'x', lastname: 'y', dob } });
        expect(res.statusCode, res.body).toBeLessThan(300);
        return res.json().data as Record<string, unknown>;
      };
      for (const dob of ['1991-03-14', '14-03-1991']) {
        const [iso, dmy] = [await lookup('/bvn/22200000081?type=premium', dob), await lookup('/bvn/22200000082?type=premium', dob)];
        expect(iso.birthdate).toBe('14-03-1991');
        expect({ ...iso, bvn: undefined }).toEqual({ ...dmy, bvn: undefined });
        expect(iso.fieldMatches).toMatchObject({ dob: true });
      }
      const [isoAnswer, dmyAnswer] = [await lookup('/drivers_license/ISO00000001', '1991-03-14'), await lookup('/drivers_license/DMY00000001', '1991-03-14')];
      expect(isoAnswer).toMatchObject({ issuedDate: '29-02-2020', expiryDate: '28-02-2025', birthdate: '14-03-1991', fieldMatches: { dob: true } });
      expect({ ...isoAnswer, licenseNo: undefined }).toEqual({ ...dmyAnswer, licenseNo: undefined });
    });

    it('counts a record imported again with its dates in the other form as unchanged', async () => {
      const lines = (form: keyof typeof FORMS) => (['bvn', 'drivers_license'] as const).map((type) => line(type, dated(type, form)));
      expect(await importRegistry(db(), jsonl(lines('dmy')))).toMatchObject(counts(2, { new: 2 }));
      const before = await snapshot();
      expect(await importRegistry(db(), jsonl(lines('iso')))).toMatchObject(counts(2, { unchanged: 2 }));
      expect(await snapshot()).toEqual(before);
    });

    it("stores a company's registration date as an ISO timestamp with offset, whatever form the file gave", async () => {
      const forms: [string, string][] = [
        ['2015-06-18T00:00:00.000+00:00', '2015-06-18T00:00:00.000+00:00'],
        ['2015-06-18T09:30Z', '2015-06-18T09:30:00.000+00:00'],
        ['2015-06-18 09:30:15.5+0100', '2015-06-18T09:30:15.500+01:00'],
        ['2015-06-18', '2015-06-18T00:00:00.000+00:00'],
        ['18-06-2015', '2015-06-18T00:00:00.000+00:00'],
      ];
      const lines = forms.map(([registrationDate], i) => line('cac', { ...RECORDS.cac, rcNumber: `RC ${500 + i}`, registrationDate }));
      expect(await importRegistry(db(), jsonl(lines))).toMatchObject({ imported: forms.length, rejected: 0 });
      for (const [i, [, stored]] of forms.entries()) {
        expect((await registry.find('cac', cacKey('limited_company', 500 + i)))?.registrationDate).toBe(stored);
      }
    });

    it('rejects impossible dates with the line number and the field, never the value', async () => {
      const license = RECORDS.drivers_license;
      const lines = [
        line('bvn', { ...RECORDS.bvn, bvn: '22200000091', birthdate: '2023-02-30' }),
        line('bvn', { ...RECORDS.bvn, bvn: '22200000092', birthdate: '29-02-2024' }),
        line('nin', { ...RECORDS.nin, birthdate: '31-04-1990' }),
        line('vnin', { ...RECORDS.vnin, birthdate: '29/02/2023' }),
        line('drivers_license', { ...license, issuedDate: '2020-13-01', expiryDate: '00-02-2025' }),
        line('vin', { ...RECORDS.vin, birthdate: '1850-01-01' }),
        line('cac', { ...RECORDS.cac, registrationDate: '2015-02-30T00:00:00Z' }),
        line('cac', { ...RECORDS.cac, rcNumber: 'RC 124', registrationDate: '2015-06-18T25:00:00Z' }),
        line('bvn', { ...RECORDS.bvn, bvn: '22200000093', birthdate: '14-03/1991' }),
        line('bvn', { ...RECORDS.bvn, bvn: '22200000094', birthdate: '1991-03-14T00:00:00Z' }),
      ];
      const result = await importRegistry(db(), jsonl(lines));
      expect(result).toMatchObject(counts(1, { new: 1 }, 9));
      const notReal = 'is not a real date (no such day or month, or a year outside 1900-2100)';
      expect(result.errors).toEqual([
        { line: 1, message: `record.birthdate ${notReal}` },
        { line: 3, message: `record.birthdate ${notReal}` },
        { line: 4, message: `record.birthdate ${notReal}` },
        { line: 5, message: `record.issuedDate ${notReal}; record.expiryDate ${notReal}` },
        { line: 6, message: `record.birthdate ${notReal}` },
        { line: 7, message: `record.registrationDate ${notReal}, or no such time or offset` },
        { line: 8, message: `record.registrationDate ${notReal}, or no such time or offset` },
        { line: 9, message: 'record.birthdate must be a date written 14-03-1990, 14/03/1990 or 1990-03-14' },
        { line: 10, message: 'record.birthdate must be a date written 14-03-1990, 14/03/1990 or 1990-03-14' },
      ]);
      expect(await count()).toBe(1);
      expect((await registry.find('bvn', '22200000092'))?.birthdate).toBe('29-02-2024');
    });
  });

  describe('vNIN id', () => {
    const { id: _id, ...withoutId } = RECORDS.vnin;

    it('assigns an id derived from the vNIN to a record without one, the same on every import', async () => {
      const other = { ...withoutId, vNin: 'ZZ12CD34EF56GH78' };
      await importRegistry(db(), jsonl([line('vnin', withoutId), line('vnin', other)]));
      const first = await registry.find('vnin', 'AB12CD34EF56GH78');
      expect(first).toEqual({ id: vninId('AB12CD34EF56GH78'), ...withoutId });
      expect(Number.isSafeInteger(first!.id) && first!.id >= 1).toBe(true);
      expect((await registry.find('vnin', 'ZZ12CD34EF56GH78'))!.id).not.toBe(first!.id);

      // Again, and again into an empty registry: the same id, not the next one.
      expect(await importRegistry(db(), jsonl([line('vnin', withoutId)]))).toMatchObject(counts(1, { unchanged: 1 }));
      await db().deleteFrom('registry_records').execute();
      expect(await importRegistry(db(), jsonl([line('vnin', { ...withoutId, vNin: 'AB12cd34ef56gh78' })]))).toMatchObject(counts(1, { new: 1 }));
      expect((await registry.find('vnin', 'AB12CD34EF56GH78'))!.id).toBe(first!.id);

      const org = await t.org();
      const res = await t.app.inject({ method: 'POST', url: `${ID}/virtual-nin/AB12CD34EF56GH78`, headers: bearer(org.liveSecret), payload: {} });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.id).toBe(first!.id);
    });

    it('keeps an id the file gives, and refuses one that is not a positive integer', async () => {
      const result = await importRegistry(db(), jsonl([line('vnin', RECORDS.vnin), line('vnin', { ...withoutId, vNin: 'ZZ12CD34EF56GH78', id: 0 })]));
      expect(result).toMatchObject(counts(1, { new: 1 }, 1));
      expect(result.errors).toEqual([{ line: 2, message: 'record.id must be >= 1' }]);
      expect((await registry.find('vnin', 'AB12CD34EF56GH78'))!.id).toBe(7);
    });
  });

  it('rejects bad lines with their line numbers, stores nothing from them and imports the rest', async () => {
    const lines = [
      bvn('22200000011'),
      '{"type": "bvn", "record": ',
      line('passport', { number: 'A1234567' }),
      line('bvn', { ...RECORDS.bvn, bvn: '22200000013', lastname: undefined }),
      line('bvn', { ...RECORDS.bvn, bvn: '2220000001' }),
      line('bvn', { ...RECORDS.bvn, bvn: '22200000015', favouriteColour: 'blue' }),
      line('cac', { ...RECORDS.cac, type: 'plc', rcNumber: 'RC 999' }),
      line('nin', { ...RECORDS.nin, nin: '12100000018', birthdate: 'yesterday' }),
      JSON.stringify({ type: 'bvn', record: { ...RECORDS.bvn, bvn: '22200000019' }, source: 'bank' }),
      line('bvn', { ...RECORDS.bvn, bvn: '22200000020', firstname: 'Nul\u0000l' }),
      '[]',
      bvn('22200000022'),
    ];
    const result = await importRegistry(db(), jsonl(lines));
    expect(result.imported).toBe(2);
    expect(result.rejected).toBe(10);
    expect(result.errors.map((error) => error.line)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const message = (lineNumber: number) => result.errors.find((error) => error.line === lineNumber)?.message;
    expect(message(2)).toMatch(/^not valid JSON/);
    expect(message(3)).toBe('type "passport" is unknown: expected one of bvn, nin, vnin, drivers_license, vin, cac, tin');
    expect(message(4)).toBe('record.lastname is required');
    expect(message(5)).toBe('record.bvn must match pattern ^\\d{11}$');
    expect(message(6)).toBe('record.favouriteColour is not allowed');
    expect(message(7)).toBe('record.type must be one of "limited_company", "business", "incorprated_trustee"');
    expect(message(8)).toBe('record.birthdate must be a date written 14-03-1990, 14/03/1990 or 1990-03-14');
    expect(message(9)).toMatch(/^source is not allowed/);
    expect(message(10)).toMatch(/^record\.firstname contains a NUL character/);
    expect(message(11)).toMatch(/JSON object/);

    expect(await count()).toBe(2);
    expect(await registry.find('bvn', '22200000011')).toBeDefined();
    expect(await registry.find('bvn', '22200000022')).toBeDefined();
    for (const number of ['22200000013', '2220000001', '22200000015', '22200000019', '22200000020']) {
      expect(await registry.find('bvn', number)).toBeUndefined();
    }
    expect(await registry.find('cac', cacKey('limited_company', 'RC 999'))).toBeUndefined();
    expect(await registry.find('nin', '12100000018')).toBeUndefined();
  });

  it('quotes no value of a rejected line in its reason: no number, phone, name or date', async () => {
    const secret = '22233344455';
    const lines = [
      `{"type": "bvn", "record": {"bvn": ${secret}x}}`,
      `${secret} Emeka Obi`,
      `"${secret}"`,
      line(secret, { bvn: secret }),
      line('bvn', { ...RECORDS.bvn, bvn: `${secret}0` }),
      line('bvn', { ...RECORDS.bvn, bvn: '22200000095', [secret]: 'x', 'emeka@example.com': 'y' }),
      line('bvn', { ...RECORDS.bvn, bvn: '22200000096', birthdate: `${secret}` }),
      line('bvn', { ...RECORDS.bvn, bvn: '22200000097', birthdate: '31-02-1980' }),
      JSON.stringify({ type: 'bvn', record: RECORDS.bvn, [secret]: true }),
    ];
    const { errors } = await importRegistry(db(), jsonl(lines));
    expect(errors.map((error) => error.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const { message } of errors) {
      expect(message).not.toContain(secret.slice(0, 6));
      expect(message).not.toMatch(/Emeka|emeka@|31-02-1980/);
    }
    expect(errors[0]!.message).toMatch(/^not valid JSON \(.*position \d+/);
    expect(errors[5]!.message).toBe('record.(a field whose name is not a word) is not allowed; record.(a field whose name is not a word) is not allowed');
  });

  it('names every failing field of a line', async () => {
    const record = { ...RECORDS.cac, rcNumber: 0, status: undefined, companyName: 42 };
    const { errors } = await importRegistry(db(), jsonl([line('cac', record)]));
    expect(errors).toEqual([
      {
        line: 1,
        message:
          'record.status is required; record.rcNumber must be a string matching ^\\s*([A-Za-z]{2}\\s*)?\\d{1,10}\\s*$ or an integer >= 1; record.companyName must be a string',
      },
    ]);
  });

  it('keeps the first 100 errors but counts every rejected line', async () => {
    const lines = Array.from({ length: 150 }, (_, i) => (i % 3 === 0 ? bvn(String(22200001000 + i)) : 'not json'));
    const result = await importRegistry(db(), jsonl(lines));
    expect(result).toMatchObject({ imported: 50, rejected: 100 });
    const many = await importRegistry(db(), jsonl(Array.from({ length: 130 }, () => '{')));
    expect(many.rejected).toBe(130);
    expect(many.errors).toHaveLength(100);
    expect(many.errors[99]!.line).toBe(100);
  });

  it('replaces a record imported again under the same key, and counts new, updated and unchanged lines', async () => {
    const first = [bvn('22200000031', 'Emeka'), bvn('22200000032', 'Ada'), line('nin', RECORDS.nin)];
    expect(await importRegistry(db(), jsonl(first))).toMatchObject(counts(3, { new: 3 }));
    const moved = { ...RECORDS.nin, firstname: 'Aishat', phone: '+2348059998888' };
    const again = await importRegistry(db(), jsonl([bvn('22200000031', 'Chukwuemeka'), line('nin', moved), bvn('22200000032', 'Ada')]));
    expect(again).toEqual({ ...counts(3, { updated: 2, unchanged: 1 }), errors: [], photos: NO_PHOTOS });
    expect(await count()).toBe(3);
    expect((await registry.find('bvn', '22200000031'))?.firstname).toBe('Chukwuemeka');
    expect((await registry.find('bvn', '22200000032'))?.firstname).toBe('Ada');
    expect(await registry.find('nin', RECORDS.nin.nin)).toEqual(moved);
    expect(await registry.findNinByPhone('+2348031234567')).toBeUndefined();
    expect(await registry.findNinByPhone('+2348059998888')).toEqual(moved);

    // A phone written another way is the same key: the record changes, so it is an update.
    expect(await importRegistry(db(), jsonl([line('nin', { ...moved, phone: '0805 999 8888' })]))).toMatchObject(counts(1, { updated: 1 }));
    expect(await count()).toBe(3);
  });

  it('changes nothing when the same file is imported again: 0 new, every line unchanged', async () => {
    const lines = [...Object.entries(RECORDS).map(([type, record]) => line(type, record)), line('vnin', { ...RECORDS.vnin, id: undefined, vNin: 'ZZ12CD34EF56GH78' })];
    expect(await importRegistry(db(), jsonl(lines), { batchSize: 3 })).toMatchObject(counts(8, { new: 8 }));
    const before = await snapshot();
    for (const batchSize of [3, 2000]) {
      expect(await importRegistry(db(), jsonl(lines), { batchSize })).toEqual({ ...counts(8, { unchanged: 8 }), errors: [], photos: NO_PHOTOS });
    }
    // Same rows, same records, same updated_at: the second run wrote nothing.
    expect(await snapshot()).toEqual(before);
  });

  it('keeps the last of a key repeated in one file, within a batch and across batches', async () => {
    const lines = [bvn('22200000041', 'One'), bvn('22200000042', 'A'), bvn('22200000041', 'Two'), bvn('22200000041', 'Three')];
    for (const batchSize of [2000, 2, 1]) {
      await db().deleteFrom('registry_records').execute();
      expect(await importRegistry(db(), jsonl(lines), { batchSize })).toMatchObject(counts(4, { new: 2, updated: 2 }));
      expect(await count()).toBe(2);
      expect((await registry.find('bvn', '22200000041'))?.firstname).toBe('Three');
    }
    // Keys are compared normalised: `rc 7` and `RC0007` are one company.
    const cac = (rcNumber: string, companyName: string) => line('cac', { ...RECORDS.cac, rcNumber, companyName });
    await importRegistry(db(), jsonl([cac('rc 7', 'FIRST'), cac('RC0007', 'SECOND')]));
    expect((await registry.find('cac', cacKey('limited_company', 7)))?.companyName).toBe('SECOND');
    // A line repeated as it is changes nothing the second time.
    expect(await importRegistry(db(), jsonl([bvn('22200000043'), bvn('22200000043')]))).toMatchObject(counts(2, { new: 1, unchanged: 1 }));
  });

  it('skips blank lines without counting them, and numbers lines as the file does', async () => {
    const text = `\uFEFF${bvn('22200000051')}\r\n\r\n   \r\n${bvn('2220000005')}\r\n\n${bvn('22200000053')}\n\n`;
    const result = await importRegistry(db(), Readable.from([text]));
    expect(result).toMatchObject({ imported: 2, rejected: 1, errors: [{ line: 4 }] });
    expect(await count()).toBe(2);
  });

  it('reads an async iterable of text chunks split anywhere', async () => {
    const text = [bvn('22200000061'), bvn('22200000062'), bvn('22200000063')].join('\n');
    async function* chunks() {
      for (let i = 0; i < text.length; i += 7) yield text.slice(i, i + 7);
    }
    expect((await importRegistry(db(), chunks())).imported).toBe(3);
    expect(await count()).toBe(3);
  });

  it('imports 20,000 lines in batches, reporting progress while it runs and once at the end', async () => {
    async function* lines() {
      for (let i = 0; i < 20_000; i++) {
        // A pause now and then, so that the progress timer fires while lines are being read.
        if (i % 2_500 === 0) await new Promise((resolve) => setTimeout(resolve, 30));
        yield i === 7 ? 'not json\n' : i % 2 === 0
          ? `${bvn(String(30000000000 + i))}\n`
          : `${line('nin', { ...RECORDS.nin, nin: String(40000000000 + i), phone: `080${String(30000000 + i)}` })}\n`;
      }
    }
    const progress: ImportProgress[] = [];
    const result = await importRegistry(db(), Readable.from(lines()), { onProgress: (p) => progress.push(p), progressEveryMs: 10 });
    expect(result).toMatchObject(counts(19_999, { new: 19_999 }, 1));
    expect(progress.length).toBeGreaterThan(2);
    expect(progress.at(-1)).toMatchObject({ read: 20_000, imported: 19_999, rejected: 1 });
    for (const [i, p] of progress.entries()) {
      expect(p.imported + p.rejected).toBeLessThanOrEqual(p.read);
      if (i > 0) for (const field of ['read', 'imported', 'rejected', 'elapsedMs'] as const) expect(p[field]).toBeGreaterThanOrEqual(progress[i - 1]![field]);
    }
    // Before the end, `imported` moves a whole batch at a time.
    expect(progress.slice(0, -1).every((p) => p.imported % 2000 === 0)).toBe(true);
    expect(progress.some((p) => p.read > 0 && p.read < 20_000)).toBe(true);
    expect(await count()).toBe(19_999);
    expect((await registry.findNinByPhone('+2348030019999'))?.nin).toBe('40000019999');
  });

  it('stops with the database error keeping whole batches; a re-run stores every good record exactly once', async () => {
    // Keys are stored as blind indexes (docs/data-protection.md).
    const index = (number: string) => keyringOf(db()).blindIndex('bvn', number);
    await db().schema.alterTable('registry_records').addCheckConstraint('no_poison', sql`key <> ${sql.lit(index('22200000099'))}`).execute();
    const numbers = ['22200000071', '22200000072', '22200000099', '22200000073', '22200000074', '22200000075', '22200000076', '22200000077'];
    const file = numbers.map((number) => bvn(number));
    try {
      await expect(importRegistry(db(), jsonl(file), { batchSize: 2 })).rejects.toThrow(/no_poison/);
      const stored = (await db().selectFrom('registry_records').select('key').orderBy('key').execute()).map((row) => row.key);
      // The third batch may have been written beside the failed second one; the fourth never is.
      const expected = [['22200000071', '22200000072'], ['22200000071', '22200000072', '22200000074', '22200000075']].map((keys) => keys.map(index).sort());
      expect(expected).toContainEqual(stored);
    } finally {
      await db().schema.alterTable('registry_records').dropConstraint('no_poison').execute();
    }
    const stored = await count();
    expect(await importRegistry(db(), jsonl(file), { batchSize: 2 })).toMatchObject(counts(8, { new: 8 - stored, unchanged: stored }));
    const keys = await db().selectFrom('registry_records').select(['type', 'key']).execute();
    expect(keys.map((row) => row.key).sort()).toEqual(numbers.map(index).sort());
  });

  it('completes a file with a bad line in the middle once the line is fixed, adding only that record', async () => {
    const good = Array.from({ length: 9 }, (_, i) => bvn(String(22200000200 + i)));
    const broken = [...good.slice(0, 4), line('bvn', { ...RECORDS.bvn, bvn: '22200000300', birthdate: '30-02-1980' }), ...good.slice(4)];
    expect(await importRegistry(db(), jsonl(broken), { batchSize: 4 })).toMatchObject(counts(9, { new: 9 }, 1));
    const fixed = [...good.slice(0, 4), line('bvn', { ...RECORDS.bvn, bvn: '22200000300', birthdate: '1980-02-29' }), ...good.slice(4)];
    expect(await importRegistry(db(), jsonl(fixed), { batchSize: 4 })).toMatchObject(counts(10, { new: 1, unchanged: 9 }));
    expect(await count()).toBe(10);
    expect((await registry.find('bvn', '22200000300'))?.birthdate).toBe('29-02-1980');
  });
});

// Every case spawns `vouch` as built for the run (test/global-setup.ts).
const SLOW = 90_000;
const PROGRESS = /^registry import: (\d+) read, (\d+) imported, (\d+) rejected, (\d+) records\/s$/;
const bvnLines = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => bvn(String(22300000000 + from + i), i % 2 === 0 ? 'Ada' : 'Obi')).join('\n') + '\n';

describe('vouch registry import', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let dir: string;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = throwaway.env;
    dir = String(env.VOUCH_DATA_DIR);
  });
  afterAll(async () => {
    await throwaway?.cleanup();
  });

  it('prints progress on stderr with --progress, keeps stdout one JSON document, and none without it', { timeout: SLOW }, async () => {
    const file = path.join(dir, 'progress.jsonl');
    const secret = '22233344455';
    await fs.writeFile(file, `${bvnLines(100_000, 103_000)}{"type": "bvn", "record": {"bvn": "${secret}", "phone": "08031234567"}}\n`);
    const withProgress = await runCli(['registry', 'import', file, '--json', '--progress'], env);
    expect(withProgress.code, withProgress.stderr).toBe(0);
    expect(withProgress.stdout).toMatch(/^[^\n]+\n$/);
    expect(JSON.parse(withProgress.stdout)).toEqual({ imported: 3000, rejected: 1, new: 3000, updated: 0, unchanged: 0, photos: NO_PHOTO_COUNTS });

    const stderr = withProgress.stderr.trimEnd().split('\n');
    const progress = stderr.filter((text) => PROGRESS.test(text));
    expect(progress.length, withProgress.stderr).toBeGreaterThanOrEqual(1);
    expect(progress.at(-1)).toMatch(/^registry import: 3001 read, 3000 imported, 1 rejected, \d+ records\/s$/);
    expect(stderr.filter((text) => !PROGRESS.test(text))).toEqual(['rejected line 3001: record.firstname is required; record.lastname is required; record.gender is required; record.birthdate is required']);
    expect(withProgress.stderr).not.toContain(secret);
    expect(withProgress.stderr).not.toContain('08031234567');

    // Not a terminal and no --progress: no progress, only the rejected line.
    const quiet = await runCli(['registry', 'import', file, '--json'], env);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(JSON.parse(quiet.stdout)).toEqual({ imported: 3000, rejected: 1, new: 0, updated: 0, unchanged: 3000, photos: NO_PHOTO_COUNTS });
    expect(quiet.stderr).not.toMatch(/registry import:/);
    expect(quiet.stderr.trimEnd().split('\n')).toHaveLength(1);

    const human = await runCli(['registry', 'import', file], env);
    expect(human.stdout).toBe('imported 3000 (0 new, 0 updated, 3000 unchanged), rejected 1\n');
  });

  it('killed mid-way, leaves whole batches; the re-run adds the rest and a third run changes nothing', { timeout: SLOW }, async () => {
    // 5,000 lines on standard input, kept open: two batches of 2,000 are stored, 1,000 wait for more.
    const child = spawn(process.execPath, [path.join(inject('vouchBuild'), 'main.js'), 'registry', 'import', '-', '--json', '--progress'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const stored4000 = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no progress line with 4000 imported: ${stderr}`)), SLOW - 30_000);
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        if (/, 4000 imported,/.test(stderr)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    child.stdin.write(bvnLines(0, 5000));
    try {
      await stored4000;
    } finally {
      child.kill('SIGKILL');
    }
    expect(await exited).toBe('SIGKILL');
    expect(stdout).toBe('');

    const file = path.join(dir, 'full.jsonl');
    await fs.writeFile(file, bvnLines(0, 6000));
    expect(await cliJson(['registry', 'import', file, '--json'], env)).toEqual({ imported: 6000, rejected: 0, new: 2000, updated: 0, unchanged: 4000, photos: NO_PHOTO_COUNTS });
    expect(await cliJson(['registry', 'import', file, '--json'], env)).toEqual({ imported: 6000, rejected: 0, new: 0, updated: 0, unchanged: 6000, photos: NO_PHOTO_COUNTS });
  });
});
