import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { runFuzz } from '../../scripts/fuzz.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, ORIGIN, portalOrg } from '../helpers/portal.js';

/**
 * The fuzz run of issue 19 (scripts/fuzz.ts), its quick set: malformed variants of every
 * operation in the OpenAPI document, as an owner, an operator, an agent and an API secret. No
 * answer is a 5xx, and none under /v1 or /api is the web app's HTML.
 */
describe('fuzz: malformed requests over every operation', () => {
  let t: TestContext;

  beforeAll(async () => {
    t = await buildTestContext({ config: { rateLimits: { perSecret: 1_000_000, perAddress: 1_000_000 } } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers none of them 5xx or HTML', { timeout: 120_000 }, async () => {
    const { org, owner } = await portalOrg(t.database.db);
    const secret = (await t.org({ riskLevel: 'LOW' })).testSecret;
    const agent = await createAgent(t.database.db, { name: 'Fuzz', email: 'fuzz@agents.example', phone: '08031230000', states: ['Lagos'] });
    const operator = await operatorUser(t.app, t.database.db);
    const report = await runFuzz(
      t.app,
      { secret, agentCredential: agent.credential, portalCookie: owner.cookie, orgId: org.id, operatorCookie: operator.cookie, origin: ORIGIN },
      { quick: true },
    );
    expect(report.requests).toBeGreaterThan(1_500);
    expect(report.failures.map((f) => `${f.status} ${f.method} ${f.url} [${f.variant}] ${f.body}`)).toEqual([]);
  });
});
