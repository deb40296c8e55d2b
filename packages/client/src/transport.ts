import type { Session } from './session.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** The first backoff; it doubles on each retry (default 250 ms). */
  baseDelayMs?: number;
  /** The longest wait before a retry (default 10 s); a longer `Retry-After` is answered, not waited for. */
  maxDelayMs?: number;
}

export interface TransportOptions {
  session: Session;
  retry?: RetryOptions;
  fetch?: (request: Request) => Promise<Response>;
  /** How waits happen (tests record them). */
  sleep?: (ms: number) => Promise<void>;
}

/** The answers worth repeating, with the same key: still running (409), unavailable (503), rate-limited (429). */
const RETRIED = new Set([409, 429, 503]);
export const API_VERSION = '1.0';

/** Seconds of a `Retry-After` (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(res: Response): number | undefined {
  const v = res.headers.get('retry-after');
  if (v === null) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/**
 * The one place every API request goes through: `X-Version`, the bearer token (refreshed on
 * expiry, and once after a 401), an `Idempotency-Key` on every write (the caller's, or one per
 * call; the same on each of its retries), and bounded retries on network errors, 409, 429 and 503.
 */
export function transport(opts: TransportOptions): (request: Request) => Promise<Response> {
  const { session } = opts;
  const send = opts.fetch ?? ((r: Request) => globalThis.fetch(r));
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const retries = opts.retry?.retries ?? 3;
  const base = opts.retry?.baseDelayMs ?? 250;
  const max = opts.retry?.maxDelayMs ?? 10_000;
  const backoff = (attempt: number) => Math.min(max, base * 2 ** attempt) * (0.5 + Math.random() / 2);

  return async (request: Request) => {
    request.headers.set('x-version', API_VERSION);
    if (request.method !== 'GET' && !request.headers.has('idempotency-key'))
      request.headers.set('idempotency-key', crypto.randomUUID());
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const token = await session.accessToken();
      const r = request.clone();
      r.headers.set('authorization', `Bearer ${token}`);
      let res: Response;
      try {
        res = await send(r);
      } catch (err) {
        // The answer was lost (connection reset, timeout): the key makes repeating a write safe.
        // Aborted by the caller: not a loss to repeat.
        if (attempt >= retries || request.signal.aborted) throw err;
        await sleep(backoff(attempt));
        continue;
      }
      if (res.status === 401 && !refreshed && session.canRefresh()) {
        refreshed = true;
        attempt--; // not a retry of the server's work: the request never ran
        await res.body?.cancel();
        await session.refresh(token);
        continue;
      }
      if (RETRIED.has(res.status) && attempt < retries) {
        const after = retryAfterSeconds(res);
        const delay = after === undefined ? backoff(attempt) : after * 1000;
        if (delay <= max) {
          await res.body?.cancel();
          await sleep(delay);
          continue;
        }
      }
      return res;
    }
  };
}
