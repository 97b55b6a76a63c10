import { parsePhoneNumber } from 'libphonenumber-js/max';
import lgaRows from 'ng-states/seed.json' with { type: 'json' };
import { Value } from 'typebox/value';
import { beforeAll, describe, expect, it } from 'vitest';
import { CAC_TYPES, IDENTITY_TYPES, RECORD_SCHEMAS, registryKey, type IdentityType, type RecordOf } from '../../src/identities/records.js';
import { demoExamples, generateDemoRegistry, type DemoRecord } from '../../src/identities/registry/demo.js';
import { TEST_IDENTITY_KEYS } from '../../src/identities/registry/test-identities.js';

let records: DemoRecord[];
let elapsedMs: number;

beforeAll(async () => {
  const started = performance.now();
  records = await generateDemoRegistry();
  elapsedMs = performance.now() - started;
});

function ofType<T extends IdentityType>(type: T): Array<RecordOf[T]> {
  return records.filter((entry) => entry.type === type).map((entry) => entry.record as RecordOf[T]);
}

function parseDmy(dmy: string): Date | undefined {
  const [day, month, year] = dmy.split('-').map(Number);
  if (day === undefined || month === undefined || year === undefined) return undefined;
  const date = new Date(Date.UTC(year, month - 1, day));
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return real ? date : undefined;
}

/** ng-states spells LGAs loosely ("Eti-osa", "Onitsha -south", "Isu (umundugba)"); compare letters only. */
const loose = (name: string) => name.replace(/\(.*?\)/g, '').replace(/[^a-z]/gi, '').toLowerCase();
const knownLgas = new Set(lgaRows.map((row) => `${row.STATE === 'Fct' ? 'FCT' : row.STATE}|${loose(row.LGA)}`));
const isLgaOf = (state: string, lga: string) => knownLgas.has(`${state}|${loose(lga === 'Abuja Municipal' ? 'Municipal' : lga)}`);

