import ipaddr from 'ipaddr.js';

/**
 * The prefix length of one IPv6 subscriber: an ISP hands a home or a phone a /64 at least (RFC
 * 6177), and the device picks any address in it at will (privacy addresses, RFC 8981).
 */
export const IPV6_CLIENT_PREFIX = 64;

/**
 * What a per-address limit counts for a client address (`request.ip`, after the trusted proxies):
 * an IPv4 address as it is, and an IPv6 address as its /64, which one client can rotate through
 * without limit. An IPv4 address written as IPv6 (`::ffff:198.51.100.7`, what a dual-stack socket
 * reports) counts as the IPv4 address. Anything that does not parse is counted as written.
 */
export function addressKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(ip.replace(/%.*$/, ''));
  } catch {
    return ip;
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const bytes = v6.toByteArray().map((byte, i) => (i < IPV6_CLIENT_PREFIX / 8 ? byte : 0));
  return `${ipaddr.fromByteArray(bytes).toString()}/${IPV6_CLIENT_PREFIX}`;
}
