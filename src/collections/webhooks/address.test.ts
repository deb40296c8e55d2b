import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { refusedAddress, refusedUrl } from './address.js';
import { classify, IPV4_RANGES, IPV6_RANGES, type Kind } from './ranges.js';

type Seen = Exclude<Kind, 'embedded'>;
const P: Seen = 'public';
const PRIV: Seen = 'private';
const LL: Seen = 'link-local';
const S: Seen = 'special';
const F = 'ffff:ffff:ffff:ffff:ffff';

/**
 * Every range of the tables, written out by hand: addresses inside it (its edges and one between),
 * which it must decide, and the addresses just outside it, which it must not, with what they are.
 */
const CASES: [range: string, kind: Seen, inside: string[], outside: [string, Seen][]][] = [
  ['0.0.0.0/8', S, ['0.0.0.1', '0.1.2.3', '0.255.255.255'], [['1.0.0.0', P]]],
  ['0.0.0.0/32', S, ['0.0.0.0'], [['0.0.0.1', S]]],
  [
    '10.0.0.0/8',
    PRIV,
    ['10.0.0.0', '10.128.3.4', '10.255.255.255'],
    [
      ['9.255.255.255', P],
      ['11.0.0.0', P],
    ],
  ],
  [
    '100.64.0.0/10',
    PRIV,
    ['100.64.0.0', '100.100.1.1', '100.127.255.255'],
    [
      ['100.63.255.255', P],
      ['100.128.0.0', P],
    ],
  ],
  [
    '127.0.0.0/8',
    PRIV,
    ['127.0.0.0', '127.0.0.1', '127.255.255.255'],
    [
      ['126.255.255.255', P],
      ['128.0.0.0', P],
    ],
  ],
  [
    '169.254.0.0/16',
    LL,
    ['169.254.0.0', '169.254.169.254', '169.254.255.255'],
    [
      ['169.253.255.255', P],
      ['169.255.0.0', P],
    ],
  ],
  [
    '172.16.0.0/12',
    PRIV,
    ['172.16.0.0', '172.20.1.1', '172.31.255.255'],
    [
      ['172.15.255.255', P],
      ['172.32.0.0', P],
    ],
  ],
  [
    '192.0.0.0/24',
    S,
    ['192.0.0.11', '192.0.0.128', '192.0.0.255'],
    [
      ['191.255.255.255', P],
      ['192.0.1.0', P],
    ],
  ],
  [
    '192.0.0.0/29',
    S,
    ['192.0.0.0', '192.0.0.7'],
    [
      ['191.255.255.255', P],
      ['192.0.0.8', S],
    ],
  ],
  [
    '192.0.0.8/32',
    S,
    ['192.0.0.8'],
    [
      ['192.0.0.7', S],
      ['192.0.0.9', S],
    ],
  ],
  [
    '192.0.0.9/32',
    S,
    ['192.0.0.9'],
    [
      ['192.0.0.8', S],
      ['192.0.0.10', S],
    ],
  ],
  [
    '192.0.0.10/32',
    S,
    ['192.0.0.10'],
    [
      ['192.0.0.9', S],
      ['192.0.0.11', S],
    ],
  ],
  [
    '192.0.0.170/32',
    S,
    ['192.0.0.170'],
    [
      ['192.0.0.169', S],
      ['192.0.0.171', S],
    ],
  ],
  [
    '192.0.0.171/32',
    S,
    ['192.0.0.171'],
    [
      ['192.0.0.170', S],
      ['192.0.0.172', S],
    ],
  ],
  [
    '192.0.2.0/24',
    S,
    ['192.0.2.0', '192.0.2.1', '192.0.2.255'],
    [
      ['192.0.1.255', P],
      ['192.0.3.0', P],
    ],
  ],
  [
    '192.31.196.0/24',
    S,
    ['192.31.196.0', '192.31.196.255'],
    [
      ['192.31.195.255', P],
      ['192.31.197.0', P],
    ],
  ],
  [
    '192.52.193.0/24',
    S,
    ['192.52.193.0', '192.52.193.255'],
    [
      ['192.52.192.255', P],
      ['192.52.194.0', P],
    ],
  ],
  [
    '192.88.99.0/24',
    S,
    ['192.88.99.0', '192.88.99.1', '192.88.99.255'],
    [
      ['192.88.98.255', P],
      ['192.88.100.0', P],
    ],
  ],
  [
    '192.88.99.2/32',
    S,
    ['192.88.99.2'],
    [
      ['192.88.99.1', S],
      ['192.88.99.3', S],
    ],
  ],
  [
    '192.168.0.0/16',
    PRIV,
    ['192.168.0.0', '192.168.1.1', '192.168.255.255'],
    [
      ['192.167.255.255', P],
      ['192.169.0.0', P],
    ],
  ],
  [
    '192.175.48.0/24',
    S,
    ['192.175.48.0', '192.175.48.255'],
    [
      ['192.175.47.255', P],
      ['192.175.49.0', P],
    ],
  ],
  [
    '198.18.0.0/15',
    S,
    ['198.18.0.0', '198.19.255.255'],
    [
      ['198.17.255.255', P],
      ['198.20.0.0', P],
    ],
  ],
  [
    '198.51.100.0/24',
    S,
    ['198.51.100.0', '198.51.100.7', '198.51.100.255'],
    [
      ['198.51.99.255', P],
      ['198.51.101.0', P],
    ],
  ],
  [
    '203.0.113.0/24',
    S,
    ['203.0.113.0', '203.0.113.10', '203.0.113.255'],
    [
      ['203.0.112.255', P],
      ['203.0.114.0', P],
    ],
  ],
  [
    '224.0.0.0/4',
    S,
    ['224.0.0.0', '224.0.0.251', '239.255.255.255'],
    [
      ['223.255.255.255', P],
      ['240.0.0.0', S],
    ],
  ],
  [
    '240.0.0.0/4',
    S,
    ['240.0.0.0', '250.1.2.3', '255.255.255.254'],
    [
      ['239.255.255.255', S],
      ['255.255.255.255', S],
    ],
  ],
  ['255.255.255.255/32', S, ['255.255.255.255'], [['255.255.255.254', S]]],

  [
    '::/0',
    S,
    ['::2', '1::', `1fff:ffff:ffff:${F}`, '4000::', 'e000::'],
    [
      ['2000::', P],
      ['3fff:ffff::', P],
    ],
  ],
  [
    '2000::/3',
    P,
    ['2000::', '2606:4700::1111', `3fff:ffff:ffff:${F}`],
    [
      [`1fff:ffff:ffff:${F}`, S],
      ['4000::', S],
    ],
  ],
  ['::/128', S, ['::'], [['::1', PRIV]]],
  [
    '::1/128',
    PRIV,
    ['::1', '0:0:0:0:0:0:0:1'],
    [
      ['::', S],
      ['::2', S],
    ],
  ],
  [
    '100::/64',
    S,
    ['100::', '100::1', `100::ffff:ffff:ffff:ffff`],
    [
      [`ff:ffff:ffff:${F}`, S],
      ['100:0:0:1::', S],
    ],
  ],
  ['100:0:0:1::/64', S, ['100:0:0:1::', '100::1:ffff:ffff:ffff:ffff'], [['100:0:0:2::', S]]],
  [
    '64:ff9b:1::/48',
    S,
    ['64:ff9b:1::', '64:ff9b:1::1', `64:ff9b:1:${F}`],
    [
      [`64:ff9b:0:${F}`, S],
      ['64:ff9b:2::', S],
    ],
  ],
  [
    '2001::/23',
    S,
    ['2001:100::', '2001:5::1', `2001:1ff:ffff:${F}`],
    [
      [`2000:ffff:ffff:${F}`, P],
      ['2001:200::', P],
    ],
  ],
  ['2001::/32', S, ['2001::', '2001::1', `2001:0:ffff:${F}`], [['2001:1::', S]]],
  ['2001:1::1/128', S, ['2001:1::1'], [['2001:1::', S]]],
  ['2001:1::2/128', S, ['2001:1::2'], [['2001:1::4', S]]],
  ['2001:1::3/128', S, ['2001:1::3'], [['2001:1::4', S]]],
  [
    '2001:2::/48',
    S,
    ['2001:2::', `2001:2:0:${F}`],
    [
      [`2001:1:ffff:${F}`, S],
      ['2001:2:1::', S],
    ],
  ],
  ['2001:3::/32', S, ['2001:3::', `2001:3:ffff:${F}`], [['2001:4::', S]]],
  [
    '2001:4:112::/48',
    S,
    ['2001:4:112::', `2001:4:112:${F}`],
    [
      [`2001:4:111:${F}`, S],
      ['2001:4:113::', S],
    ],
  ],
  [
    '2001:10::/28',
    S,
    ['2001:10::', `2001:1f:ffff:${F}`],
    [
      [`2001:f:ffff:${F}`, S],
      ['2001:20::', S],
    ],
  ],
  ['2001:20::/28', S, ['2001:20::', `2001:2f:ffff:${F}`], [['2001:30::', S]]],
  ['2001:30::/28', S, ['2001:30::', `2001:3f:ffff:${F}`], [['2001:40::', S]]],
  [
    '2001:db8::/32',
    S,
    ['2001:db8::', '2001:db8::1', `2001:db8:ffff:${F}`],
    [
      [`2001:db7:ffff:${F}`, P],
      ['2001:db9::', P],
    ],
  ],
  [
    '2002::/16',
    S,
    ['2002::', '2002:7f00:1::1', `2002:ffff:ffff:${F}`],
    [
      [`2001:ffff:ffff:${F}`, P],
      ['2003::', P],
    ],
  ],
  [
    '2620:4f:8000::/48',
    S,
    ['2620:4f:8000::', `2620:4f:8000:${F}`],
    [
      [`2620:4f:7fff:${F}`, P],
      ['2620:4f:8001::', P],
    ],
  ],
  [
    '3fff::/20',
    S,
    ['3fff::', `3fff:fff:ffff:${F}`],
    [
      [`3ffe:ffff:ffff:${F}`, P],
      ['3fff:1000::', P],
    ],
  ],
  [
    '5f00::/16',
    S,
    ['5f00::', `5f00:ffff:ffff:${F}`],
    [
      [`5eff:ffff:ffff:${F}`, S],
      ['5f01::', S],
    ],
  ],
  [
    'fc00::/7',
    PRIV,
    ['fc00::', 'fd12:3456::1', `fdff:ffff:ffff:${F}`],
    [
      [`fbff:ffff:ffff:${F}`, S],
      ['fe00::', S],
    ],
  ],
  [
    'fe80::/10',
    LL,
    ['fe80::', 'fe80::1%eth0', `febf:ffff:ffff:${F}`],
    [
      [`fe7f:ffff:ffff:${F}`, S],
      ['fec0::', S],
    ],
  ],
  [
    'fec0::/10',
    S,
    ['fec0::', 'fec0::1', `feff:ffff:ffff:${F}`],
    [
      [`febf:ffff:ffff:${F}`, LL],
      ['ff00::', S],
    ],
  ],
  ['ff00::/8', S, ['ff00::', 'ff02::1', `ffff:ffff:ffff:${F}`], [[`feff:ffff:ffff:${F}`, S]]],
];

