import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkAuthorizationRequest, type AuthorizationRequest } from './authorization-request.js';
import { issueCode } from '../grants/codes.js';
import { forgetConsent, rememberConsent, rememberedConsent } from '../../auth/consents.js';
import { csrfMatches, LOGIN_CSRF_COOKIE, loginCsrfToken } from './csrf.js';
import { all, single } from './form.js';
import { sendPage } from './html.js';
import { consentPage, errorPage, loginPage } from './pages.js';
import { authorizationResponse } from '../grants/redirect-uri.js';
import {
  cookieOptions,
  currentSession,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  startSession,
  type Session,
} from './session.js';
import { signIn } from './sign-in.js';
import { countSignInFailure } from '../../http/metrics.js';
import { consentContext } from './consent-context.js';
import { signOutRoute, signOutUrl } from './sign-out.js';

/**
 * The authorization request travels in the URL of every form and redirect, and is re-checked each
 * time. Re-serialized, so what we echo into pages and Location headers is always well-formed.
 */
const rawQuery = (request: FastifyRequest) => {
  const i = request.url.indexOf('?');
  return i < 0 ? '' : new URLSearchParams(request.url.slice(i + 1)).toString();
};

/**
 * After signing in, prompt=login is satisfied: drop it, or the next step would ask for the login
 * again. prompt=consent stays: the consent page must still be shown, remembered consent or not.
 */
function withoutPrompt(query: string): string {
  const p = new URLSearchParams(query);
  if (p.get('prompt') === 'login') p.delete('prompt');
  return p.toString();
}

