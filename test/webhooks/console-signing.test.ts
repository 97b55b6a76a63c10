import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueEvent } from '../../src/webhooks/events.js';
import type { Worker } from '../../src/worker.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

let ctx: TestContext;
let operator: PortalUser;
let receiver: WebhookReceiver;
let worker: Worker;

beforeAll(async () => {
  ctx = await buildTestContext();
  operator = await operatorUser(ctx.app, ctx.database.db);
  receiver = await startWebhookReceiver();
  worker = await startTestWorker(ctx.database);
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await ctx?.close();
});

/** As the operator unless `user` says otherwise (null: no session). */
const setSigning = (orgId: string, mode: string, payload: unknown, user: PortalUser | null = operator) =>
  portal(ctx.app, user ?? undefined, { method: 'PUT', url: `/api/console/organizations/${orgId}/webhooks/${mode}/signing`, payload: payload as object });

describe("the console changes an endpoint's signing", () => {
  it('shows it on the organization, changes it with an audit row naming the operator, and the next delivery is signed that way', async () => {
    const org = await ctx.org();
    await connectReceiver(ctx.database, receiver, org.id, 'live');
    const detail = await portal(ctx.app, operator, { method: 'GET', url: `/api/console/organizations/${org.id}` });
    expect(detail.json().webhooks.map((w: { mode: string; signing: string | null }) => [w.mode, w.signing])).toEqual([
      ['test', null],
      ['live', 'standard'],
    ]);

    const changed = await setSigning(org.id, 'live', { signing: 'verifyme' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ mode: 'live', url: receiver.url, signing: 'verifyme' });

    const id = await enqueueEvent(ctx.database.db, { orgId: org.id, mode: 'live', type: 'address.completed', data: { n: 1 } });
    const arrived = await receiver.waitFor((r) => r.id === id);
    expect(arrived.verifymeVerified).toBe(true);
    expect(arrived.headers['webhook-signature']).toBeUndefined();

    expect((await setSigning(org.id, 'live', { signing: 'both' })).json().signing).toBe('both');
    const second = await enqueueEvent(ctx.database.db, { orgId: org.id, mode: 'live', type: 'address.completed', data: { n: 2 } });
    const signedTwice = await receiver.waitFor((r) => r.id === second);
    expect(signedTwice.verified && signedTwice.verifymeVerified).toBe(true);

    const audit = await ctx.database.db
      .selectFrom('audit_events')
      .select(['action', 'actor_kind', 'actor_id', 'target', 'before', 'after'])
      .where('org_id', '=', org.id)
      .orderBy('id')
      .execute();
    expect(audit).toEqual([
      { action: 'webhook.signing_set', actor_kind: 'operator', actor_id: operator.personId, target: 'live webhook', before: { signing: 'standard' }, after: { signing: 'verifyme' } },
      { action: 'webhook.signing_set', actor_kind: 'operator', actor_id: operator.personId, target: 'live webhook', before: { signing: 'verifyme' }, after: { signing: 'both' } },
    ]);
  });

  it('refuses bad values (style A 400), a mode without an endpoint and unknown organizations (404), customers (403) and no session (401)', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    await connectReceiver(ctx.database, receiver, org.id, 'live');
    for (const payload of [{ signing: 'hmac' }, { signing: 'VERIFYME' }, {}, { signing: null }]) {
      const res = await setSigning(org.id, 'live', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toEqual({ status: 'error', code: 'VALIDATION_ERROR', message: expect.any(String) , requestId: expect.stringMatching(/^req_/) });
    }
    expect((await setSigning(org.id, 'sandbox', { signing: 'both' })).statusCode).toBe(400);
    const none = await setSigning(org.id, 'test', { signing: 'both' });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR', message: expect.stringContaining('no test webhook endpoint') });
    expect((await setSigning('00000000-0000-4000-8000-000000000000', 'live', { signing: 'both' })).statusCode).toBe(404);
    expect((await setSigning('not-an-id', 'live', { signing: 'both' })).statusCode).toBe(404);

    // The organization's own owner is a customer: the console is closed to them.
    const own = await setSigning(org.id, 'live', { signing: 'verifyme' }, owner);
    expect(own.statusCode).toBe(403);
    expect(own.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    expect((await setSigning(org.id, 'live', { signing: 'verifyme' }, null)).statusCode).toBe(401);

    const row = await ctx.database.db.selectFrom('webhook_endpoints').select('signing').where('org_id', '=', org.id).where('mode', '=', 'live').executeTakeFirstOrThrow();
    expect(row.signing).toBe('standard');
    expect(await ctx.database.db.selectFrom('audit_events').select('action').where('org_id', '=', org.id).where('action', '=', 'webhook.signing_set').execute()).toEqual([]);
  });
});