/** The two forms carrying an IPv4 address a host reaches: judged by that address, at their edges too. */
const EMBEDDED: [range: string, cases: [string, Seen][], outside: [string, Seen][]][] = [
  [
    '::ffff:0:0/96',
    [
      ['::ffff:0:0', S],
      ['::ffff:127.0.0.1', PRIV],
      ['::ffff:7f00:1', PRIV],
      ['::ffff:10.0.0.1', PRIV],
      ['::ffff:169.254.169.254', LL],
      ['::ffff:192.0.2.1', S],
      ['::ffff:203.0.113.9', S],
      ['::ffff:8.8.8.8', P],
      ['::ffff:255.255.255.255', S],
    ],
    [
      ['::fffe:ffff:ffff', S],
      ['::1:0:0:0', S],
    ],
  ],
  [
    '64:ff9b::/96',
    [
      ['64:ff9b::', S],
      ['64:ff9b::127.0.0.1', PRIV],
      ['64:ff9b::a9fe:a9fe', LL],
      ['64:ff9b::198.51.100.1', S],
      ['64:ff9b::8.8.8.8', P],
      ['64:ff9b::ffff:ffff', S],
    ],
    [
      [`64:ff9a:ffff:ffff:${F}`, S],
      ['64:ff9b:0:0:0:1::', S],
    ],
  ],
];

