import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GRANTS } from '../src/oauth/grants/model.js';
import {
  authorizeWithInject,
  codeUrl,
  createOAuthClient,
  createTenant,
  createTestApp,
  DIALECTS,
  formAction,
  formEncode,
  injectBrowser,
  inputValue,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';

const CB = 'http://127.0.0.1:9/cb';
const base = { response_type: 'code', scope: 'default' };
const ISSUER = 'https://auth.example.test';

/** The answer the client's redirect URI receives, checked for RFC 9207's iss. */
function answered(res: { statusCode: number; headers: Record<string, unknown> }, error?: string): URL {
  assert.equal(res.statusCode, 302);
  const loc = new URL(String(res.headers.location));
  assert.equal(loc.origin + loc.pathname, CB);
  assert.equal(loc.searchParams.get('iss'), ISSUER, 'iss on every redirect back to the client');
  assert.equal(loc.searchParams.getAll('iss').length, 1);
  if (error) assert.equal(loc.searchParams.get('error'), error);
  return loc;
}

for (const dialect of DIALECTS) {
  describe(`discovery, iss and uncertified clients (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let clientId: string;
    const owner = () => ({ login: tenant.login, password: tenant.password });

    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitAuth = 0; // limits have their own tests
      t.config.publicUrl = ISSUER; // as PUBLIC_URL behind a proxy: the issuer is the public origin
      tenant = await createTenant(t);
      ({ clientId } = await createOAuthClient(t.database, { redirectUris: [CB] }));
    });
    after(() => t?.close());

    test('RFC 8414 metadata: every member, built from the public URL, public, JSON with the spec headers', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
      assert.equal(res.statusCode, 200, 'no token, no X-Version');
      assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['x-version'], '1.0');
      const m = res.json();
      assert.deepEqual(m, {
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/oauth2/code`,
        token_endpoint: `${ISSUER}/oauth2/token`,
        revocation_endpoint: `${ISSUER}/oauth2/revoke`,
        introspection_endpoint: `${ISSUER}/oauth2/introspect`,
        scopes_supported: ['default'],
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        // `none`: public clients (PRODUCT §13), which cannot introspect.
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        service_documentation: `${ISSUER}/docs`,
      });
      assert.deepEqual(m.grant_types_supported, GRANTS, 'the grants the token endpoint accepts');
      // Another public URL, another issuer: nothing is hard-coded.
      t.config.publicUrl = 'http://127.0.0.1:8080';
      try {
        const local = (await t.app.inject('/.well-known/oauth-authorization-server')).json();
        assert.equal(local.issuer, 'http://127.0.0.1:8080');
        assert.equal(local.token_endpoint, 'http://127.0.0.1:8080/oauth2/token');
      } finally {
        t.config.publicUrl = ISSUER;
      }
    });

    test('the metadata matches the endpoints: each advertised endpoint is served here, in its own format', async () => {
      const m = (await t.app.inject('/.well-known/oauth-authorization-server')).json();
      const path = (url: string) => {
        assert.ok(url.startsWith(`${m.issuer}/`), url);
        return url.slice(m.issuer.length);
      };
      // The authorization endpoint: a browser page (error page for an unknown client), never JSON.
      const authz = await t.app.inject(
        codeUrl({ ...base, client_id: 'nope' }).replace('/oauth2/code', path(m.authorization_endpoint)),
      );
      assert.equal(authz.statusCode, 400);
      assert.match(String(authz.headers['content-type']), /^text\/html/);
      // The three client endpoints: RFC 6749 §5.2 errors for a client that does not authenticate.
      for (const key of ['token_endpoint', 'revocation_endpoint', 'introspection_endpoint']) {
        const res = await t.app.inject({
          method: 'POST',
          url: path(m[key]),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: formEncode({
            token: 'x',
            grant_type: 'refresh_token',
            refresh_token: 'x',
            client_id: clientId,
            client_secret: 'wrong',
          }),
        });
        assert.equal(res.statusCode, 401, key);
        assert.equal(res.json().error, 'invalid_client', key);
        assert.match(String(res.headers['www-authenticate']), /^Basic /, key);
      }
      // The documentation it names is served.
      assert.equal((await t.app.inject(path(m.service_documentation))).statusCode, 200);
    });

    test('iss (RFC 9207) on the code and on every error redirect: protocol error, denial, prompt=none', async () => {
      const browser = injectBrowser(t.app);
      const ok = await authorizeWithInject(browser, { client_id: clientId, state: 's1' }, owner());
      answered({ statusCode: ok.status, headers: { location: ok.location.toString() } });
      assert.ok(ok.code);
      assert.equal(ok.location.searchParams.get('state'), 's1');
      const denied = await authorizeWithInject(browser, { client_id: clientId, state: 's2' }, owner(), {
        decision: 'deny',
      });
      assert.equal(
        answered(
          { statusCode: denied.status, headers: { location: denied.location.toString() } },
          'access_denied',
        ).searchParams.get('state'),
        's2',
      );
      answered(await t.app.inject(codeUrl({ ...base, client_id: clientId, scope: 'users.read' })), 'invalid_scope');
      answered(
        await t.app.inject(codeUrl({ ...base, client_id: clientId, response_type: 'token' })),
        'unsupported_response_type',
      );
      answered(await t.app.inject(codeUrl({ ...base, client_id: clientId, prompt: 'none' })), 'login_required');
      answered(
        await browser.request('GET', codeUrl({ ...base, client_id: clientId, prompt: 'none' })),
        'consent_required',
      );
    });

    test('an uncertified client is refused at /oauth2/code with unauthorized_client and iss, before any login or consent page', async () => {
      const { clientId: uncertified } = await createOAuthClient(t.database, { redirectUris: [CB], certified: false });
      const stranger = await t.app.inject(codeUrl({ ...base, client_id: uncertified, state: 'u1' }));
      const loc = answered(stranger, 'unauthorized_client');
      assert.equal(loc.searchParams.get('state'), 'u1');
      assert.equal(stranger.headers['set-cookie'], undefined, 'no login form (no pre-session CSRF cookie)');
      // A signed-in owner is not shown the consent page either.
      const browser = injectBrowser(t.app);
      await authorizeWithInject(browser, { client_id: clientId }, owner());
      answered(await browser.request('GET', codeUrl({ ...base, client_id: uncertified })), 'unauthorized_client');
      // Nor do the forms' POSTs get past it (a form opened before the certification was withdrawn).
      const page = await browser.request('GET', codeUrl({ ...base, client_id: clientId, prompt: 'consent' }));
      const action = formAction(page.body).replace(clientId, uncertified);
      answered(
        await browser.request('POST', action, { csrf: inputValue(page.body, 'csrf'), decision: 'allow' }),
        'unauthorized_client',
      );
      const codes = await t.database.db
        .selectFrom('oauth_codes')
        .select('id')
        .where('client_id', '=', uncertified)
        .execute();
      assert.equal(codes.length, 0);
      // Still an error page, not a redirect, when the redirect_uri is not the client's.
      const bad = await t.app.inject(
        codeUrl({ ...base, client_id: uncertified, redirect_uri: 'https://evil.example/cb' }),
      );
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.headers.location, undefined);
    });

    test('GET / is a JSON index pointing at the documentation, the OpenAPI document, the metadata and the health checks', async () => {
      const res = await t.app.inject('/');
      assert.equal(res.statusCode, 200, 'no token, no X-Version');
      assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8');
      const links = res.json().links;
      assert.deepEqual(links, {
        documentation: '/docs',
        openapi: '/openapi.json',
        authorizationServerMetadata: '/.well-known/oauth-authorization-server',
        health: '/healthz',
        readiness: '/readyz',
      });
      for (const url of [links.documentation, links.openapi, links.authorizationServerMetadata]) {
        assert.equal((await t.app.inject(url)).statusCode, 200, url);
      }
    });
  });
}
