import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PageViewer } from '../../src/access-log/service.js';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { openDatabase } from '../../src/platform/db/database.js';
import type { DB } from '../../src/platform/db/schema.js';
import { pageBySequence, type Page, type Scope, type SequencedTable } from '../../src/platform/pagination.js';
import { bearer, buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { planCosts, preparedStatements, Statements } from '../helpers/statements.js';

/**
 * `pageBySequence` with a viewer: the pages of one table asked for at the same time are read and
 * logged by one statement (src/platform/pagination.ts). Each caller must get exactly the page it
 * would get alone, and the log exactly its rows, whatever else shared the statement.
 */

interface Listed {
  id: number;
  reference: string;
  applicant: { firstname: string };
  street: string;
}

const ADDRESSES: SequencedTable<Listed> = { table: 'address_verifications', kind: 'address', columns: ['id', 'reference', 'applicant', 'street'] };

let t: TestContext;
let orgs: { id: string; ids: number[] }[];

beforeAll(async () => {
  t = await buildTestContext();
  orgs = [];
  for (const count of [5, 2]) {
    const org = await t.org({ riskLevel: 'LOW' });
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      const created = await t.app.inject({
        method: 'POST',
        url: '/v1/verifications/addresses',
        headers: bearer(org.testSecret),
        payload: { street: `${i + 1} Awolowo Road`, lga: 'Eti-Osa', state: 'Lagos', reference: `page-${i}`, applicant: { firstname: 'Ngozi', lastname: 'Eze', phone: '08031234567' } },
      });
      expect(created.statusCode, created.body).toBe(201);
      ids.push(created.json().data.id as number);
    }
    orgs.push({ id: org.id, ids });
  }
});
afterAll(() => t.close());

const viewer = (actorId: string): PageViewer => ({ actorKind: 'api', actorId, channel: 'api', action: 'list', resource: 'address', ip: '198.51.100.7' });

const logOf = (db: Kysely<DB>, actorId: string) =>
  db.selectFrom('personal_data_access_records').select(['org_id', 'mode', 'resource_id', 'ip']).where('actor_id', '=', actorId).orderBy('id').orderBy('position').execute();

/**
 * Runs `work` while every access-log row fails at its commit: a deferred constraint trigger raises
 * when the row's transaction commits, after the statement that wrote it has read its page.
 */
async function withLogFailingAtCommit(db: Kysely<DB>, work: () => Promise<void>): Promise<void> {
  await sql`create function test_at_commit() returns trigger language plpgsql as $$ begin raise exception 'the access log refused this row at commit'; end $$`.execute(db);
  await sql`create constraint trigger test_at_commit after insert on personal_data_access deferrable initially deferred for each row execute function test_at_commit()`.execute(db);
  try {
    await work();
  } finally {
    await sql`drop trigger test_at_commit on personal_data_access`.execute(db);
    await sql`drop function test_at_commit()`.execute(db);
  }
}

interface Ask {
  scope: Scope;
  page: Page;
  actor: string;
}

