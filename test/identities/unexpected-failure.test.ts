import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Registry } from '../../src/identities/registry/registry.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

/** A live registry whose backend is down: the failure must not leak to the caller. */
class BrokenRegistry implements Registry {
  async find(): Promise<never> {
    throw new Error('upstream registry exploded: connection reset by 10.0.0.7');
  }
  async findNinByPhone(): Promise<never> {
    throw new Error('upstream registry exploded: connection reset by 10.0.0.7');
  }
}

describe('unexpected failures', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await buildTestContext({ liveRegistry: new BrokenRegistry() });
  });
  afterAll(() => t.close());

  it('answer 500 style A with no detail, log the detail, and charge nothing', async () => {
    const org = await t.org({ fund: 100_000 });
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/verifications/identities/bvn/22111111111',
      headers: bearer(org.liveSecret),
      payload: {},
    });
    expect(res.statusCode).toBe(500);
    const body = res.json();
    expect(body).toEqual({ status: 'error', code: 'INTERNAL_SERVER_ERROR', message: expect.any(String) , requestId: expect.stringMatching(/^req_/) });
    expect(res.body).not.toContain('exploded');
    expect(res.body).not.toMatch(/\.ts:\d+/);
    expect(t.logs.join('')).toContain('upstream registry exploded');
    expect((await t.accounts.get(org.id)).balance).toBe(100_000);
  });
});
