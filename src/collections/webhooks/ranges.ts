import net from 'node:net';

/**
 * What a range is to a webhook target: `public` may be used; `private` (loopback, private-use)
 * only with WEBHOOKS_ALLOW_PRIVATE_URLS; `link-local` never (cloud metadata such as
 * 169.254.169.254); `special` never (documentation, benchmarking, anycast services, translation,
 * multicast, reserved: nothing a receiver lives on); `embedded` is judged by the IPv4 address its
 * last 32 bits carry.
 */
export type Kind = 'public' | 'private' | 'link-local' | 'special' | 'embedded';

/** [prefix, kind, name] */
export type Range = readonly [string, Kind, string];

/**
 * The IANA IPv4 Special-Purpose Address Registry (RFC 6890;
 * https://www.iana.org/assignments/iana-ipv4-special-registry), every entry, whatever its
 * "globally reachable" column says, plus 224.0.0.0/4 from the IPv4 Multicast Address Space
 * registry. The longest matching prefix decides; an address no entry holds is public.
 */
export const IPV4_RANGES: readonly Range[] = [
  ['0.0.0.0/8', 'special', '"this network"'],
  ['0.0.0.0/32', 'special', '"this host on this network"'],
  ['10.0.0.0/8', 'private', 'private-use'],
  ['100.64.0.0/10', 'private', 'shared address space'],
  ['127.0.0.0/8', 'private', 'loopback'],
  ['169.254.0.0/16', 'link-local', 'link local'],
  ['172.16.0.0/12', 'private', 'private-use'],
  ['192.0.0.0/24', 'special', 'IETF protocol assignments'],
  ['192.0.0.0/29', 'special', 'IPv4 service continuity prefix'],
  ['192.0.0.8/32', 'special', 'IPv4 dummy address'],
  ['192.0.0.9/32', 'special', 'Port Control Protocol anycast'],
  ['192.0.0.10/32', 'special', 'TURN anycast'],
  ['192.0.0.170/32', 'special', 'NAT64/DNS64 discovery'],
  ['192.0.0.171/32', 'special', 'NAT64/DNS64 discovery'],
  ['192.0.2.0/24', 'special', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'special', 'AS112-v4'],
  ['192.52.193.0/24', 'special', 'AMT'],
  ['192.88.99.0/24', 'special', 'deprecated (6to4 relay anycast)'],
  ['192.88.99.2/32', 'special', '6a44-relay anycast'],
  ['192.168.0.0/16', 'private', 'private-use'],
  ['192.175.48.0/24', 'special', 'direct delegation AS112 service'],
  ['198.18.0.0/15', 'special', 'benchmarking'],
  ['198.51.100.0/24', 'special', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'special', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'special', 'multicast'],
  ['240.0.0.0/4', 'special', 'reserved'],
  ['255.255.255.255/32', 'special', 'limited broadcast'],
];

/**
 * The IANA IPv6 Special-Purpose Address Registry (RFC 6890;
 * https://www.iana.org/assignments/iana-ipv6-special-registry), every entry, on top of the IPv6
 * Address Space registry: only 2000::/3 is global unicast, everything else (fec0::/10 site-local,
 * ff00::/8 multicast, the deprecated IPv4-compatible ::/96, the rest reserved) is refused. The
 * two forms that carry an IPv4 address a host really reaches (IPv4-mapped, and the NAT64
 * well-known prefix that translates to it) are judged by that address.
 */
