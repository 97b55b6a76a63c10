import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** An outbound URL (webhook target, photo URL) that Vouch refuses to call. */
export class OutboundUrlError extends Error {
  override name = 'OutboundUrlError';
  constructor(
    message: string,
    /** Refused because it resolves to a loopback or private address (VOUCH_ALLOW_PRIVATE_URLS would allow it). */
    readonly privateAddress = false,
  ) {
    super(message);
  }
}

const v6 = (cidr: string) => ipaddr.IPv6.parseCIDR(cidr);

/** The only IPv6 space routed on the public internet (RFC 4291 2.4): everything else is local or reserved. */
const GLOBAL_UNICAST = v6('2000::/3');

/** The IPv4 address held by `bytes[at..at+4]`, its bits flipped when `flip` (Teredo's client). */
function ipv4At(bytes: readonly number[], at: number, flip = false): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes.slice(at, at + 4).map((byte) => (flip ? byte ^ 0xff : byte)));
}

/**
 * IPv6 forms that stand for IPv4 addresses, and where the IPv4 address sits: a stack (or a
 * translator on the way) may deliver a connection to them at that IPv4 address, so they are
 * judged as it. The local-use NAT64 prefix (RFC 8215) embeds by the network's own rules and is
 * never public: it has no entry and falls to the global-unicast test.
 */
const EMBEDDINGS: readonly { range: [ipaddr.IPv6, number]; ipv4: (bytes: readonly number[]) => ipaddr.IPv4[] }[] = [
  // IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96 (SIIT) and IPv4-compatible ::/96 (deprecated).
  { range: v6('::ffff:0:0/96'), ipv4: (bytes) => [ipv4At(bytes, 12)] },
  { range: v6('::ffff:0:0:0/96'), ipv4: (bytes) => [ipv4At(bytes, 12)] },
  { range: v6('::/96'), ipv4: (bytes) => [ipv4At(bytes, 12)] },
  // NAT64, well-known prefix (RFC 6052).
  { range: v6('64:ff9b::/96'), ipv4: (bytes) => [ipv4At(bytes, 12)] },
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48.
  { range: v6('2002::/16'), ipv4: (bytes) => [ipv4At(bytes, 2)] },
  // Teredo (RFC 4380): the server's address, and the client's with its bits flipped.
  { range: v6('2001::/32'), ipv4: (bytes) => [ipv4At(bytes, 4), ipv4At(bytes, 12, true)] },
];

/**
 * Loopback, private, link-local, unique-local, carrier-grade NAT, multicast, reserved: anything but
 * public unicast. An IPv6 address that embeds an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo)
 * is judged by the IPv4 address; any other IPv6 address must be global unicast (2000::/3).
 */
export function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  const ipv6 = parsed as ipaddr.IPv6;
  // A zone (fe80::1%eth0) scopes the address to one link.
  if (ipv6.zoneId) return true;
  const embedding = EMBEDDINGS.find(({ range }) => ipv6.match(range));
  if (embedding) return embedding.ipv4(ipv6.toByteArray()).some((ipv4) => ipv4.range() !== 'unicast');
  return !ipv6.match(GLOBAL_UNICAST) || ipv6.range() !== 'unicast';
}

/** Parses and checks the form of an outbound URL: http(s), a host, no credentials. */
export function parseOutboundUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundUrlError('is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundUrlError('must be an http or https URL');
  if (url.username || url.password) throw new OutboundUrlError('must not carry credentials');
  return url;
}

/** Resolves the URL's host and refuses it when any address is private (unless allowed). */
export async function checkOutboundUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = parseOutboundUrl(raw);
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (net.isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await dns.promises.lookup(host, { all: true })).map((entry) => entry.address);
    } catch {
      throw new OutboundUrlError(`host ${host} does not resolve`);
    }
  }
  if (addresses.some(isPrivateAddress)) {
    throw new OutboundUrlError('resolves to a loopback or private network address, which is not allowed', true);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s) agents that refuses private addresses at connect time, so a name that
 * re-resolves to a private address after the check (DNS rebinding) still cannot be reached.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, entries) => {
      if (err) return callback(err, '');
      const list = entries as dns.LookupAddress[];
      if (!allowPrivate && list.some((entry) => isPrivateAddress(entry.address))) {
        const refused = Object.assign(new Error(`${hostname} resolves to a private address`), { code: 'EPRIVATE' });
        return callback(refused, '');
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