describe('logged pages read together', () => {
  it('gives each of the pages asked for at once its own rows, total and log rows, in one statement for those that waited', async () => {
    const [a, b] = orgs as [{ id: string; ids: number[] }, { id: string; ids: number[] }];
    const run = `${Date.now()}`;
    const asks: Ask[] = [
      { scope: { orgId: a.id, mode: 'test' }, page: { limit: 20, offset: 0 }, actor: `a-all-${run}` },
      { scope: { orgId: b.id, mode: 'test' }, page: { limit: 20, offset: 0 }, actor: `b-all-${run}` },
      { scope: { orgId: a.id, mode: 'test' }, page: { limit: 2, offset: 1 }, actor: `a-window-${run}` },
      // No counter in live mode: no rows, total 0, nothing logged.
      { scope: { orgId: a.id, mode: 'live' }, page: { limit: 20, offset: 0 }, actor: `a-live-${run}` },
      // Past the end: the total, no rows, nothing logged.
      { scope: { orgId: b.id, mode: 'test' }, page: { limit: 20, offset: 100 }, actor: `b-past-${run}` },
      { scope: { orgId: a.id, mode: 'test' }, page: { limit: 1, offset: 4 }, actor: `a-last-${run}` },
      { scope: { orgId: b.id, mode: 'test' }, page: { limit: 1, offset: 0 }, actor: `b-newest-${run}` },
      { scope: { orgId: a.id, mode: 'test' }, page: { limit: 100, offset: 0 }, actor: `a-wide-${run}` },
    ];
    const statements = new Statements();
    const db = t.database.db.withPlugin(statements);
    // The first statements are held, so every page asked for after them waits and goes in one.
    statements.hold = true;
    const first = asks.slice(0, 4).map((ask) => pageBySequence(db, ADDRESSES, ask.scope, ask.page, viewer(ask.actor)));
    await statements.untilHeld();
    const rest = asks.slice(4).map((ask) => pageBySequence(db, ADDRESSES, ask.scope, ask.page, viewer(ask.actor)));
    statements.release();
    const answers = await Promise.all([...first, ...rest]);
    // Four statements in flight, then one for the four that waited.
    expect(statements.results).toBe(5);

    for (const [i, ask] of asks.entries()) {
      const alone = await pageBySequence(t.database.db, ADDRESSES, ask.scope, ask.page);
      const ids = answers[i]!.rows.map((row) => Number(row.id));
      expect(answers[i]!.total, ask.actor).toBe(alone.total);
      expect(ids, ask.actor).toEqual(alone.rows.map((row) => Number(row.id)));
      // Each page's rows are its own organization's, decrypted.
      const own = ask.scope.orgId === a.id ? a.ids : b.ids;
      for (const row of answers[i]!.rows) {
        expect(own).toContain(Number(row.id));
        expect(row.street).toMatch(/Awolowo Road$/);
        expect(row.applicant.firstname).toBe('Ngozi');
      }
      expect(await logOf(t.database.db, ask.actor), ask.actor).toEqual(ids.map((id) => ({ org_id: ask.scope.orgId, mode: ask.scope.mode, resource_id: String(id), ip: '198.51.100.7' })));
    }
    const newestFirst = (ids: number[]) => [...ids].reverse();
    expect(answers.map((answer) => answer.rows.map((row) => Number(row.id)))).toEqual([
      newestFirst(a.ids),
      newestFirst(b.ids),
      newestFirst(a.ids).slice(1, 3),
      [],
      [],
      [a.ids[0]],
      [b.ids[1]],
      newestFirst(a.ids),
    ]);
    expect(answers.map((answer) => answer.total)).toEqual([5, 2, 5, 0, 2, 5, 2, 5]);
  });

  it('fails every page of a statement that fails, logging none of them, and the next page is read afresh', async () => {
    const [a] = orgs as [{ id: string; ids: number[] }];
    const run = `${Date.now()}`;
    const statements = new Statements();
    const db = t.database.db.withPlugin(statements);
    statements.hold = true;
    const held = Array.from({ length: 4 }, (_, i) => pageBySequence(db, ADDRESSES, { orgId: a.id, mode: 'test' }, { limit: 20, offset: 0 }, viewer(`held-${i}-${run}`)));
    await statements.untilHeld();
    // A viewer the log refuses (its check constraint) fails the statement that also reads a good page.
    const good = pageBySequence(db, ADDRESSES, { orgId: a.id, mode: 'test' }, { limit: 20, offset: 0 }, viewer(`good-${run}`));
    const bad = pageBySequence(db, ADDRESSES, { orgId: a.id, mode: 'test' }, { limit: 20, offset: 0 }, { ...viewer(`bad-${run}`), channel: 'pigeon' as never });
    // Settled now, before anything waits: their statement may fail while the held pages are still being answered.
    const settled = Promise.allSettled([good, bad]);
    statements.release();
    await Promise.all(held);
    expect((await settled).map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(await logOf(t.database.db, `good-${run}`)).toEqual([]);
    expect(await logOf(t.database.db, `bad-${run}`)).toEqual([]);
    const again = await pageBySequence(db, ADDRESSES, { orgId: a.id, mode: 'test' }, { limit: 20, offset: 0 }, viewer(`again-${run}`));
    expect(again.rows.map((row) => Number(row.id))).toEqual([...a.ids].reverse());
    expect(await logOf(t.database.db, `again-${run}`)).toHaveLength(5);
  });

  it('never shows a page whose access-log row fails at its commit: the list answers an error and logs nothing', async () => {
    const [a] = orgs as [{ id: string; ids: number[] }];
    const org = await t.org({ riskLevel: 'LOW' });
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/verifications/addresses',
      headers: bearer(org.testSecret),
      payload: { street: '9 Commit Close', lga: 'Eti-Osa', state: 'Lagos', reference: 'refused-at-commit', applicant: { firstname: 'Ngozi', lastname: 'Eze', phone: '08031234567' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    await withLogFailingAtCommit(t.database.db, async () => {
      // Both ways a page is read: alone (one statement) and among others (the batch statement).
      const alone = await t.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(org.testSecret) });
      expect(alone.statusCode).toBe(500);
      expect(alone.json()).toMatchObject({ status: 'error', code: 'INTERNAL_SERVER_ERROR' });
      expect(alone.body).not.toContain('Commit Close');
      const together = await Promise.allSettled(Array.from({ length: 8 }, () => pageBySequence(t.database.db, ADDRESSES, { orgId: a.id, mode: 'test' }, { limit: 20, offset: 0 }, viewer('refused-together'))));
      expect(together.map((result) => result.status)).toEqual(Array(8).fill('rejected'));
    });
    expect(await logOf(t.database.db, 'refused-together')).toEqual([]);
    expect(await t.database.db.selectFrom('personal_data_access').select('id').where('org_id', '=', org.id).execute()).toEqual([]);
    const after = await t.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(org.testSecret) });
    expect(after.statusCode).toBe(200);
    expect(after.json().data.map((record: { reference: string }) => record.reference)).toEqual(['refused-at-commit']);
  });

  it.runIf(process.env.DATABASE_URL)('plans a page statement once per connection on PostgreSQL: it runs as a named prepared statement', async () => {
    const [a] = orgs as [{ id: string; ids: number[] }];
    // One connection, so the statement and the check share a session (pg_prepared_statements is per session).
    const single = await openDatabase({ url: t.database.url, poolSize: 1 });
    try {
      await openKeyring(single, testConfig());
      for (let i = 0; i < 3; i++) {
        const listed = await pageBySequence(single.db, ADDRESSES, { orgId: a.id, mode: 'test' }, { limit: 20, offset: 0 }, viewer(`prepared-${i}`));
        expect(listed.rows.map((row) => Number(row.id))).toEqual([...a.ids].reverse());
      }
      const pages = (await preparedStatements(single.db)).filter((row) => row.statement.includes('insert into personal_data_access'));
      expect(pages).toHaveLength(1);
      expect(pages[0]!.name).toMatch(/^vouch_[0-9a-f]{32}$/);
    } finally {
      await single.close();
    }
  });

  it.runIf(process.env.DATABASE_URL)('has PostgreSQL keep one plan per page statement: its plan for given values costs what the plan for any values does', async () => {
    const [a] = orgs as [{ id: string; ids: number[] }];
    const single = await openDatabase({ url: t.database.url, poolSize: 1 });
    try {
      await openKeyring(single, testConfig());
      const scope: Scope = { orgId: a.id, mode: 'test' };
      // Another organization with many rows, and the table's statistics: planned for the values of
      // an organization with five, a page looked cheaper than planned for any organization.
      const bulk = await t.org({ riskLevel: 'LOW' });
      await sql`
        insert into address_verifications overriding system value
        select (jsonb_populate_record(null::address_verifications, to_jsonb(copied) || jsonb_build_object(
          'id', nextval(pg_get_serial_sequence('address_verifications', 'id')), 'org_id', ${bulk.id}::uuid, 'seq', g, 'reference', 'bulk-' || g))).*
        from address_verifications copied, generate_series(1, 2000) g where copied.id = ${a.ids[0]}`.execute(single.db);
      await sql`analyze address_verifications`.execute(single.db);
      // Seven calls each: five planned for their values, then the generic plan, once it costs no more.
      for (let i = 0; i < 7; i++) {
        const logged = await pageBySequence(single.db, ADDRESSES, scope, { limit: 20, offset: 0 }, viewer(`plans-${i}`));
        expect(logged.rows.map((row) => Number(row.id))).toEqual([...a.ids].reverse());
        const unlogged = await pageBySequence(single.db, ADDRESSES, scope, { limit: 2, offset: 1 });
        expect(unlogged.rows.map((row) => Number(row.id))).toEqual([...a.ids].reverse().slice(1, 3));
      }
      // Six pages at once, seven times: four statements of one page each, then the two that waited
      // in one batch statement (four statements in flight, src/platform/pagination.ts).
      for (let i = 0; i < 7; i++) {
        const pages = await Promise.all(Array.from({ length: 6 }, (_, j) => pageBySequence(single.db, ADDRESSES, scope, { limit: 20, offset: 0 }, viewer(`plans-${i}-${j}`))));
        for (const listed of pages) expect(listed.rows.map((row) => Number(row.id))).toEqual([...a.ids].reverse());
      }
      const statements = await preparedStatements(single.db);
      const statementOf = (kind: 'batch' | 'one' | 'unlogged') => {
        const found = statements.filter(
          (row) =>
            row.statement.includes('address_verifications') &&
            row.statement.includes('insert into personal_data_access') === (kind !== 'unlogged') &&
            row.statement.includes('unnest') === (kind === 'batch'),
        );
        expect(found, kind).toHaveLength(1);
        return found[0]!;
      };
      // The values as each statement takes them (src/platform/pagination.ts), for EXPLAIN EXECUTE.
      const values = {
        batch: [`{${a.id},${a.id}}`, '{test,test}', '{0,0}', '{20,20}', '{api,api}', '{plans-x,plans-y}', '{api,api}', '{list,list}', '{address,address}', '{198.51.100.7,198.51.100.7}', 'address'],
        one: [a.id, 'test', 'address', a.id, 'test', '20', '0', '20', a.id, 'test', 'api', 'plans-x', 'api', 'list', 'address', '198.51.100.7'],
        unlogged: [a.id, 'test', 'address', a.id, 'test', '3', '1', '2'],
      };
      // Calls of each: the batch statement 7, the statement of one page 7 + 7 × 4, the unlogged one 7.
      const calls = { batch: 7, one: 35, unlogged: 7 };
      for (const kind of ['batch', 'one', 'unlogged'] as const) {
        const statement = statementOf(kind);
        const { custom, generic } = await planCosts(single.db, statement.name, values[kind]);
        // Planned for its values, a statement looked cheaper than its generic plan, and PostgreSQL planned it again at every call.
        expect(custom, statement.statement).toBe(generic);
        expect(statement.customPlans, kind).toBe(5);
        expect(statement.genericPlans, kind).toBe(calls[kind] - 5);
      }
    } finally {
      await single.close();
    }
  });
});
