import { layout } from './html.js';

/** RATE_LIMIT_AUTH on a page: a person is reading, so a page, not JSON (PRODUCT §8). */
export function tooManyRequestsPage(retryAfterS: number): string {
  const wait =
    Number.isFinite(retryAfterS) && retryAfterS > 0
      ? `${retryAfterS} second${retryAfterS === 1 ? '' : 's'}`
      : 'a minute';
  return layout(
    'Too many requests',
    `<h1>Too many requests</h1>
<p class="error" role="alert">Too many sign-in requests came from your network in the last minute.</p>
<p>Wait ${wait}, then reload this page.</p>`,
  );
}

/** The database (or Redis) is down: nothing the person did wrong; the same request later will do. */
export function unavailablePage(): string {
  return layout(
    'Temporarily unavailable',
    `<h1>Temporarily unavailable</h1>
<p class="error" role="alert">The service cannot be reached right now. Nothing you entered was kept.</p>
<p>Wait a moment, then reload this page.</p>`,
  );
}