describe('demo registry', () => {
  it('has 50 records of every type by default, made well under 3 s', () => {
    expect(records).toHaveLength(50 * IDENTITY_TYPES.length);
    for (const type of IDENTITY_TYPES) expect(ofType(type), type).toHaveLength(50);
    expect(elapsedMs).toBeLessThan(3000);
  });

  it('validates every record against its type schema', () => {
    for (const { type, record } of records) expect(Value.Errors(RECORD_SCHEMAS[type], record), `${type} ${registryKey(type, record)}`).toEqual([]);
  });

  it('has unique keys that never collide with a test identity', () => {
    for (const type of IDENTITY_TYPES) {
      const keys = ofType(type).map((record) => registryKey(type, record));
      expect(new Set(keys).size, type).toBe(keys.length);
      expect(keys, type).not.toContain(TEST_IDENTITY_KEYS[type]);
    }
  });

  it('is deterministic: same options, deep-equal records and byte-identical photos', async () => {
    expect(await generateDemoRegistry()).toEqual(records);
    const small = await generateDemoRegistry({ perType: 3, seed: 7 });
    expect(small).toHaveLength(3 * IDENTITY_TYPES.length);
    expect(await generateDemoRegistry({ perType: 3, seed: 7 })).toEqual(small);
    expect(small.slice(0, 3)).not.toEqual(records.slice(0, 3));
  });

  it('uses Nigerian number formats', () => {
    for (const { bvn } of ofType('bvn')) expect(bvn).toMatch(/^22\d{9}$/);
    for (const { nin } of ofType('nin')) expect(nin).toMatch(/^\d{11}$/);
    for (const { vNin } of ofType('vnin')) expect(vNin).toMatch(/^[A-Z]{2}\d{12}[A-Z]{2}$/);
    for (const { licenseNo } of ofType('drivers_license')) expect(licenseNo).toMatch(/^[A-Z]{3}\d{5}[A-Z]{2}\d{2}$/);
    for (const { vin, pollingUnitCode } of ofType('vin')) {
      expect(vin).toMatch(/^[A-Z0-9]{19}$/);
      expect(pollingUnitCode).toMatch(/^\d{2}\/\d{2}\/\d{2}\/\d{3}$/);
    }
    for (const { tin, cacRegNo, phone } of ofType('tin')) {
      expect(tin).toMatch(/^\d{8}-\d{4}$/);
      expect(cacRegNo).toMatch(/^(RC|BN|IT)\d{2}\*+\d$/);
      expect(phone).toMatch(/^0\d{3}\*{4}\d{3}$/);
    }
  });

  it('gives people valid Nigerian mobile numbers, and NIN phones are unique', () => {
    const phones = [...ofType('bvn'), ...ofType('nin'), ...ofType('vnin')].map((record) => record.phone ?? '');
    for (const phone of phones) {
      const parsed = parsePhoneNumber(phone, 'NG');
      expect(parsed.isValid() && parsed.getType() === 'MOBILE', phone).toBe(true);
    }
    const ninPhones = ofType('nin').map((record) => record.phone);
    expect(new Set(ninPhones).size).toBe(ninPhones.length);
  });

  it('has real dates: births 1960-2004, licenses issued after 18 and not yet expired in 2026', () => {
    for (const record of [...ofType('bvn'), ...ofType('nin'), ...ofType('vnin'), ...ofType('drivers_license'), ...ofType('vin')]) {
      const birth = parseDmy(record.birthdate ?? '');
      expect(birth, record.birthdate).toBeDefined();
      expect(birth?.getUTCFullYear()).toBeGreaterThanOrEqual(1960);
      expect(birth?.getUTCFullYear()).toBeLessThanOrEqual(2004);
    }
    for (const license of ofType('drivers_license')) {
      const [birth, issued, expiry] = [license.birthdate, license.issuedDate, license.expiryDate].map(parseDmy);
      expect(issued && expiry && birth, license.licenseNo).toBeTruthy();
      expect(issued!.getUTCFullYear() - birth!.getUTCFullYear()).toBeGreaterThanOrEqual(18);
      expect(expiry!.getTime()).toBeGreaterThan(Date.UTC(2026, 10, 30));
    }
    for (const { registrationDate } of ofType('cac')) {
      expect(registrationDate).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\.000\+00:00$/);
      expect(Number.isNaN(Date.parse(registrationDate ?? ''))).toBe(false);
    }
  });

  it('places people and companies in real states and LGAs', () => {
    for (const record of ofType('bvn')) {
      const state = record.residentialAddress?.split(', ').at(-1) ?? '';
      expect(isLgaOf(state, record.lgaOfResidence ?? ''), record.residentialAddress).toBe(true);
      expect(isLgaOf(record.stateOfOrigin ?? '', record.lgaOfOrigin ?? ''), `${record.lgaOfOrigin}, ${record.stateOfOrigin}`).toBe(true);
    }
    for (const record of ofType('cac')) expect(isLgaOf(record.state ?? '', record.lga ?? ''), `${record.lga}, ${record.state}`).toBe(true);
    const states = new Set([...knownLgas].map((key) => key.split('|')[0]));
    for (const record of ofType('drivers_license')) expect(states, record.stateOfIssue).toContain(record.stateOfIssue);
  });

  it('covers every CAC type with its company type and classification', () => {
    const cac = ofType('cac');
    expect(new Set(cac.map((record) => record.type))).toEqual(new Set(CAC_TYPES));
    const styles = new Set(cac.map((record) => `${record.type} ${record.companyType} ${record.classification}`));
    expect(styles).toEqual(
      new Set([
        'limited_company PRIVATE_COMPANY_LIMITED_BY_SHARES Company',
        'business BUSINESS_NAME Business',
        'incorprated_trustee INCORPORATED_TRUSTEES Trustee',
      ]),
    );
  });

  it('gives portraits to BVN, NIN and license records (base64) and vNIN records (data URL)', () => {
    for (const record of [...ofType('bvn'), ...ofType('nin'), ...ofType('drivers_license')]) {
      expect(Buffer.from(record.photo ?? '', 'base64').subarray(0, 3).toString('hex')).toBe('ffd8ff');
    }
    for (const record of ofType('vnin')) expect(record.photo).toMatch(/^data:image\/jpeg;base64,\/9j\//);
  });

  it('offers the first record of each type as the README example', () => {
    const examples = demoExamples(records);
    for (const type of IDENTITY_TYPES) expect(examples[type], type).toBe(ofType(type)[0]);
  });
});
