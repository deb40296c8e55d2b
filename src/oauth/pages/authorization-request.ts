import type { Executor } from '../../db/tx.js';
import { findClient, type OAuthClient } from '../grants/clients.js';
import { single } from './form.js';
import { authorizationResponse, resolveRedirectUri } from '../grants/redirect-uri.js';
import { checkCertified } from '../steps/check-certified.js';

/** A validated `GET /oauth2/code` request, re-validated from the URL on every POST of its pages. */
export interface AuthorizationRequest {
  client: OAuthClient;
  /** Where the answer goes. */
  redirectUri: string;
  /** Stored on the code only when the client sent it (RFC 6749 §4.1.3). */
  sentRedirectUri?: string;
  state?: string;
  offline: boolean;
  codeChallenge?: string;
  prompt?: 'login' | 'consent' | 'none';
}

export type Checked =
  | { ok: true; request: AuthorizationRequest }
  /** Not trustworthy enough to redirect to: show a page (RFC 6749 §4.1.2.1). */
  | { ok: false; page: string }
  | { ok: false; redirect: string };

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** The checks after client and redirect URI: each a reason to answer the client with `error`. */
function protocolError(q: Record<string, unknown>, client: OAuthClient): [string, string] | undefined {
  const repeated = Object.keys(q).find((k) => Array.isArray(q[k]));
  if (repeated !== undefined) return ['invalid_request', `parameter ${repeated.slice(0, 40)} is repeated`];
  const responseType = single(q, 'response_type');
  if (responseType === undefined) return ['invalid_request', 'response_type is required'];
  if (responseType !== 'code') return ['unsupported_response_type', 'response_type must be code'];
  if (single(q, 'scope') !== 'default') return ['invalid_scope', 'scope must be default'];
  const challenge = single(q, 'code_challenge');
  const method = single(q, 'code_challenge_method');
  if (challenge === undefined && method !== undefined)
    return ['invalid_request', 'code_challenge_method without code_challenge'];
  if (challenge !== undefined && method !== 'S256') return ['invalid_request', 'code_challenge_method must be S256'];
  if (challenge !== undefined && !S256_CHALLENGE.test(challenge))
    return ['invalid_request', 'code_challenge must be a base64url SHA-256'];
  // A public client cannot prove who it is: PKCE binds the code to the app that asked (RFC 8252 §8.1).
  if (client.public && challenge === undefined)
    return ['invalid_request', 'a public client must send a PKCE code_challenge (S256)'];
  const accessType = single(q, 'access_type');
  if (accessType !== undefined && accessType !== 'online' && accessType !== 'offline')
    return ['invalid_request', 'access_type must be online or offline'];
  const prompt = single(q, 'prompt');
  if (prompt !== undefined && !['login', 'consent', 'none'].includes(prompt))
    return ['invalid_request', 'prompt must be login, consent or none'];
  return undefined;
}

/** `issuer` goes into every redirect back to the client (RFC 9207), errors included. */
export async function checkAuthorizationRequest(
  db: Executor,
  q: Record<string, unknown>,
  issuer: string,
): Promise<Checked> {
  const clientId = single(q, 'client_id');
  const client = clientId === undefined ? undefined : await findClient(db, clientId);
  if (!client || client.revoked) return { ok: false, page: 'The application is unknown.' };
  const sent = q.redirect_uri === undefined ? undefined : (single(q, 'redirect_uri') ?? '');
  const redirectUri = resolveRedirectUri(client.redirectUris, sent, client.public);
  if (redirectUri === undefined) {
    return {
      ok: false,
      page:
        sent === undefined
          ? 'The application must say where to return (redirect_uri).'
          : 'The return address (redirect_uri) is not registered for this application.',
    };
  }
  const state = single(q, 'state');
  const problem = checkCertified(client) ?? protocolError(q, client);
  if (problem)
    return {
      ok: false,
      redirect: authorizationResponse(redirectUri, issuer, { error: problem[0], error_description: problem[1], state }),
    };
  return {
    ok: true,
    request: {
      client,
      redirectUri,
      sentRedirectUri: sent,
      state,
      offline: single(q, 'access_type') === 'offline',
      codeChallenge: single(q, 'code_challenge'),
      prompt: single(q, 'prompt') as AuthorizationRequest['prompt'],
    },
  };
}
