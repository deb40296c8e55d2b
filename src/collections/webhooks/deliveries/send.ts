import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveChecked, RefusedTarget } from '../address.js';

export const SEND_TIMEOUT_MS = 10_000;
/** Only the start of an answer is read (for lastError); the rest is dropped. */
const MAX_READ = 4096;

export interface Sent {
  /** The HTTP status, or null when no answer came (refused target, network error, timeout). */
  status: number | null;
  /** Retry-After in ms, when the receiver sent one. */
  retryAfterMs?: number;
  error?: string;
  /** Why no answer came (status null), for the metrics. */
  failure?: 'refused' | 'timeout' | 'network' | 'purged';
}

const DAY = /^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,? /i;

/**
 * A receiver's Retry-After (seconds, or an HTTP-date) in ms from now; undefined when absent or
 * unreadable. Whatever it says is held to a finite, non-negative number here; how long the worker
 * actually waits is capped by the retry schedule (attempt.ts).
 */
export function retryAfter(v: string | string[] | undefined, now: number): number | undefined {
  const raw = (Array.isArray(v) ? v[0] : v)?.trim();
  if (!raw) return undefined;
  // An HTTP-date in any of its three forms starts with the day's name; Date.parse alone would read '-5' as a year.
  const ms = /^\d+$/.test(raw) ? Number(raw) * 1000 : DAY.test(raw) ? Date.parse(raw) - now : NaN;
  if (Number.isNaN(ms)) return undefined;
  return Math.min(Math.max(0, ms), Number.MAX_SAFE_INTEGER);
}

const agents = new Map<string, http.Agent>();
const AGENTS = 256;

/**
 * Connections are kept alive per origin and checked address: a socket is only ever connected to
 * an address that passed the check (the agent's lookup answers only that address), and a name
 * that resolves elsewhere later gets another agent. Idle sockets close after 4 s; the least
 * recently used agents beyond 256 are closed.
 */
function agentFor(u: URL, target: { address: string; family: number }): http.Agent {
  const key = `${u.protocol}//${u.host}|${target.address}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key);
  } else {
    const lookup: LookupFunction = (_host, opts, cb) => {
      if ((opts as { all?: boolean }).all)
        (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
      else cb(null, target.address, target.family);
    };
    const options = { keepAlive: true, maxSockets: 8, maxFreeSockets: 8, timeout: 4000, lookup };
    agent = u.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    if (agents.size >= AGENTS) {
      const [oldest, old] = agents.entries().next().value!;
      agents.delete(oldest);
      old.destroy();
    }
  }
  agents.set(key, agent);
  return agent;
}

/**
 * POSTs one delivery. The host is resolved and every address checked (address.ts), then the
 * connection goes to the checked address (a custom lookup, kept with its agent), so a second resolution cannot swap
 * in another one. TLS still verifies the certificate against the host name. Redirects are not
 * followed: a 3xx is an answer like any other non-2xx.
 */
export async function sendDelivery(
  url: string,
  body: string,
  headers: Record<string, string>,
  allowPrivate: boolean,
): Promise<Sent> {
  let target;
  try {
    target = await resolveChecked(url, allowPrivate);
  } catch (err) {
    if (err instanceof RefusedTarget) return { status: null, error: `refused: ${err.message}`, failure: 'refused' };
    throw err;
  }
  const u = new URL(url);
  const lib = u.protocol === 'https:' ? https : http;
  return new Promise<Sent>((resolve) => {
    let done = false;
    const finish = (s: Sent) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(s);
    };
    const req = lib.request(
      u,
      {
        method: 'POST',
        agent: agentFor(u, target),
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'fsm-webhooks/1',
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < MAX_READ) chunks.push(c.subarray(0, MAX_READ - size));
          size += c.length;
          // Enough read: the rest of a large answer is not waited for.
          if (size >= MAX_READ) res.destroy();
        });
        const answer = () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8').slice(0, 200);
          finish({
            status,
            retryAfterMs: retryAfter(res.headers['retry-after'], Date.now()),
            error: status >= 200 && status < 300 ? undefined : `HTTP ${status}${text ? `: ${text}` : ''}`,
          });
        };
        res.on('end', answer);
        res.on('close', answer);
        res.on('error', answer);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ status: null, error: `no answer within ${SEND_TIMEOUT_MS / 1000} s`, failure: 'timeout' });
    }, SEND_TIMEOUT_MS);
    req.on('error', (err) =>
      finish({
        status: null,
        error: `network: ${(err as NodeJS.ErrnoException).code ?? err.message}`.slice(0, 200),
        failure: 'network',
      }),
    );
    req.end(body);
  });
}
