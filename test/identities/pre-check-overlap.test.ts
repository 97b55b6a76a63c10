import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdentityType, NinRecord, RecordOf } from '../../src/identities/records.js';
import type { LookupOptions, Registry } from '../../src/identities/registry/registry.js';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { loadTestIdentities } from '../../src/identities/registry/test-identities.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

/**
 * Issue 22: a plain identity lookup reads the installation's own tables beside the wallet
 * pre-check instead of after it. What finding 7 (no existence oracle) needs must still hold: an
 * account that cannot pay gets 402 whatever the number, no call leaves the installation for it,
 * and nothing is done with a record read for it.
 */
class RecordingRegistry implements Registry {
  /** Numbers read from the installation's own tables. */
  readonly localReads: string[] = [];
  /** Numbers sent to the "provider" (after `beforeUpstream` let them through). */
  readonly upstreamCalls: string[] = [];
  /** Numbers at or above this are "held by a provider": asking for them leaves the installation. */
  constructor(private readonly upstreamFrom: string) {}

  async find<T extends IdentityType>(type: T, key: string, options?: LookupOptions): Promise<RecordOf[T] | undefined> {
    const held = (await loadTestIdentities())[type];
    if (key >= this.upstreamFrom) {
      await options?.beforeUpstream?.();
      this.upstreamCalls.push(key);
      return held;
    }
    this.localReads.push(key);
    return key.endsWith('1') ? held : undefined;
  }

  async findNinByPhone(): Promise<NinRecord | undefined> {
    return undefined;
  }
}

describe('identity lookups: the registry read beside the wallet pre-check', () => {
  let t: TestContext;
  const registry = new RecordingRegistry('3');
  beforeAll(async () => {
    t = await buildTestContext({ liveRegistry: registry });
  });
  afterAll(() => t.close());

  const bvn = (secret: string, number: string) =>
    t.app.inject({ method: 'POST', url: `/v1/verifications/identities/bvn/${number}`, headers: bearer(secret), payload: {} });

  it('answers 402 alike for a known and an unknown number on the local registry, and records both uncharged', async () => {
    const broke = await t.org({ fund: 0 });
    const known = await bvn(broke.liveSecret, '22222222221');
    const unknown = await bvn(broke.liveSecret, '22222222220');
    expect(known.statusCode, known.body).toBe(402);
    expect(unknown.statusCode, unknown.body).toBe(402);
    expect(known.json()).toEqual(unknown.json());
    const rows = await t.database.db.selectFrom('usage_events').select(['outcome', 'price']).where('org_id', '=', broke.id).execute();
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ outcome: 'insufficient_funds', price: 0 });
  });

  it('sends nothing to a provider for an account that cannot pay, and does for one that can', async () => {
    const broke = await t.org({ fund: 0 });
    const res = await bvn(broke.liveSecret, '33333333331');
    expect(res.statusCode, res.body).toBe(402);
    expect(registry.upstreamCalls).toEqual([]);

    const funded = await t.org({ fund: 1_000_000 });
    const paid = await bvn(funded.liveSecret, '33333333331');
    expect(paid.statusCode, paid.body).toBe(200);
    expect(registry.upstreamCalls).toEqual(['33333333331']);
  });

  it('still answers the funded account from the local read, charged once', async () => {
    const funded = await t.org({ fund: 1_000_000 });
    const found = await bvn(funded.liveSecret, '22222222221');
    expect(found.statusCode, found.body).toBe(200);
    const missing = await bvn(funded.liveSecret, '22222222220');
    expect(missing.statusCode, missing.body).toBe(404);
    const rows = await t.database.db.selectFrom('usage_events').select(['outcome']).where('org_id', '=', funded.id).orderBy('id').execute();
    expect(rows.map((row) => row.outcome)).toEqual(['success', 'not_found']);
    expect((await t.accounts.get(funded.id)).balance).toBe(1_000_000 - IDENTITY_BILLABLES.bvn_basic.defaultPrice);
  });

  it('does not start a face match (which reads the registry and compares photos) before the pre-check passed', async () => {
    const broke = await t.org({ fund: 0 });
    const before = registry.localReads.length + registry.upstreamCalls.length;
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/verifications/identities/biometrics',
      headers: bearer(broke.liveSecret),
      payload: { idType: 'nin', idNumber: '22222222221', photo: Buffer.from('not read').toString('base64') },
    });
    expect(res.statusCode, res.body).toBe(402);
    expect(registry.localReads.length + registry.upstreamCalls.length).toBe(before);
  });
});