/** What the two settings make of an address of this kind: refused with private URLs off, and on. */
function expectKind(address: string, kind: Seen): void {
  const off = refusedAddress(address, false);
  const on = refusedAddress(address, true);
  const want = {
    public: [false, false],
    private: [true, false],
    'link-local': [true, true],
    special: [true, true],
  }[kind];
  assert.deepEqual([!!off, !!on], want, `${address} as ${kind}: ${off ?? on ?? 'allowed'}`);
  if (kind === 'link-local') assert.match(off!, /^a link-local address/, address);
  if (kind === 'special') assert.match(off!, /^a special-purpose address/, address);
  if (kind === 'private') assert.match(off!, /^a private or loopback address/, address);
}

describe('webhook targets (SSRF): the IANA special-purpose ranges', () => {
  it('covers every range of the tables, each once', () => {
    const tested = [...CASES.map((c) => c[0]), ...EMBEDDED.map((c) => c[0])].sort();
    const declared = [...IPV4_RANGES, ...IPV6_RANGES].map((r) => r[0]).sort();
    assert.deepEqual(tested, declared);
  });

  for (const [range, kind, inside, outside] of CASES) {
    it(`${range}: ${kind} inside, not beyond its edges`, () => {
      for (const address of inside) {
        assert.ok(classify(address).what.endsWith(`, ${range}`), `${address}: ${classify(address).what}`);
        expectKind(address, kind);
      }
      for (const [address, there] of outside) {
        assert.ok(!classify(address).what.endsWith(`, ${range}`), `${address}: ${classify(address).what}`);
        expectKind(address, there);
      }
    });
  }

  for (const [range, cases, outside] of EMBEDDED) {
    it(`${range}: judged by the IPv4 address it carries`, () => {
      for (const [address, kind] of cases) {
        assert.ok(classify(address).what.endsWith(`, ${range}`), `${address}: ${classify(address).what}`);
        expectKind(address, kind);
      }
      for (const [address, kind] of outside) {
        assert.ok(!classify(address).what.endsWith(`, ${range}`), address);
        expectKind(address, kind);
      }
    });
  }

  it('the addresses the security review found accepted are refused, in any spelling', () => {
    for (const address of [
      '192.0.2.1',
      '198.51.100.1',
      '203.0.113.1',
      '::127.0.0.1',
      '::7f00:1',
      '64:ff9b:1::7f00:1',
      '2002:7f00:1::',
      'fec0::1',
      '100::1',
      '2001::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '0.0.0.0',
      '::',
    ])
      expectKind(address, S);
    for (const address of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:2800:220:1:248:1893:25c8:1946', '2a00:1450::1'])
      expectKind(address, P);
  });

  it('URLs: https required unless private URLs are allowed, no credentials, literal addresses checked', () => {
    assert.match(refusedUrl('http://example.com/', false)!, /https/);
    assert.equal(refusedUrl('http://example.com/', true), undefined);
    assert.equal(refusedUrl('https://example.com/', false), undefined);
    assert.ok(refusedUrl('https://user:pw@example.com/', false));
    assert.ok(refusedUrl('not a url', true));
    // The URL parser's own spellings of an address: decimal, hexadecimal, IPv4-compatible.
    for (const url of ['https://2130706433/', 'https://0x7f.1/', 'https://[::127.0.0.1]/', 'https://[::ffff:7f00:1]/'])
      assert.ok(refusedUrl(url, false), url);
    assert.match(refusedUrl('https://[::127.0.0.1]/', true)!, /special-purpose/);
    assert.equal(refusedUrl('http://127.0.0.1:8080/', true), undefined);
    assert.match(refusedUrl('http://[fe80::1]/', true)!, /link-local/);
    assert.match(refusedUrl('http://192.0.2.1/', true)!, /documentation/);
  });
});