export async function codeEndpoint(app: FastifyInstance): Promise<void> {
  const db = app.database.db;
  signOutRoute(app);

  /** Validates the request in the URL; on failure answers (page or redirect) and returns undefined. */
  async function authorizationRequest(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<AuthorizationRequest | undefined> {
    const checked = await checkAuthorizationRequest(db, request.query as Record<string, unknown>, app.config.publicUrl);
    if (checked.ok) return checked.request;
    if ('page' in checked) sendPage(reply, 400, errorPage(checked.page));
    else reply.redirect(checked.redirect, 302);
    return undefined;
  }

  function showLogin(
    request: FastifyRequest,
    reply: FastifyReply,
    ar: AuthorizationRequest,
    status = 200,
    error?: string,
    login?: string,
  ) {
    const csrf = loginCsrfToken(request, reply, app.config);
    return sendPage(
      reply,
      status,
      loginPage({ action: `/oauth2/login?${rawQuery(request)}`, csrf, clientName: ar.client.name, error, login }),
    );
  }

  async function showConsent(
    request: FastifyRequest,
    reply: FastifyReply,
    ar: AuthorizationRequest,
    session: Session,
    status = 200,
    error?: string,
  ) {
    const { owner, publisher } = await consentContext(db, session, ar.client.clientId);
    return sendPage(
      reply,
      status,
      consentPage({
        action: `/oauth2/consent?${rawQuery(request)}`,
        csrf: session.csrf,
        clientName: ar.client.name,
        publisher,
        owner,
        signOutUrl: signOutUrl(rawQuery(request), session.csrf),
        permissions: ar.client.permissions,
        choice: ar.client.allowPermissionChoice,
        publicClient: ar.client.public,
        error,
      }),
    );
  }

  const session = (request: FastifyRequest) => currentSession(db, request.cookies[SESSION_COOKIE], app.clock());
  const answer = (reply: FastifyReply, ar: AuthorizationRequest, params: Record<string, string>) =>
    reply.redirect(authorizationResponse(ar.redirectUri, app.config.publicUrl, { ...params, state: ar.state }), 302);

  /** A code for the signed-in owner, answered to the client. */
  async function grant(
    reply: FastifyReply,
    ar: AuthorizationRequest,
    s: Session,
    permissions: string[],
    offline: boolean,
  ) {
    const code = await issueCode(
      db,
      {
        clientId: ar.client.clientId,
        userId: s.userId,
        accountId: s.accountId,
        permissions,
        redirectUri: ar.sentRedirectUri,
        codeChallenge: ar.codeChallenge,
        offline,
      },
      app.clock(),
    );
    return answer(reply, ar, { code });
  }

  app.get('/oauth2/code', async (request, reply) => {
    const ar = await authorizationRequest(request, reply);
    if (!ar) return reply;
    const s = ar.prompt === 'login' ? undefined : await session(request);
    // Consent already given for what the client asks now: no page, unless prompt=consent asks for one.
    const remembered = s && ar.prompt !== 'consent' ? await rememberedConsent(db, s, ar.client) : undefined;
    // Remembered only when the owner did not tick reauthenticate, so access_type=offline stands.
    if (s && remembered) return grant(reply, ar, s, remembered, ar.offline);
    // prompt=none: the client asks for an answer without pages.
    if (ar.prompt === 'none') return answer(reply, ar, { error: s ? 'consent_required' : 'login_required' });
    return s ? showConsent(request, reply, ar, s) : showLogin(request, reply, ar);
  });

  app.post('/oauth2/login', async (request, reply) => {
    const ar = await authorizationRequest(request, reply);
    if (!ar) return reply;
    if (!csrfMatches(request.cookies[LOGIN_CSRF_COOKIE], single(request.body, 'csrf'))) {
      return showLogin(request, reply, ar, 403, 'The form expired. Please sign in again.');
    }
    const login = single(request.body, 'login') ?? '';
    const result = await signIn(db, login, single(request.body, 'password') ?? '', app.clock());
    if (!result.ok) countSignInFailure(result.reason);
    if (!result.ok) {
      return result.reason === 'locked'
        ? showLogin(request, reply, ar, 429, 'Too many failed sign-ins for this login. Try again in 15 minutes.', login)
        : showLogin(request, reply, ar, 401, 'The login or password is incorrect.', login);
    }
    const token = await startSession(db, result, app.clock());
    reply.setCookie(SESSION_COOKIE, token, cookieOptions(app.config, SESSION_TTL_MS));
    return reply.redirect(`/oauth2/code?${withoutPrompt(rawQuery(request))}`, 303);
  });

  app.post('/oauth2/consent', async (request, reply) => {
    const ar = await authorizationRequest(request, reply);
    if (!ar) return reply;
    const s = await session(request);
    // Signed out meanwhile (expired, or user deleted): back to the start, which shows the login.
    if (!s) return reply.redirect(`/oauth2/code?${rawQuery(request)}`, 303);
    if (!csrfMatches(s.csrf, single(request.body, 'csrf')))
      return showConsent(request, reply, ar, s, 403, 'The form expired. Please decide again.');
    const decision = single(request.body, 'decision');
    if (decision === 'deny') {
      await forgetConsent(db, { accountId: s.accountId, userId: s.userId, clientId: ar.client.clientId });
      return answer(reply, ar, { error: 'access_denied', error_description: 'the owner denied access' });
    }
    if (decision !== 'allow') return showConsent(request, reply, ar, s, 400, 'Choose Allow or Deny.');
    const ticked = all(request.body, 'permissions');
    const permissions = ar.client.allowPermissionChoice
      ? ar.client.permissions.filter((p) => ticked.includes(p))
      : ar.client.permissions;
    if (permissions.length === 0)
      return showConsent(request, reply, ar, s, 400, 'Keep at least one permission, or choose Deny.');
    // "Ask me to sign in again" wins over the client's access_type=offline, and is not remembered
    // as consent: the next authorization shows this page again.
    const reauthenticate = single(request.body, 'reauthenticate') !== undefined;
    if (reauthenticate)
      await forgetConsent(db, { accountId: s.accountId, userId: s.userId, clientId: ar.client.clientId });
    else await rememberConsent(db, s, ar.client, permissions, app.clock());
    return grant(reply, ar, s, permissions, ar.offline && !reauthenticate);
  });
}
