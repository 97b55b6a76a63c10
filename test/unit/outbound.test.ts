import { describe, expect, it } from 'vitest';
import { checkOutboundUrl, guardedLookup, isPrivateAddress, OutboundUrlError } from '../../src/platform/outbound.js';

describe('outbound URL guard', () => {
  it('classifies loopback, private, link-local and mapped addresses as private', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'not-an-ip']) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '102.89.1.1', '2606:4700:4700::1111']) expect(isPrivateAddress(ip), ip).toBe(false);
  });

  it('refuses private targets unless allowed, and malformed URLs always', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://[::1]/x', 'http://10.0.0.5/']) {
      await expect(checkOutboundUrl(url, false), url).rejects.toBeInstanceOf(OutboundUrlError);
      await expect(checkOutboundUrl(url, true)).resolves.toBeInstanceOf(URL);
    }
    for (const url of ['ftp://example.com/x', 'not a url', 'http://user:pw@example.com/']) {
      await expect(checkOutboundUrl(url, true), url).rejects.toBeInstanceOf(OutboundUrlError);
    }
    await expect(checkOutboundUrl('http://8.8.8.8/hook', false)).resolves.toBeInstanceOf(URL);
  });

  it('refuses private addresses at connect time through the agent lookup', async () => {
    const lookup = guardedLookup(false);
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('localhost', {}, (err) => resolve(err)));
    expect(error?.code).toBe('EPRIVATE');
    const allowed = guardedLookup(true);
    const address = await new Promise<string>((resolve) => allowed('localhost', {}, (_err, addr) => resolve(String(addr))));
    expect(isPrivateAddress(address)).toBe(true);
  });
});
