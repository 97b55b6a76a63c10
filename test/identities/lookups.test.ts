import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

const ID = '/v1/verifications/identities';
const ADAEZE = { firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' };

describe('identity lookups in test mode', () => {
  let t: TestContext;
  let secret: string;
  const post = (url: string, payload: object = {}, key = secret) =>
    t.app.inject({ method: 'POST', url: `${ID}${url}`, headers: bearer(key), payload });

  beforeAll(async () => {
    t = await buildTestContext();
    secret = (await t.org()).testSecret;
  });
  afterAll(() => t.close());

  describe('BVN', () => {
    it('answers the basic payload by default with two-key field matches', async () => {
      const res = await post('/bvn/22345678901', ADAEZE);
      expect(res.statusCode).toBe(200);
      const { status, data } = res.json();
      expect(status).toBe('success');
      expect(data).toMatchObject({ bvn: '22345678901', firstname: 'Adaeze', lastname: 'Okonkwo', middlename: 'Chiamaka' });
      expect(data.fieldMatches).toEqual({ firstname: true, lastname: true });
      expect(data.photo.length).toBeGreaterThan(100);
      expect(data).not.toHaveProperty('enrollmentBank');
      expect(data).not.toHaveProperty('email');
      expect(Object.keys(data).sort()).toEqual(
        ['bvn', 'firstname', 'lastname', 'middlename', 'gender', 'phone', 'birthdate', 'photo', 'fieldMatches'].sort(),
      );
    });

    it('answers the premium payload with three-key field matches and the premium fields', async () => {
      const res = await post('/bvn/22345678901?type=premium', ADAEZE);
      expect(res.statusCode).toBe(200);
      const { data } = res.json();
      expect(data.fieldMatches).toEqual({ firstname: true, lastname: true, dob: true });
      for (const field of ['maritalStatus', 'lgaOfResidence', 'lgaOfOrigin', 'residentialAddress', 'stateOfOrigin',
        'enrollmentBank', 'enrollmentBranch', 'nameOnCard', 'title', 'levelOfAccount']) {
        expect(typeof data[field], field).toBe('string');
      }
    });

    it('matches names and dates in other spellings and formats', async () => {
      const res = await post('/bvn/22345678901?type=premium', { firstname: 'ADAEZE ', lastname: 'okonkwo', dob: '1990-03-14' });
      expect(res.json().data.fieldMatches).toEqual({ firstname: true, lastname: true, dob: true });
    });

    it('reports differing details as false matches, not as an error', async () => {
      const res = await post('/bvn/22345678901?type=premium', { firstname: 'Ngozi', lastname: 'Okonkwo', dob: '15-03-1990' });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.fieldMatches).toEqual({ firstname: false, lastname: true, dob: false });
    });

    it('answers fields not sent as not matched', async () => {
      const res = await post('/bvn/22345678901?type=premium', {});
      expect(res.statusCode).toBe(200);
      expect(res.json().data.fieldMatches).toEqual({ firstname: false, lastname: false, dob: false });
    });

    it('works with no body at all', async () => {
      const res = await t.app.inject({ method: 'POST', url: `${ID}/bvn/22345678901`, headers: bearer(secret) });
      expect(res.statusCode).toBe(200);
    });

    it('answers 404 style C for any other BVN', async () => {
      const res = await post('/bvn/22345678902', ADAEZE);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: 'NOT_FOUND_ERROR', message: expect.stringMatching(/valid BVN/) , requestId: expect.stringMatching(/^req_/) });
    });

    it('rejects a malformed BVN, type or dob with 400 style B', async () => {
      for (const [url, body, pattern] of [
        ['/bvn/1234', ADAEZE, /11 digits/],
        ['/bvn/22345678901?type=gold', ADAEZE, /type/],
        ['/bvn/22345678901', { ...ADAEZE, dob: '31-02-1990' }, /dob/],
      ] as const) {
        const res = await post(url, body);
        expect(res.statusCode, url).toBe(400);
        expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(pattern) });
      }
    });
  });

  describe('BVN match', () => {
    it('answers 201 with six booleans, accepting the sample keys phone and email', async () => {
      const res = await post('/bvn/22345678901/match', {
        ...ADAEZE, gender: 'F', phone: '+2348031234567', email: 'ADAEZE.OKONKWO@example.com',
      });
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toEqual({
        bvn: '22345678901',
        fieldMatches: { firstname: true, lastname: true, dob: true, gender: true, phoneNumber: true, emailAddress: true },
      });
    });

    it('accepts the documented keys and reports mismatches', async () => {
      const res = await post('/bvn/22345678901/match', {
        ...ADAEZE, gender: 'Male', phoneNumber: '08030000000', emailAddress: 'someone@else.com',
      });
      expect(res.json().data.fieldMatches).toEqual({
        firstname: true, lastname: true, dob: true, gender: false, phoneNumber: false, emailAddress: false,
      });
    });

    it('answers 404 style C for an unknown BVN and 400 for a bad gender', async () => {
      const missing = await post('/bvn/22345678909/match', ADAEZE);
      expect(missing.statusCode).toBe(404);
      expect(missing.json().code).toBe('NOT_FOUND_ERROR');
      const bad = await post('/bvn/22345678901/match', { gender: 'X' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toMatch(/gender/);
    });
  });

  describe('NIN and NIN by phone', () => {
    const BABATUNDE = { firstname: 'Babatunde', lastname: 'Adeyemi', dob: '02/11/1985' };

    it('answers 201 with the NIN record', async () => {
      const res = await post('/nin/70412358961', BABATUNDE);
      expect(res.statusCode).toBe(201);
      const { data } = res.json();
      expect(data).toMatchObject({ nin: '70412358961', firstname: 'Babatunde', lastname: 'Adeyemi', phone: '08051234567' });
      expect(data.fieldMatches).toEqual({ firstname: true, lastname: true, dob: true });
      expect(data.photo.length).toBeGreaterThan(100);
    });

    it('answers 200 by phone, in local or international form', async () => {
      for (const phone of ['08051234567', '+2348051234567', '2348051234567']) {
        const res = await post(`/nin_phone/${encodeURIComponent(phone)}`, BABATUNDE);
        expect(res.statusCode, phone).toBe(200);
        expect(res.json().data.nin).toBe('70412358961');
      }
    });

    it('answers 404 style C for an unknown NIN or phone, and 400 for malformed ones', async () => {
      expect((await post('/nin/70412358962')).json()).toMatchObject({ code: 'NOT_FOUND_ERROR' });
      expect((await post('/nin_phone/08059999999')).json()).toMatchObject({ code: 'NOT_FOUND_ERROR' });
      expect((await post('/nin/123')).statusCode).toBe(400);
      expect((await post('/nin_phone/12')).statusCode).toBe(400);
    });
  });

  describe('virtual NIN, drivers license, voters card', () => {
    it('answers the vNIN record with 201, case-insensitively', async () => {
      const res = await post('/virtual-nin/tv738291046518qk', { firstname: 'Ngozi', lastname: 'Eze', dob: '21-07-1993' });
      expect(res.statusCode).toBe(201);
      const { data } = res.json();
      expect(data).toMatchObject({ id: 1001, vNin: 'TV738291046518QK', firstname: 'Ngozi', lastname: 'Eze', gender: 'F' });
      expect(data.photo).toMatch(/^data:image\/jpeg;base64,/);
      expect(data.fieldMatches).toEqual({ firstname: true, lastname: true, dob: true });
      expect((await post('/virtual-nin/TV738291046518QQ')).json()).toMatchObject({ code: 'NOT_FOUND_ERROR' });
      expect((await post('/virtual-nin/short')).statusCode).toBe(400);
    });

    it('answers the drivers license record with 201 and accepts a phone key', async () => {
      const res = await post('/drivers_license/KJA83927AA02', { firstname: 'Ibrahim', lastname: 'Bello', dob: '09-05-1988', phone: '0803' });
      expect(res.statusCode).toBe(201);
      const { data } = res.json();
      expect(data).toMatchObject({ licenseNo: 'KJA83927AA02', stateOfIssue: 'Kaduna', issuedDate: '15-01-2021' });
      expect(data.fieldMatches).toEqual({ firstname: true, lastname: true, dob: true });
      const missing = await post('/drivers_license/KJA83927AA03');
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ code: 'NOT_FOUND_ERROR', message: expect.stringMatching(/license/) });
    });

    it('answers the voters card record with 201 and a style B 404', async () => {
      const res = await post('/vin/90F5B1234C567890123', { firstname: 'Chinedu', lastname: 'Nwosu', dob: '1979-08-30' });
      expect(res.statusCode).toBe(201);
      expect(Object.keys(res.json().data).sort()).toEqual(
        ['fullname', 'vin', 'gender', 'occupation', 'pollingUnitCode', 'firstName', 'lastName'].sort(),
      );
      const missing = await post('/vin/90F5B1234C567890124');
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ statusCode: 404, error: 'Not Found', message: expect.stringMatching(/[Vv]oters/) , requestId: expect.stringMatching(/^req_/) });
    });
  });

  describe('corporate registry', () => {
    it('answers 200 with the company record for every spelling of the RC number', async () => {
      for (const rcNumber of ['1284395', 'RC1284395', 'RC 1284395', 1284395]) {
        const res = await post('/cac', { type: 'limited_company', rcNumber });
        expect(res.statusCode, String(rcNumber)).toBe(200);
        expect(res.json().data).toMatchObject({ rcNumber: '1284395', companyName: 'Kolanut Technologies Limited', status: 'ACTIVE' });
        expect(typeof res.json().data.affiliates).toBe('number');
      }
    });

    it('answers 400 with a class-validator style message array for a bad type', async () => {
      for (const type of ['company', 'incorporated_trustee', undefined]) {
        const res = await post('/cac', { type, rcNumber: '1284395' });
        expect(res.statusCode).toBe(400);
        const body = res.json();
        expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
        expect(body.message).toEqual([
          expect.objectContaining({ property: 'type', value: type ?? null, children: [], constraints: { matches: expect.stringMatching(/type/) } }),
        ]);
        expect(body.message[0]).toHaveProperty('target');
      }
    });

    it('answers 404 style B for a company it does not hold, of another kind or number', async () => {
      for (const body of [{ type: 'business', rcNumber: '1284395' }, { type: 'limited_company', rcNumber: '999' }]) {
        const res = await post('/cac', body);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ statusCode: 404, error: 'Not Found', message: expect.stringMatching(/CAC/) });
      }
    });
  });

  describe('TIN', () => {
    const get = (ref: string) => t.app.inject({ method: 'GET', url: `${ID}/tin/${ref}`, headers: bearer(secret) });

    it('answers 200 with the tax record', async () => {
      const res = await get('23456789-0001');
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({ tin: '23456789-0001', taxpayerName: 'KOLANUT TECHNOLOGIES LIMITED' });
    });

    it('answers 400 with a string message for a malformed TIN and 404 style B for an unknown one', async () => {
      for (const ref of ['2345678-0001', '23456789-01', '234567890001']) {
        const res = await get(ref);
        expect(res.statusCode, ref).toBe(400);
        expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/XXXXXXXX-XXXX/) });
      }
      const missing = await get('23456789-0002');
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ statusCode: 404, error: 'Not Found', message: expect.stringMatching(/TIN/) });
    });
  });

  describe('risk levels', () => {
    it('requires nothing at NONE, the last name at LOW, both names at MEDIUM, and the dob at HIGH', async () => {
      const cases = [
        { riskLevel: 'LOW', missing: ['lastname'], ok: { lastname: 'Okonkwo' } },
        { riskLevel: 'MEDIUM', missing: ['lastname', 'firstname'], ok: { lastname: 'Okonkwo', firstname: 'Adaeze' } },
        { riskLevel: 'HIGH', missing: ['firstname', 'lastname', 'dob'], ok: ADAEZE },
      ] as const;
      for (const { riskLevel, missing, ok } of cases) {
        const org = await t.org({ riskLevel });
        const res = await post('/bvn/22345678901', {}, org.testSecret);
        expect(res.statusCode, riskLevel).toBe(400);
        expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
        for (const field of missing) expect(res.json().message).toContain(field);
        expect(res.json().message).toContain(riskLevel);
        expect((await post('/bvn/22345678901', ok, org.testSecret)).statusCode, riskLevel).toBe(200);
      }
    });

    it('applies to every person lookup, and fields not required are still matched', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      for (const url of ['/nin/70412358961', '/nin_phone/08051234567', '/virtual-nin/TV738291046518QK',
        '/drivers_license/KJA83927AA02', '/vin/90F5B1234C567890123', '/bvn/22345678901/match']) {
        expect((await post(url, { firstname: 'X' }, org.testSecret)).statusCode, url).toBe(400);
      }
      const res = await post('/nin/70412358961', { lastname: 'Adeyemi', firstname: 'Wrong' }, org.testSecret);
      expect(res.json().data.fieldMatches).toEqual({ firstname: false, lastname: true, dob: false });
    });
  });

  describe('payload types', () => {
    it('gives HALF accounts the NIN records without phone and photo', async () => {
      const org = await t.org({ payloadType: 'HALF' });
      const nin = (await post('/nin/70412358961', {}, org.testSecret)).json().data;
      expect(nin).not.toHaveProperty('phone');
      expect(nin).not.toHaveProperty('photo');
      expect(nin).toMatchObject({ nin: '70412358961', firstname: 'Babatunde', birthdate: '02-11-1985' });
      const byPhone = (await post('/nin_phone/08051234567', {}, org.testSecret)).json().data;
      expect(byPhone).not.toHaveProperty('photo');
      const vnin = (await post('/virtual-nin/TV738291046518QK', {}, org.testSecret)).json().data;
      expect(vnin).not.toHaveProperty('phone');
      expect(vnin).not.toHaveProperty('photo');
    });

    it('gives FULL accounts every NIN field', async () => {
      const nin = (await post('/nin/70412358961', {})).json().data;
      expect(nin).toHaveProperty('phone');
      expect(nin).toHaveProperty('photo');
    });
  });
});
