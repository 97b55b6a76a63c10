import { isValidPhoneNumber } from 'libphonenumber-js/max';
import sharp from 'sharp';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { IDENTITY_TYPES, RECORD_SCHEMAS, registryKey } from '../../src/identities/records.js';
import { portraitDataUrl, portraitJpegBase64 } from '../../src/identities/registry/photos.js';
import { loadTestIdentities, TEST_IDENTITY_KEYS } from '../../src/identities/registry/test-identities.js';

function isRealDate(dmy: string): boolean {
  const [day, month, year] = dmy.split('-').map(Number);
  if (day === undefined || month === undefined || year === undefined) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

describe('test identities', () => {
  it('validate against the registry record schema of their type', async () => {
    const identities = await loadTestIdentities();
    for (const type of IDENTITY_TYPES) {
      expect(Value.Errors(RECORD_SCHEMAS[type], identities[type]), type).toEqual([]);
    }
  });

  it('are keyed by the numbers the team relies on', async () => {
    expect(TEST_IDENTITY_KEYS).toEqual({
      bvn: '22345678901',
      nin: '70412358961',
      vnin: 'TV738291046518QK',
      drivers_license: 'KJA83927AA02',
      vin: '90F5B1234C567890123',
      cac: 'limited_company:1284395',
      tin: '23456789-0001',
    });
    const identities = await loadTestIdentities();
    for (const type of IDENTITY_TYPES) expect(registryKey(type, identities[type])).toBe(TEST_IDENTITY_KEYS[type]);
  });

  it('hold the documented names and dates of birth', async () => {
    const { bvn, nin, vnin, drivers_license, vin, cac, tin } = await loadTestIdentities();
    expect(bvn).toMatchObject({ firstname: 'Adaeze', middlename: 'Chiamaka', lastname: 'Okonkwo', birthdate: '14-03-1990', email: 'adaeze.okonkwo@example.com', nameOnCard: 'ADAEZE C OKONKWO' });
    expect(nin).toMatchObject({ firstname: 'Babatunde', lastname: 'Adeyemi', birthdate: '02-11-1985', phone: '08051234567' });
    expect(vnin).toMatchObject({ id: 1001, firstname: 'Ngozi', lastname: 'Eze', birthdate: '21-07-1993', gender: 'F' });
    expect(drivers_license).toMatchObject({ firstname: 'Ibrahim', lastname: 'Bello', birthdate: '09-05-1988', stateOfIssue: 'Kaduna' });
    expect(vin).toMatchObject({ firstName: 'Chinedu', lastName: 'Nwosu', fullname: 'CHINEDU NWOSU' });
    expect(cac).toMatchObject({ companyName: 'Kolanut Technologies Limited', status: 'ACTIVE' });
    expect(tin).toMatchObject({ taxpayerName: 'KOLANUT TECHNOLOGIES LIMITED', cacRegNo: 'RC12****5', jittin: '' });
  });

  it('have valid Nigerian mobile numbers and real dates', async () => {
    const { bvn, nin, vnin, drivers_license, vin } = await loadTestIdentities();
    for (const phone of [bvn.phone, nin.phone, vnin.phone]) expect(isValidPhoneNumber(phone ?? '', 'NG'), phone).toBe(true);
    const dates = [bvn.birthdate, nin.birthdate, vnin.birthdate, drivers_license.birthdate, drivers_license.issuedDate, drivers_license.expiryDate, vin.birthdate ?? ''];
    for (const date of dates) expect(isRealDate(date), date).toBe(true);
    expect(drivers_license.expiryDate.split('-').reverse().join('') > '20261122').toBe(true);
  });

  it('carry JPEG portraits: base64 where the spec says base64, a data URL for vNIN', async () => {
    const { bvn, nin, vnin, drivers_license } = await loadTestIdentities();
    for (const photo of [bvn.photo, nin.photo, drivers_license.photo]) {
      const metadata = await sharp(Buffer.from(photo ?? '', 'base64')).metadata();
      expect(metadata).toMatchObject({ format: 'jpeg', width: 160, height: 200 });
    }
    expect(vnin.photo).toMatch(/^data:image\/jpeg;base64,[A-Za-z0-9+/]+=*$/);
  });

  it('are built once and cannot be changed by a caller', async () => {
    const first = await loadTestIdentities();
    expect(await loadTestIdentities()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.bvn)).toBe(true);
  });
});

describe('placeholder portraits', () => {
  it('are byte-identical for one seed and differ between seeds', async () => {
    const a = await portraitJpegBase64('22345678901', 'AO');
    expect(await portraitJpegBase64('22345678901', 'AO')).toBe(a);
    expect(await portraitJpegBase64('70412358961', 'AO')).not.toBe(a);
    expect(await portraitDataUrl('22345678901', 'AO')).toBe(`data:image/jpeg;base64,${a}`);
  });

  it('are small and accept any initials', async () => {
    const photo = await portraitJpegBase64('seed', '<&">');
    expect(Buffer.from(photo, 'base64').length).toBeLessThan(10_000);
  });
});
