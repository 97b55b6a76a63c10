import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/platform/outbound.js';
import { WebhookSender } from '../../src/webhooks/delivery.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { portal, portalOrg } from '../helpers/portal.js';

/**
 * The outbound URL filter (webhook targets, biometrics photo URLs) reads every IPv6 form that
 * embeds an IPv4 address as that address before judging it, and refuses anything that is not
 * public unicast: `[::7f00:1]` is 127.0.0.1 to a stack that routes IPv4-compatible addresses.
 */

describe('IPv6 forms of private addresses', () => {
  it('refuses every IPv6 spelling of a loopback, private, link-local or reserved IPv4 address', () => {
    const refused = [
      // IPv4-compatible (::/96, deprecated) and the unspecified and loopback addresses inside it
      '::7f00:1', '::a9fe:a9fe', '::a00:1', '::c0a8:101', '::127.0.0.1', '::', '::1', '::0.0.0.0',
      // IPv4-mapped and IPv4-translated (SIIT)
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '::ffff:0:7f00:1', '::ffff:0:a00:1',
      // NAT64, well-known prefix (RFC 6052) and local-use prefix (RFC 8215, never public)
      '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b::c0a8:1', '64:ff9b:1::808:808',
      // 6to4 (2002::/16) and Teredo (2001::/32: server, and client XOR-ed with ones)
      '2002:7f00:1::1', '2002:a9fe:a9fe::', '2002:a00:1:1::1', '2001:0:7f00:1::1', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:808:808:0:0:80ff:fffe',
      // Not unicast, or not in the global unicast space at all
      'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1', '100::1', '2001:db8::1', '::1:0:0:1', '4000::1', 'fe80::1%eth0',
      // IPv4 itself
      '127.0.0.1', '10.0.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.1', '198.18.0.1',
    ];
    for (const address of refused) expect([address, isPrivateAddress(address)]).toEqual([address, true]);
    const allowed = ['8.8.8.8', '102.89.1.1', '2606:4700:4700::1111', '2a00:1450:4001:81b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'];
    for (const address of allowed) expect([address, isPrivateAddress(address)]).toEqual([address, false]);
  });
});

describe('outbound IPv4-compatible IPv6 targets, over HTTP', () => {
  let t: TestContext;
  let listener: http.Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    t = await buildTestContext({ config: { allowPrivateUrls: false } });
    listener = http.createServer((_request, response) => response.end('ok'));
    listener.on('connection', () => connections++);
    await new Promise<void>((resolve) => listener.listen(0, '::', resolve));
    port = (listener.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => listener?.close(resolve));
    await t?.close();
  });

  it('refuses [::7f00:1] and [::a9fe:a9fe] as webhook URLs, and the sender never connects to one stored earlier', async () => {
    const { org, owner } = await portalOrg(t.database.db);
    for (const host of ['[::7f00:1]', '[::a9fe:a9fe]', '[::127.0.0.1]', '[64:ff9b::7f00:1]']) {
      const url = `http://${host}:${port}/hook`;
      const set = await portal(t.app, owner, { method: 'PUT', url: `/api/orgs/${org.id}/webhooks?mode=test`, payload: { url } });
      expect([url, set.statusCode]).toEqual([url, 400]);
      expect(set.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringMatching(/private network address/) });
    }
    expect(await t.database.db.selectFrom('webhook_endpoints').select('url').where('org_id', '=', org.id).execute()).toEqual([]);

    const sender = new WebhookSender({ allowPrivateUrls: false, timeoutMs: 2_000, maxSockets: 1 });
    const delivery = { id: 1, messageId: 'msg_1', orgId: org.id, mode: 'test' as const, attempt: 1, body: '{}', url: `http://[::7f00:1]:${port}/hook`, secrets: [`whsec_${Buffer.alloc(24, 1).toString('base64')}`] };
    const outcome = await sender.send(delivery);
    expect(outcome).toMatchObject({ delivered: false, statusCode: null, error: expect.stringMatching(/^refused: webhook URL .*private network address/) });
    expect(connections).toBe(0);
  });

  it('refuses [::7f00:1] and [::a9fe:a9fe] as a biometrics photoUrl without connecting', async () => {
    const org = await t.org();
    for (const host of ['[::7f00:1]', '[::a9fe:a9fe]', '[::ffff:7f00:1]', '[2002:7f00:1::1]']) {
      const photoUrl = `http://${host}:${port}/selfie.jpg`;
      const answer = await t.app.inject({
        method: 'POST',
        url: '/v1/verifications/identities/biometrics',
        headers: bearer(org.testSecret),
        payload: { idType: 'nin', idNumber: '70412358961', photoUrl },
      });
      expect([photoUrl, answer.statusCode]).toEqual([photoUrl, 400]);
      expect(answer.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/^photoUrl .*loopback or private/) });
    }
    expect(connections).toBe(0);
  });
});
