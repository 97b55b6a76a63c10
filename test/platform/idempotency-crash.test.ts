import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_FUNDING } from '../../src/demo.js';
import { ADDRESS_BILLABLES } from '../../src/addresses/service.js';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { demoExamples, generateDemoRegistry } from '../../src/identities/registry/demo.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { ADDRESS_BODY } from '../agents/fixtures.js';
import { cliJson, killServers, onPostgres, startServer, throwawayEnv, type CliEnv, type RunningServer, type ThrowawayEnv } from '../helpers/cli.js';

const SLOW = 120_000;
const HELD = /idempotent answer held after its work committed/g;

/**
 * Issue 19, item 7, with real processes: a `vouch serve` whose work with an Idempotency-Key has
 * committed is killed (SIGKILL) before it answers; the client's retry with the same key, on a new
 * process, gets the first record (one record, one charge), never a second one. The test-only
 * VOUCH_TEST_PAUSE_AFTER_COMMIT_MS holds each answer after its commit so the kill lands there.
 */
describe('Idempotency-Key across a process killed between commit and answer', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = { ...throwaway.env, VOUCH_DEMO: 'on' };
  });
  afterAll(async () => {
    killServers();
    await throwaway?.cleanup();
  });

  /**
   * The killed process's keys are leased for 30 s: a retry before that waits and gets 409. The
   * lease is made to have passed, as it would have by the time a client retries after a timeout.
   */
  async function leasesPassed(): Promise<void> {
    const statement = `update idempotency_keys set locked_until = now() - interval '1 second'`;
    if (onPostgres) {
      const client = new pg.Client({ connectionString: env.DATABASE_URL });
      await client.connect();
      await client.query(statement);
      await client.end();
      return;
    }
    const database = await openDatabase({ dataDir: path.join(env.VOUCH_DATA_DIR!, 'pglite') });
    await sql.raw(statement).execute(database.db);
    await database.close();
  }

  it('a create and a live lookup committed before the kill are answered from what was committed, charged once', { timeout: SLOW }, async () => {
    server = await startServer({ ...env, VOUCH_TEST_PAUSE_AFTER_COMMIT_MS: '60000' });
    const demo = server.banner.demo!;
    const example = demoExamples(await generateDemoRegistry()).bvn!;
    const post = (base: string, url: string, key: string, body: object) =>
      fetch(`${base}${url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${demo.liveSecret}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });
    const lookupUrl = `/v1/verifications/identities/bvn/${example.bvn}`;
    const lookupBody = { firstname: example.firstname, lastname: example.lastname, dob: example.birthdate };

    // Both requests commit (record and charge), then their answers are held: the process dies there.
    const first = server.banner.url;
    const lost = [post(first, '/v1/verifications/addresses', 'crash-create', ADDRESS_BODY), post(first, lookupUrl, 'crash-lookup', lookupBody)];
    for (const request of lost) request.catch(() => undefined);
    const deadline = Date.now() + 30_000;
    while ((server.output().stdout.match(HELD)?.length ?? 0) < 2) {
      if (Date.now() > deadline) throw new Error(`no held answers\n${server.output().stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await server.kill('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
    await leasesPassed();

    server = await startServer(env);
    const second = server.banner.url;
    const create = await post(second, '/v1/verifications/addresses', 'crash-create', ADDRESS_BODY);
    expect(create.status).toBe(201);
    expect(create.headers.get('idempotent-replayed')).toBe('true');
    const created = ((await create.json()) as { data: { id: string } }).data;
    const list = (await (await fetch(`${second}/v1/verifications/addresses`, { headers: { authorization: `Bearer ${demo.liveSecret}` } })).json()) as { data: { id: string }[] };
    expect(list.data.map((record) => record.id)).toEqual([created.id]);

    const lookup = await post(second, lookupUrl, 'crash-lookup', lookupBody);
    expect(lookup.status).toBe(200);
    expect(((await lookup.json()) as { data: { bvn: string } }).data.bvn).toBe(example.bvn);
    // Its answer is kept now: a further retry replays it.
    expect((await post(second, lookupUrl, 'crash-lookup', lookupBody)).headers.get('idempotent-replayed')).toBe('true');

    expect(await server.stop()).toMatchObject({ code: 0 });
    server = undefined;
    const { balance } = await cliJson<{ balance: number }>(['org', 'show', demo.orgId, '--json'], env);
    expect(DEMO_FUNDING - balance).toBe(ADDRESS_BILLABLES.address.defaultPrice + IDENTITY_BILLABLES.bvn_basic.defaultPrice);
  });
});
