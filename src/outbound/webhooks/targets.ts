import { lookup as dnsLookup } from 'node:dns/promises';
import net from 'node:net';

// SSRF (DESIGN 15): a webhook may only reach the public internet. Every address a host resolves to is
// checked, when the endpoint is saved and again at each delivery (where the connection is then made to
// the very address checked, so a DNS answer that changes in between cannot slip a private one in).

const PRIVATE = new net.BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(net4, prefix, 'ipv4');
for (const [net6, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32],
] as const) PRIVATE.addSubnet(net6, prefix, 'ipv6');

/** Loopback, private, link-local, shared, documentation, multicast or reserved: not a place to send webhooks. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (an IP literal to itself). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) => {
  if (net.isIP(host)) return [{ address: host, family: net.isIP(host) }];
  return dnsLookup(host, { all: true, verbatim: true });
};

export type TargetCheck =
  | { ok: true; url: URL; addresses: ResolvedAddress[] }
  | { ok: false; reason: string };

/** A URL's shape alone: absolute, https (http too when private targets are allowed), no credentials. */
export function checkUrlShape(raw: string, allowPrivate: boolean): { ok: true; url: URL } | { ok: false; reason: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return { ok: false, reason: 'must be an https URL' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry a user name or password' };
  if (raw.length > 2048) return { ok: false, reason: 'must be at most 2048 characters' };
  return { ok: true, url };
}

/** The URL and every address its host resolves to, or why it is refused. */
export async function checkTarget(raw: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<TargetCheck> {
  const shape = checkUrlShape(raw, allowPrivate);
  if (!shape.ok) return shape;
  const host = shape.url.hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    return { ok: false, reason: `host ${host} does not resolve` };
  }
  if (addresses.length === 0) return { ok: false, reason: `host ${host} does not resolve` };
  if (!allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) return { ok: false, reason: `host ${host} resolves to a private, loopback or link-local address (${bad.address})` };
  }
  return { ok: true, url: shape.url, addresses };
}
