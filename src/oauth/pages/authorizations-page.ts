import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { withTransaction } from '../../db/tx.js';
import { authorizationsPage as view } from './authorizations-view.js';
import { disconnect, listConnections } from '../grants/connections.js';
import { findClient } from '../grants/clients.js';
import { csrfMatches, loginCsrfToken } from './csrf.js';
import { PATHS } from '../../auth/endpoints.js';
import { single } from './form.js';
import { sendPage } from './html.js';
import { loginPage } from './pages.js';
import { currentSession, SESSION_COOKIE, type Session } from './session.js';
import { submitSignIn } from '../steps/sign-in-form.js';

const LOGIN = `${PATHS.authorizations}/login`;

/**
 * Connected applications (PRODUCT §8): the signed-in owner sees each client holding live tokens
 * for them and can end its access. The login form comes first when there is no session, and
 * brings the owner back here. Every POST is CSRF-checked and answered with a 303.
 */
export async function authorizationsPage(app: FastifyInstance): Promise<void> {
  const db = app.database.db;
  const session = (request: FastifyRequest) => currentSession(db, request.cookies[SESSION_COOKIE], app.clock());

  function showLogin(request: FastifyRequest, reply: FastifyReply, status = 200, error?: string, login?: string) {
    const csrf = loginCsrfToken(request, reply, app.config);
    return sendPage(
      reply,
      status,
      loginPage({ action: LOGIN, csrf, clientName: 'your connected applications', error, login }),
    );
  }

  async function showList(reply: FastifyReply, s: Session, status = 200, error?: string, revokedId?: string) {
    const connections = await listConnections(db, s, app.clock());
    // The confirmation after a revocation (?revoked=CLIENT_ID): only while that client has no access.
    const revoked =
      revokedId !== undefined && !connections.some((c) => c.clientId === revokedId)
        ? (await findClient(db, revokedId))?.name
        : undefined;
    return sendPage(reply, status, view({ action: PATHS.authorizations, csrf: s.csrf, connections, error, revoked }));
  }

  app.get(PATHS.authorizations, async (request, reply) => {
    const s = await session(request);
    return s ? showList(reply, s, 200, undefined, single(request.query, 'revoked')) : showLogin(request, reply);
  });

  app.post(LOGIN, async (request, reply) => {
    const outcome = await submitSignIn(app, request, reply);
    if (!outcome.ok) return showLogin(request, reply, outcome.status, outcome.error, outcome.login);
    return reply.redirect(PATHS.authorizations, 303);
  });

  app.post(PATHS.authorizations, async (request, reply) => {
    const s = await session(request);
    // Signed out meanwhile: the page shows the login form.
    if (!s) return reply.redirect(PATHS.authorizations, 303);
    if (!csrfMatches(s.csrf, single(request.body, 'csrf')))
      return showList(reply, s, 403, 'The form expired. Please try again.');
    const clientId = single(request.body, 'revoke');
    if (!clientId) return showList(reply, s, 400, 'Choose the application to revoke.');
    await withTransaction(app.database, (trx) => disconnect(trx, s, clientId));
    return reply.redirect(`${PATHS.authorizations}?${new URLSearchParams({ revoked: clientId })}`, 303);
  });
}