export const IPV6_RANGES: readonly Range[] = [
  ['::/0', 'special', 'not global unicast'],
  ['2000::/3', 'public', 'global unicast'],
  ['::/128', 'special', 'unspecified'],
  ['::1/128', 'private', 'loopback'],
  ['::ffff:0:0/96', 'embedded', 'IPv4-mapped'],
  ['64:ff9b::/96', 'embedded', 'IPv4-IPv6 translation'],
  ['64:ff9b:1::/48', 'special', 'local-use IPv4-IPv6 translation'],
  ['100::/64', 'special', 'discard-only'],
  ['100:0:0:1::/64', 'special', 'dummy IPv6 prefix'],
  ['2001::/23', 'special', 'IETF protocol assignments'],
  ['2001::/32', 'special', 'TEREDO'],
  ['2001:1::1/128', 'special', 'Port Control Protocol anycast'],
  ['2001:1::2/128', 'special', 'TURN anycast'],
  ['2001:1::3/128', 'special', 'DNS-SD service registration protocol anycast'],
  ['2001:2::/48', 'special', 'benchmarking'],
  ['2001:3::/32', 'special', 'AMT'],
  ['2001:4:112::/48', 'special', 'AS112-v6'],
  ['2001:10::/28', 'special', 'deprecated (ORCHID)'],
  ['2001:20::/28', 'special', 'ORCHIDv2'],
  ['2001:30::/28', 'special', 'drone remote ID protocol entity tags'],
  ['2001:db8::/32', 'special', 'documentation'],
  ['2002::/16', 'special', '6to4'],
  ['2620:4f:8000::/48', 'special', 'direct delegation AS112 service'],
  ['3fff::/20', 'special', 'documentation'],
  ['5f00::/16', 'special', 'segment routing (SRv6) SIDs'],
  ['fc00::/7', 'private', 'unique-local'],
  ['fe80::/10', 'link-local', 'link-local unicast'],
  ['fec0::/10', 'special', 'site-local (deprecated)'],
  ['ff00::/8', 'special', 'multicast'],
];

/** An address as an unsigned integer (32 or 128 bits); the caller checked it is one (net.isIP). */
export function toBits(address: string, family: 4 | 6): bigint {
  if (family === 4) return address.split('.').reduce((n, o) => (n << 8n) | BigInt(Number(o)), 0n);
  let s = address.split('%')[0]; // a zone (fe80::1%eth0) is no part of the address
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    s = `${s.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

interface Compiled {
  base: bigint;
  bits: number;
  kind: Kind;
  what: string;
}

/** What an address is as a webhook target, and why (the range's name and prefix). */
export interface Verdict {
  kind: Exclude<Kind, 'embedded'>;
  what: string;
}

function compile(ranges: readonly Range[], family: 4 | 6): Compiled[] {
  const width = family === 4 ? 32 : 128;
  return ranges
    .map(([prefix, kind, name]) => {
      const [address, bits] = prefix.split('/');
      const shift = BigInt(width - Number(bits));
      return {
        base: (toBits(address, family) >> shift) << shift,
        bits: Number(bits),
        kind,
        what: `${name}, ${prefix}`,
      };
    })
    .sort((x, y) => y.bits - x.bits); // longest prefix first: the first match decides
}

const V4 = compile(IPV4_RANGES, 4);
const V6 = compile(IPV6_RANGES, 6);

function lookup(table: Compiled[], n: bigint, width: number): Compiled | undefined {
  return table.find((r) => n >> BigInt(width - r.bits) === r.base >> BigInt(width - r.bits));
}

function ipv4(n: bigint): Verdict {
  const r = lookup(V4, n, 32);
  return r && r.kind !== 'embedded' ? { kind: r.kind, what: r.what } : { kind: 'public', what: 'public' };
}

/** What an IP address is as a webhook target; an IPv6 form carrying an IPv4 address is that address. */
export function classify(address: string): Verdict {
  const family = net.isIP(address.split('%')[0]);
  if (family === 4) return ipv4(toBits(address, 4));
  if (family !== 6) return { kind: 'special', what: 'not an IP address' };
  const n = toBits(address, 6);
  const r = lookup(V6, n, 128)!; // ::/0 holds every address
  if (r.kind !== 'embedded') return { kind: r.kind, what: r.what };
  const v4 = n & 0xffffffffn;
  const inner = ipv4(v4);
  const dotted = [24n, 16n, 8n, 0n].map((s) => String((v4 >> s) & 0xffn)).join('.');
  return { kind: inner.kind, what: `${inner.what}: ${dotted} in ${r.what}` };
}
