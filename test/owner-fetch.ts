import assert from 'node:assert/strict';
import { formAction, inputValue } from './helpers.js';

/**
 * The owner's part of the flow with plain fetch, as a browser would: a cookie jar, the login form
 * and the consent form. Returns the URL the client's redirect URI receives.
 */
export async function ownerApproves(
  authUrl: URL,
  owner: { login: string; password: string },
  decision: 'allow' | 'deny' = 'allow',
): Promise<URL> {
  const jar = new Map<string, string>();
  const go = async (url: string, form?: Record<string, string>) => {
    const res = await fetch(new URL(url, authUrl), {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form) : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return { status: res.status, location: res.headers.get('location'), body: await res.text() };
  };
  const login = await go(authUrl.toString());
  const signedIn = await go(formAction(login.body), { csrf: inputValue(login.body, 'csrf'), ...owner });
  assert.equal(signedIn.status, 303);
  const consent = await go(signedIn.location!);
  const answer = await go(formAction(consent.body), { csrf: inputValue(consent.body, 'csrf'), decision });
  assert.equal(answer.status, 302);
  return new URL(answer.location!);
}
