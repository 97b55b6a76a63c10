import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { EmbeddedRegistry } from '../../src/identities/registry/embedded.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { UpstreamRouter } from '../../src/identities/upstreams/router.js';
import { addSource, removeSource, setCacheTtl } from '../../src/identities/upstreams/store.js';
import { setPrice } from '../../src/platform/billing.js';
import { bearer, buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { TEST_ENCRYPTION_KEY } from '../helpers/database.js';
import { sansRequestId } from '../helpers/app.js';

/**
 * A live lookup that starts with its registry read, when the embedded registry is the type's one
 * source, checks the wallet in that read's statement (EmbeddedRegistry.findIfCovered): the
 * guarantees of the separate check must hold all the same. A wallet that cannot pay gets one
 * answer whatever the number, reads no record and is recorded alike; the balance read is the
 * statement's own (no older than the request); price overrides count.
 */

const ID = '/v1/verifications/identities';
const KNOWN = { bvn: '22333444555', firstname: 'Ifeoma', lastname: 'Nwosu', gender: 'Female', phone: '08031234567', birthdate: '02-02-1992' };
const UNKNOWN = '22999888777';
const BASIC = IDENTITY_BILLABLES.bvn_basic;

let t: TestContext;
const lookup = (secret: string, bvn: string) => t.app.inject({ method: 'POST', url: `${ID}/bvn/${bvn}`, headers: bearer(secret), payload: {} });
const balanceOf = async (orgId: string) => (await t.accounts.get(orgId)).balance;
const usageOf = (orgId: string) =>
  t.database.db.selectFrom('usage_events').select(['type', 'subject', 'outcome', 'price', 'ledger_entry_id', 'source']).where('org_id', '=', orgId).orderBy('id').execute();

beforeAll(async () => {
  t = await buildTestContext();
  const imported = await importRegistry(t.database.db, Readable.from([JSON.stringify({ type: 'bvn', record: KNOWN })]));
  expect(imported.imported).toBe(1);
});
afterAll(() => t.close());

describe('through the API', () => {
  it('answers 402 alike for a known and an unknown number when the wallet is short, and records both refusals the same way', async () => {
    const broke = await t.org({ fund: BASIC.defaultPrice - 1 });
    const known = await lookup(broke.liveSecret, KNOWN.bvn);
    const unknown = await lookup(broke.liveSecret, UNKNOWN);
    expect(known.statusCode, known.body).toBe(402);
    expect(unknown.statusCode).toBe(402);
    expect(sansRequestId(known.json())).toEqual(sansRequestId(unknown.json()));
    expect(known.body.length).toBe(unknown.body.length);
    expect(await balanceOf(broke.id)).toBe(BASIC.defaultPrice - 1);
    const usage = await usageOf(broke.id);
    expect(usage.map(({ subject: _subject, ...row }) => row)).toEqual([
      { type: 'bvn_basic', outcome: 'insufficient_funds', price: 0, ledger_entry_id: null, source: null },
      { type: 'bvn_basic', outcome: 'insufficient_funds', price: 0, ledger_entry_id: null, source: null },
    ]);
  });

  it('reads and charges when the balance covers the price exactly; not found is recorded from the embedded registry, uncharged', async () => {
    const org = await t.org({ fund: BASIC.defaultPrice });
    const missing = await lookup(org.liveSecret, UNKNOWN);
    expect(missing.statusCode).toBe(404);
    const found = await lookup(org.liveSecret, KNOWN.bvn);
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json().data).toMatchObject({ bvn: KNOWN.bvn, firstname: KNOWN.firstname });
    expect(await balanceOf(org.id)).toBe(0);
    expect((await usageOf(org.id)).map((row) => [row.outcome, row.price, row.source])).toEqual([
      ['not_found', 0, 'embedded'],
      ['success', BASIC.defaultPrice, 'embedded'],
    ]);
    // The wallet is now empty: the next lookup is refused before anything is read.
    expect((await lookup(org.liveSecret, KNOWN.bvn)).statusCode).toBe(402);
  });

  it('checks the balance against a price set for the type, not the default', async () => {
    const org = await t.org({ fund: BASIC.defaultPrice });
    await setPrice(t.database.db, 'bvn_basic', BASIC.defaultPrice + 1);
    try {
      expect((await lookup(org.liveSecret, KNOWN.bvn)).statusCode).toBe(402);
      await setPrice(t.database.db, 'bvn_basic', BASIC.defaultPrice - 100);
      expect((await lookup(org.liveSecret, KNOWN.bvn)).statusCode).toBe(200);
      expect(await balanceOf(org.id)).toBe(100);
    } finally {
      await setPrice(t.database.db, 'bvn_basic', BASIC.defaultPrice);
    }
  });

  it('answers lookups in flight together, known and unknown numbers of two organizations, each from its own wallet', async () => {
    const rich = await t.org({ fund: BASIC.defaultPrice * 20 });
    const broke = await t.org({ fund: 0 });
    const calls = Array.from({ length: 24 }, (_, i) => ({ org: i % 3 === 2 ? broke : rich, bvn: i % 2 === 0 ? KNOWN.bvn : UNKNOWN }));
    const codes = (await Promise.all(calls.map((call) => lookup(call.org.liveSecret, call.bvn)))).map((res) => res.statusCode);
    calls.forEach((call, i) => expect(codes[i], `${call.org === broke ? 'broke' : 'rich'} ${call.bvn}`).toBe(call.org === broke ? 402 : call.bvn === KNOWN.bvn ? 200 : 404));
    const charged = calls.filter((call) => call.org === rich && call.bvn === KNOWN.bvn).length;
    expect(await balanceOf(rich.id)).toBe(BASIC.defaultPrice * (20 - charged));
    expect(await balanceOf(broke.id)).toBe(0);
  });
});

