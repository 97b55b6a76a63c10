import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** An outbound URL (webhook target, photo URL) that Vouch refuses to call. */
export class OutboundUrlError extends Error {
  override name = 'OutboundUrlError';
}

/** Loopback, private, link-local, unique-local, carrier-grade NAT, multicast, reserved: anything but public unicast. */
export function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() !== 'unicast';
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
    throw new OutboundUrlError('resolves to a loopback or private network address, which is not allowed');
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
