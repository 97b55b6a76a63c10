import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressVerification, onAddressFinished, type AddressFinishedEvent } from '../../src/addresses/service.js';
import { ApiError } from '../../src/platform/errors.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { balanceOf, client, deliveriesOf, expectStyleA, IN_PROGRESS, VERIFIED } from '../agents/fixtures.js';

/** The contract other modules (guarantors) use: create inside their transaction, learn when it finishes. */
describe('address service for other modules', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    t = await buildTestContext();
    http = client(t.app);
  });
  afterAll(() => t.close());

  const input = {
    street: '5 Ring Road',
    lga: 'ibadan north',
    state: 'oyo',
    applicant: { firstname: 'Bola', lastname: 'Ade', idType: 'FRSC', idNumber: 'abc-123-456', phone: '08051234567' },
  };

  it('creates inside the caller transaction, uncharged, with FRSC accepted, and rolls back with it', async () => {
    const org = await t.org({ riskLevel: 'NONE', fund: 1_000 });
    const scope = { orgId: org.id, mode: 'live' as const };
    const record = await t.database.db.transaction().execute((trx) =>
      createAddressVerification(trx, scope, input, { chargeable: false, parent: { kind: 'guarantor', id: 'g-1' }, idTypes: 'internal' }),
    );
    expect(record).toMatchObject({ status: IN_PROGRESS, lga: 'Ibadan North', state: 'Oyo', reference: expect.stringMatching(/^adr_/) });
    expect(record.applicant).toMatchObject({ idType: 'FRSC', idNumber: 'ABC123456', phone: '+2348051234567' });
    expect(await balanceOf(t.database.db, org.id)).toBe(1_000);
    expect((await http.get(`/v1/verifications/addresses/${record.id}`, org.liveSecret)).json().data).toEqual(record);

    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await createAddressVerification(trx, scope, { ...input, reference: 'rolled-back' }, { chargeable: false, idTypes: 'internal' });
        throw new Error('the guarantor failed');
      }),
    ).rejects.toThrow('the guarantor failed');
    expect((await http.get('/v1/verifications/addresses', org.liveSecret)).json()._pagination.total).toBe(1);
  });

  it('throws a 400 ApiError for bad input, and refuses FRSC unless asked for internal id types', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const scope = { orgId: org.id, mode: 'test' as const };
    const attempt = (options: Parameters<typeof createAddressVerification>[3], body: object = input) =>
      t.database.db.transaction().execute((trx) => createAddressVerification(trx, scope, body, options));
    await expect(attempt({ chargeable: false })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/idType must be one of BVN, NIN, KYC$/) });
    const error = await attempt({ chargeable: false, idTypes: 'internal' }, { ...input, state: 'Lagos' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toMatch(/not a local government area of Lagos/);
  });

  it('tells listeners when a verification finishes, inside the transition, with the parent', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const scope = { orgId: org.id, mode: 'test' as const };
    const seen: AddressFinishedEvent[] = [];
    const off = onAddressFinished(async (trx, event) => {
      // The row is already updated in this transaction.
      const row = await trx.selectFrom('address_verifications').select('status').where('id', '=', event.id).executeTakeFirstOrThrow();
      expect(row.status).toBe(event.status);
      seen.push(event);
    });
    try {
      const record = await t.database.db.transaction().execute((trx) =>
        createAddressVerification(trx, scope, input, { chargeable: false, parent: { kind: 'guarantor', id: 'g-2' }, idTypes: 'internal' }),
      );
      await http.post(`/v1/test-helpers/addresses/${record.id}/complete`, org.testSecret, { outcome: 'verified' });
      const plain = (await http.post('/v1/verifications/addresses', org.testSecret, { ...input, applicant: { firstname: 'A', lastname: 'B' } })).json().data;
      await http.del(`/v1/verifications/addresses/${plain.id}`, org.testSecret);
      expect(seen.map((e) => [e.id, e.status, e.parent])).toEqual([
        [record.id, 'verified', { kind: 'guarantor', id: 'g-2' }],
        [plain.id, 'cancelled', null],
      ]);
      expect(seen[0]!.record.status).toEqual(VERIFIED);
      expect(seen[0]!.scope).toEqual(scope);
    } finally {
      off();
    }
  });

  it('rolls the transition back (row and webhook) when a listener throws', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const created = (await http.post('/v1/verifications/addresses', org.testSecret, { ...input, applicant: { firstname: 'A', lastname: 'B' } })).json().data;
    const off = onAddressFinished(async () => {
      throw new Error('listener broke');
    });
    try {
      expectStyleA(await http.post(`/v1/test-helpers/addresses/${created.id}/complete`, org.testSecret, { outcome: 'verified' }), 500, 'INTERNAL_SERVER_ERROR');
    } finally {
      off();
    }
    expect((await http.get(`/v1/verifications/addresses/${created.id}`, org.testSecret)).json().data.status).toEqual(IN_PROGRESS);
    expect(await deliveriesOf(t.database.db, org.id)).toEqual([]);
  });

  it('lets the marketplace find an FRSC-verified address', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const scope = { orgId: org.id, mode: 'test' as const };
    const record = await t.database.db.transaction().execute((trx) =>
      createAddressVerification(trx, scope, input, { chargeable: false, idTypes: 'internal' }),
    );
    await http.post(`/v1/test-helpers/addresses/${record.id}/complete`, org.testSecret, { outcome: 'verified' });
    const found = await http.post('/v1/verifications/addresses/marketplace', org.testSecret, {
      maxAddressAge: '1M', firstname: 'bola', lastname: 'ADE', idType: 'FRSC', idNumber: 'ABC123456',
    });
    expect(found.statusCode).toBe(200);
    expect(found.json().data).toMatchObject({ id: record.id, applicant: { idType: 'FRSC', idNumber: 'ABC123456', phone: '' } });
  });
});
