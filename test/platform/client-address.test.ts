import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/platform/client-address.js';

describe('what a per-address limit counts', () => {
  it('an IPv4 address as it is, an IPv6 address as its /64, a mapped IPv4 address as the IPv4 address', () => {
    expect(addressKey('198.51.100.7')).toBe('198.51.100.7');
    expect(addressKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:abcd:ef01:2345:6789')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:0000:0000:0000:0009')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80::/64');
    expect(addressKey('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(addressKey('::1')).toBe('::/64');
  });

  it('counts what does not parse as written, and a missing address as one', () => {
    expect(addressKey('not-an-address')).toBe('not-an-address');
    expect(addressKey(undefined)).toBe('unknown');
    expect(addressKey('')).toBe('unknown');
  });
});
