import dns from 'node:dns/promises';
import net from 'node:net';
import { classify } from './ranges.js';

/**
 * Where a webhook may point (SSRF): only at public addresses. Every special-purpose range of the
 * IANA registries is refused (the tables in ranges.ts), link-local (cloud metadata such as
 * 169.254.169.254) always; WEBHOOKS_ALLOW_PRIVATE_URLS lets loopback and private ranges through.
 * Checked on the URL at creation and on every address the name resolves to at each attempt,
 * which then connects to the address checked.
 */
export function refusedAddress(address: string, allowPrivate: boolean): string | undefined {
  const { kind, what } = classify(address);
  if (kind === 'public' || (kind === 'private' && allowPrivate)) return undefined;
  if (kind === 'link-local') return `a link-local address (${what})`;
  if (kind === 'private') return `a private or loopback address (${what})`;
  return `a special-purpose address (${what})`;
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
