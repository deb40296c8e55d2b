import dns from 'node:dns/promises';
import net from 'node:net';

/**
 * Where a webhook may point (SSRF): never at link-local addresses (cloud metadata such as
 * 169.254.169.254), and not at loopback, private or other non-public ranges unless
 * WEBHOOKS_ALLOW_PRIVATE_URLS is on. Checked on the URL at creation and on every address the
 * name resolves to at each attempt, which then connects to the address checked.
 */
const linkLocal = new net.BlockList();
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal.addSubnet('fe80::', 10, 'ipv6');

const nonPublic = new net.BlockList();
for (const [a, p] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(a, p, 'ipv4');
}
for (const [a, p] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const)
  nonPublic.addSubnet(a, p, 'ipv6');

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is checked as the IPv4 address it carries. */
function normalise(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1], family: 'ipv4' };
  return { address, family: net.isIPv4(address) ? 'ipv4' : 'ipv6' };
}

/** Why an address is refused, or undefined when it may be used. */
export function refusedAddress(address: string, allowPrivate: boolean): string | undefined {
  const a = normalise(address);
  if (linkLocal.check(a.address, a.family)) return 'a link-local address';
  if (!allowPrivate && nonPublic.check(a.address, a.family)) return 'a private or loopback address';
  return undefined;
}

/** Why a webhook URL is refused before any resolution (scheme, literal address), or undefined. */
export function refusedUrl(raw: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'https is required';
  if (url.username || url.password) return 'credentials in the URL are not allowed';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return refusedAddress(host, allowPrivate);
  return undefined;
}

export interface Resolved {
  address: string;
  family: 4 | 6;
}

/** Resolves the URL's host and checks every address it has; the first is the one to connect to. */
export async function resolveChecked(raw: string, allowPrivate: boolean): Promise<Resolved> {
  const why = refusedUrl(raw, allowPrivate);
  if (why) throw new RefusedTarget(why);
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  const family = net.isIP(host);
  if (family) return { address: host, family: family as 4 | 6 };
  let all: { address: string; family: number }[];
  try {
    all = await dns.lookup(host, { all: true, verbatim: true });
  } catch {
    throw new RefusedTarget(`'${host.slice(0, 100)}' does not resolve`);
  }
  if (!all.length) throw new RefusedTarget(`'${host.slice(0, 100)}' does not resolve`);
  // One refused address refuses the name: a resolver answering several could be rotated into it.
  for (const a of all) {
    const refused = refusedAddress(a.address, allowPrivate);
    if (refused) throw new RefusedTarget(`'${host.slice(0, 100)}' resolves to ${refused}`);
  }
  return { address: all[0].address, family: all[0].family as 4 | 6 };
}

export class RefusedTarget extends Error {}