describe('EmbeddedRegistry.findIfCovered', () => {
  it('gives each read of a batch its own record, and no record at all when the balance does not cover', async () => {
    const registry = new EmbeddedRegistry(t.database.db);
    const rich = await t.org({ fund: BASIC.defaultPrice });
    const broke = await t.org({ fund: BASIC.defaultPrice - 1 });
    const cover = (orgId: string) => ({ orgId, billable: BASIC });
    const answers = await Promise.all([
      registry.findIfCovered('bvn', KNOWN.bvn, cover(rich.id)),
      registry.findIfCovered('bvn', UNKNOWN, cover(rich.id)),
      registry.findIfCovered('bvn', KNOWN.bvn, cover(rich.id)),
      registry.findIfCovered('bvn', KNOWN.bvn, cover(broke.id)),
      registry.findIfCovered('bvn', UNKNOWN, cover(broke.id)),
      registry.findIfCovered('bvn', KNOWN.bvn, cover(randomUUID())),
    ]);
    expect(answers).toEqual([
      { covered: true, record: KNOWN },
      { covered: true, record: undefined },
      { covered: true, record: KNOWN },
      { covered: false },
      { covered: false },
      { covered: false },
    ]);
  });
});

describe('UpstreamRouter.findIfCovered', () => {
  it('carries the wallet check only while the embedded registry is the type\'s one source and no answers are cached for it', async () => {
    const db = t.database.db;
    const router = await UpstreamRouter.start({ db, config: testConfig(), log: t.app.log, embedded: new EmbeddedRegistry(db), settings: { reloadIntervalMs: 60_000 } });
    try {
      const org = await t.org({ fund: BASIC.defaultPrice });
      const cover = { orgId: org.id, billable: BASIC };
      const sources: string[] = [];
      await expect(router.findIfCovered('bvn', KNOWN.bvn, cover, { onAnswer: (source) => sources.push(source) })).resolves.toEqual({ covered: true, record: KNOWN });
      expect(sources).toEqual(['embedded']);

      // An upstream that serves BVNs is asked before the embedded registry: the wallet is checked alone first.
      await addSource(db, TEST_ENCRYPTION_KEY, { name: 'provider', kind: 'verifyme', url: 'http://127.0.0.1:9', secret: 'sk_live_upstream_secret_never_used', timeoutMs: 1_000 });
      await router.reload();
      expect(router.findIfCovered('bvn', KNOWN.bvn, cover)).toBeUndefined();
      await removeSource(db, 'provider');
      await router.reload();
      expect(router.findIfCovered('bvn', KNOWN.bvn, cover)).toBeDefined();

      // A type with a cache: the cache is read before the embedded registry, so the same.
      await setCacheTtl(db, 'bvn', 60);
      await router.reload();
      expect(router.findIfCovered('bvn', KNOWN.bvn, cover)).toBeUndefined();
      await setCacheTtl(db, 'bvn', 0);
      await router.reload();
      expect(router.findIfCovered('bvn', KNOWN.bvn, cover)).toBeDefined();
    } finally {
      await router.close();
    }
  });
});
