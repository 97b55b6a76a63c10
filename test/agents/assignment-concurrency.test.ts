import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, deactivateAgent, listAgents } from '../../src/agents/service.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { ADDRESS_BODY, BUSINESS_BODY } from './fixtures.js';

const CREATES = 40;

/**
 * Auto-assignment under concurrent creates, over real sockets. Creates of one organization already
 * queue on its wallet row, so the creates here come from different organizations: only the agents'
 * rows stand between two transactions picking the same "least loaded" agent. PGlite runs one
 * transaction at a time, so this bites on PostgreSQL; it must hold on both.
 */
describe('field agents: assignment under concurrent creates', () => {
  let t: TestContext;
  let base: string;
  let agentCounter = 0;

  beforeAll(async () => {
    t = await buildTestContext();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const makeAgents = (count: number, states: string[]) =>
    Promise.all(
      Array.from({ length: count }, () => {
        const n = ++agentCounter;
        return createAgent(t.database.db, { name: `Agent ${n}`, email: `agent${n}@agents.example`, phone: '08031230000', states });
      }).map(async (created) => (await created).agent.id),
    );

  const makeOrgs = (count: number) => Promise.all(Array.from({ length: count }, () => t.org({ riskLevel: 'LOW', fund: 10_000_000 })));

  /** One live create per organization, all in flight at once; addresses and businesses share the agents. */
  const createConcurrently = (secrets: string[], state: string, lga: string) =>
    Promise.all(
      secrets.map(async (secret, i) => {
        const [url, body] = i % 4 === 3 ? ['/v1/verifications/businesses', BUSINESS_BODY] : ['/v1/verifications/addresses', ADDRESS_BODY];
        const res = await fetch(`${base}${url}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ...body, state, lga }),
        });
        return { status: res.status, body: await res.text() };
      }),
    );

  const openTasksOf = async (ids: string[]) => {
    const agents = await listAgents(t.database.db);
    return ids.map((id) => agents.find((agent) => agent.id === id)!.openTasks);
  };

  it('spreads 40 concurrent creates over 4 agents of a state evenly', async () => {
    const agents = await makeAgents(4, ['Oyo']);
    const orgs = await makeOrgs(CREATES);
    const results = await createConcurrently(
      orgs.map((org) => org.liveSecret),
      'Oyo',
      'Ibadan North',
    );
    // Addresses answer 201, businesses 200 (as the spec shows).
    expect(results.filter((res) => res.status > 201)).toEqual([]);
    const counts = await openTasksOf(agents);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(CREATES);
    expect(Math.max(...counts) - Math.min(...counts), `open tasks per agent: ${counts.join(', ')}`).toBeLessThanOrEqual(1);
  });

  it('deactivating an agent while creates are in flight neither deadlocks nor strands a task', async () => {
    // The fourth agent also covers Kwara, so the candidate sets of the two states overlap.
    const agents = await makeAgents(3, ['Kano']);
    const [leaving] = await makeAgents(1, ['Kano', 'Kwara']);
    const orgs = await makeOrgs(CREATES);
    const secrets = orgs.map((org) => org.liveSecret);
    const [kano, kwara, deactivated] = await Promise.all([
      createConcurrently(secrets.slice(0, 30), 'Kano', 'Nasarawa'),
      createConcurrently(secrets.slice(30), 'Kwara', 'Ilorin West'),
      new Promise((resolve) => setTimeout(resolve, 20)).then(() => deactivateAgent(t.database.db, leaving!)),
    ]);
    expect([...kano, ...kwara].filter((res) => res.status > 201)).toEqual([]);
    expect(deactivated).toMatchObject({ active: false, openTasks: 0 });
    const counts = await openTasksOf(agents);
    const unassigned = await t.database.db
      .selectFrom('field_tasks')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('agent_id', 'is', null)
      .where('state', '=', 'Kano')
      .executeTakeFirstOrThrow();
    expect(Number(unassigned.count)).toBe(0);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(30);
    expect(Math.max(...counts) - Math.min(...counts), `open tasks per agent: ${counts.join(', ')}`).toBeLessThanOrEqual(1);
  });
});
