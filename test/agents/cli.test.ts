import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inviteAgentAccount } from '../../src/agents/accounts.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { createSession } from '../../src/portal/sessions.js';
import { cliJson, expectFailure, killServers, runCli, startServer, throwawayEnv, type CliEnv, type ThrowawayEnv } from '../helpers/cli.js';
import { ADDRESS_BODY, BUSINESS_BODY } from './fixtures.js';

// Every case spawns `vouch` as built for the run (test/global-setup.ts); the embedded database allows one process at a time.
const SLOW = 180_000;
const CREDENTIAL = /^ak_[A-Za-z0-9_-]{43}$/;

interface AgentJson {
  id: string;
  name: string;
  email: string;
  phone: string;
  states: string[];
  active: boolean;
  openTasks: number;
  credential?: string;
}

describe('vouch agent', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let agent: AgentJson & { credential: string };

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    env = { ...throwaway.env, VOUCH_DEMO: '0' };
  }, SLOW);
  afterEach(() => killServers());
  afterAll(async () => {
    await throwaway.cleanup();
  });

  it('create prints the agent and its credential once; list shows it without the credential', async () => {
    agent = await cliJson(['agent', 'create', '--name', 'Ada Field', '--email', 'ada@field.example', '--phone', '0803 123 4567', '--states', 'lagos, Ogun,Abuja', '--lgas', 'ogun/ado odo ota', '--json'], env);
    expect(agent).toMatchObject({ name: 'Ada Field', email: 'ada@field.example', phone: '+2348031234567', states: ['FCT', 'Lagos', 'Ogun'], lgas: ['Ogun/Ado Odo-Ota'], active: true, openTasks: 0 });
    expect(agent.credential).toMatch(CREDENTIAL);
    const list = await cliJson<AgentJson[]>(['agent', 'list', '--json'], env);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: agent.id, openTasks: 0 });
    expect(JSON.stringify(list)).not.toContain(agent.credential);
  }, SLOW);

  it('refuses bad input with one line on stderr', async () => {
    const create = (...args: string[]) =>
      runCli(['agent', 'create', '--name', 'X', '--email', 'x@field.example', '--phone', '08031234567', '--states', 'Lagos', ...args, '--json'], env);
    // These fail before the database is opened, so they can run side by side.
    const [state, phone, email, none, kind, lga] = await Promise.all([
      create('--states', 'Lagos,Atlantis'),
      create('--phone', '123'),
      create('--email', 'nope'),
      create('--states', ' , '),
      runCli(['agent', 'assign', 'parcel', '1', agent.id, '--json'], env),
      create('--lgas', 'Lagos/Kano Municipal'),
    ]);
    expectFailure(state, /--states: "Atlantis" is not a Nigerian state/);
    expectFailure(phone, /--phone "123" is not a valid Nigerian phone number/);
    expectFailure(email, /--email "nope" is not an email address/);
    expectFailure(none, /--states must name at least one state/);
    expectFailure(kind, /kind must be one of address, business/);
    expectFailure(lga, /--lgas: "Kano Municipal" is not a local government area of Lagos/);
    expectFailure(await create('--email', 'ADA@field.example'), /an agent with the email ADA@field.example already exists/);
    expectFailure(await runCli(['agent', 'rotate-credential', '00000000-0000-4000-8000-000000000000', '--json'], env), /no agent/);
    expectFailure(await runCli(['agent', 'assign', 'address', '999', agent.id, '--json'], env), /no open address task 999/);
  }, SLOW);

  it('rotate-credential replaces the credential; the agent API takes only the new one', async () => {
    const rotated = await cliJson<{ id: string; credential: string }>(['agent', 'rotate-credential', agent.id, '--json'], env);
    expect(rotated.id).toBe(agent.id);
    expect(rotated.credential).toMatch(CREDENTIAL);
    expect(rotated.credential).not.toBe(agent.credential);
    const org = await cliJson<{ id: string; liveSecret: string }>(['org', 'create', '--name', 'Field Co', '--risk-level', 'LOW', '--enable', '--fund', '10000000', '--json'], env);

    const server = await startServer(env);
    const api = (method: string, url: string, secret: string, body?: object) =>
      fetch(`${server.banner.url}${url}`, {
        method,
        headers: { authorization: `Bearer ${secret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    expect((await api('GET', '/v1/agent/me', rotated.credential)).status).toBe(200);
    expect((await api('GET', '/v1/agent/me', agent.credential)).status).toBe(401);
    const lagos = (await (await api('POST', '/v1/verifications/addresses', org.liveSecret, ADDRESS_BODY)).json()) as { data: { id: number } };
    const kano = (await (await api('POST', '/v1/verifications/businesses', org.liveSecret, { ...BUSINESS_BODY, state: 'Kano', lga: 'Fagge' })).json()) as { data: { id: number } };
    const mine = (await (await api('GET', '/v1/agent/tasks', rotated.credential)).json()) as { data: { id: number }[] };
    expect(mine.data.map((task) => task.id)).toEqual([lagos.data.id]);
    await server.stop();

    const unassigned = await cliJson<Record<string, unknown>[]>(['agent', 'tasks', '--unassigned', '--json'], env);
    expect(unassigned).toEqual([
      expect.objectContaining({
        kind: 'business', id: kano.data.id, orgId: org.id, mode: 'live', state: 'Kano', agentId: null,
        place: expect.objectContaining({ street: '4 Broad Street', lga: 'Fagge', state: 'Kano' }),
        business: { name: 'Mama Put Ventures', type: 'Informal', rcNumber: '' },
      }),
    ]);
    const assigned = await cliJson<Record<string, unknown>>(['agent', 'assign', 'business', String(kano.data.id), agent.id, '--json'], env);
    expect(assigned).toMatchObject({ kind: 'business', id: kano.data.id, agentId: agent.id });
    expect(await cliJson(['agent', 'tasks', '--unassigned', '--json'], env)).toEqual([]);
    const agentTasks = await cliJson<{ id: number }[]>(['agent', 'tasks', '--agent', agent.id, '--json'], env);
    expect(agentTasks.map((task) => task.id).sort()).toEqual([lagos.data.id, kano.data.id].sort());
    expect((await cliJson<AgentJson[]>(['agent', 'list', '--json'], env))[0]!.openTasks).toBe(2);
    // The commands printed the tasks' contacts: the access log has them, as the command line.
    const logged = await cliJson<{ data: { actor: { kind: string }; channel: string; action: string; resourceId: string }[] }>(
      ['access-log', '--channel', 'cli', '--resource', 'business', '--json'],
      env,
    );
    expect(logged.data.length).toBeGreaterThan(0);
    expect(logged.data.every((row) => row.actor.kind === 'cli' && row.channel === 'cli' && row.action === 'list')).toBe(true);
    expect(logged.data.map((row) => row.resourceId)).toContain(String(kano.data.id));

    const deactivated = await cliJson<AgentJson>(['agent', 'deactivate', agent.id, '--json'], env);
    expect(deactivated).toMatchObject({ active: false, openTasks: 0 });
    expect(await cliJson<unknown[]>(['agent', 'tasks', '--unassigned', '--json'], env)).toHaveLength(2);
  }, SLOW);

  it('deactivate signs the agent out of the field app at once and ends an unused invitation, audited as the command line', async () => {
    const created = await cliJson<AgentJson>(['agent', 'create', '--name', 'Bisi Field', '--email', 'bisi@field.example', '--phone', '08031234568', '--states', 'Oyo', '--json'], env);
    const open = () => openDatabase(env.DATABASE_URL ? { url: env.DATABASE_URL } : { dataDir: path.join(env.VOUCH_DATA_DIR!, 'pglite') });
    let personId: string;
    let database = await open();
    try {
      const db = database.db;
      personId = (await db.transaction().execute((trx) => inviteAgentAccount(trx, created.id, 'http://127.0.0.1:8080'))).personId;
      await createSession(db, { personId });
      await inviteAgentAccount(db, created.id, 'http://127.0.0.1:8080');
    } finally {
      await database.close();
    }
    expect(await cliJson<AgentJson>(['agent', 'deactivate', created.id, '--json'], env)).toMatchObject({ id: created.id, active: false });
    database = await open();
    try {
      const db = database.db;
      const sessions = await db.selectFrom('portal_sessions').select('revoked_at').where('person_id', '=', personId).execute();
      expect(sessions).toHaveLength(1);
      expect(sessions[0]!.revoked_at).not.toBeNull();
      expect(await db.selectFrom('person_tokens').select('token_hash').where('person_id', '=', personId).where('used_at', 'is', null).execute()).toEqual([]);
      const audited = await db.selectFrom('audit_events').select(['actor_kind', 'action', 'target']).where('action', '=', 'agent.deactivated').where('target', '=', 'bisi@field.example').execute();
      expect(audited).toEqual([{ actor_kind: 'cli', action: 'agent.deactivated', target: 'bisi@field.example' }]);
    } finally {
      await database.close();
    }
  }, SLOW);

  it('price set accepts the field verification types', async () => {
    for (const type of ['address', 'business', 'address_marketplace']) {
      expect(await cliJson(['price', 'set', type, '123', '--json'], env)).toEqual({ type, price: 123 });
    }
    const prices = await cliJson<Record<string, number>>(['price', 'list', '--json'], env);
    expect(prices).toMatchObject({ address: 123, business: 123, address_marketplace: 123 });
  }, SLOW);
});
