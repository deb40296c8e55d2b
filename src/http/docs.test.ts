import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { browserSkip, launchBrowser } from '../../test/browser.js';
import { createTestApp, type TestApp } from '../../test/helpers.js';
import { registry } from '../collections/index.js';
import { ERRORS, VALIDATION } from '../errors.js';
import { authorizationServerMetadata } from '../oauth/endpoints/metadata.js';

describe('OpenAPI document and reference page', () => {
  let t: TestApp;
  let doc: any;
  before(async () => {
    t = await createTestApp('sqlite');
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200, 'public: no token, no X-Version');
    assert.match(String(res.headers['content-type']), /^application\/json/);
    doc = res.json();
  });
  after(() => t?.close());

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  });

  test('OAuth scope descriptions are plain text (Swagger UI shows them unrendered): no Markdown backticks', () => {
    const schemes = (doc as { components: { securitySchemes: Record<string, any> } }).components.securitySchemes;
    const scopes = Object.values(schemes.oauth2.flows as Record<string, { scopes: Record<string, string> }>).flatMap(
      (f) => Object.values(f.scopes),
    );
    assert.ok(scopes.length > 0);
    for (const s of scopes) assert.doesNotMatch(s, /[`*_[\]]/, s);
  });

  test('every $ref points at a component that exists', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"#\/components\/[^"]+"/g) ?? [];
    for (const r of new Set(refs)) {
      const [, , kind, name] = r.slice(8, -1).split('/');
      assert.ok(doc.components[kind]?.[name], r);
    }
  });

  test('covers every registered collection with its operations, schemas and fields', () => {
    for (const c of registry.list) {
      const N = c.name[0].toUpperCase() + c.name.slice(1);
      assert.ok(doc.paths[`/${c.name}`].get, c.name);
      // Read-only collections (events, deliveries) have GET alone; append-only ones (locations) GET and POST.
      assert.equal(
        Boolean(doc.paths[`/${c.name}`].patch && doc.paths[`/${c.name}`].delete),
        !c.readOnly && !c.appendOnly,
        c.name,
      );
      assert.equal(Boolean(doc.paths[`/${c.name}`].post), !c.createVia && !c.readOnly, `${c.name} POST`);
      assert.ok(doc.paths[`/${c.name}/{id}`].get);
      assert.equal(Boolean(doc.paths[`/${c.name}/{id}`].patch), !c.readOnly && !c.appendOnly, c.name);
      for (const [name, f] of Object.entries(c.fields)) {
        if (f.kind !== 'writeOnly') assert.ok(doc.components.schemas[N].properties[name], `${c.name}.${name} readable`);
        if (!f.readOnly) assert.ok(doc.components.schemas[`${N}Create`].properties[name], `${c.name}.${name} writable`);
        if (f.readOnly) assert.equal(doc.components.schemas[`${N}Create`].properties[name], undefined);
        if (f.required) assert.ok(doc.components.schemas[`${N}Create`].required.includes(name));
      }
      for (const action of Object.keys(c.actions ?? {})) {
        const at = c.actionDocs?.[action]?.on === 'item' ? `/${c.name}/{id}/${action}` : `/${c.name}/${action}`;
        // A GET action (a job's slots) is documented under GET.
        assert.ok(doc.paths[at]?.[c.getActions?.includes(action) ? 'get' : 'post'], `${c.name}/${action}`);
      }
    }
    assert.ok(doc.components.schemas.Users.properties.role.properties.name, 'association members with [*]');
    assert.equal(doc.components.schemas.UsersCreate.properties.newPassword.writeOnly, true);
    assert.equal(doc.components.schemas.Files.properties.downloadUrl.readOnly, true);
    // Shown in the create and rotateSecret answers only, but declared, so generated clients see it.
    assert.equal(doc.components.schemas.Webhooks.properties.secret.readOnly, true);
    assert.equal(doc.components.schemas.Users.properties.newPassword, undefined);
  });

  test('documents modifiers, headers, security, every error code, the upload and OAuth endpoints', () => {
    const list = doc.paths['/users'].get.parameters.map((p: any) => p.$ref.split('/').pop());
    assert.deepEqual(list, ['XVersion', 'XMethod', 'fields', 'where', 'sort', 'q', 'page', 'recordsPerPage']);
    assert.equal(doc.components.parameters.XVersion.required, true);
    const flow = doc.components.securitySchemes.oauth2.flows.authorizationCode;
    assert.match(flow.authorizationUrl, /\/oauth2\/code$/);
    assert.match(flow.tokenUrl, /\/oauth2\/token$/);
    assert.equal(doc.components.securitySchemes.bearer.scheme, 'bearer');
    const text = JSON.stringify(doc.components.responses);
    for (const e of Object.values(ERRORS))
      assert.ok(text.includes(`\`${e.code}\``) && doc.components.responses[`E${e.status}`], `code ${e.code}`);
    for (const v of Object.values(VALIDATION))
      assert.ok(doc.components.schemas.Error.properties.code.enum.includes(v.code), `code ${v.code}`);
    const upload = doc.paths['/files/upload'].post;
    assert.ok(upload.requestBody.content['multipart/form-data'].schema.properties.file);
    assert.ok(upload.responses['413']);
    assert.ok(doc.paths['/oauth2/code'].get && doc.paths['/oauth2/token'].post);
    assert.deepEqual(doc.paths['/oauth2/token'].post.security, [{}, { clientBasic: [] }]);
    // Every endpoint the RFC 8414 metadata advertises is documented, with its method.
    const meta = authorizationServerMetadata({ publicUrl: '' });
    assert.ok(doc.paths[meta.authorization_endpoint].get);
    for (const url of [meta.token_endpoint, meta.revocation_endpoint, meta.introspection_endpoint]) {
      assert.ok(doc.paths[url].post, url);
      assert.deepEqual(doc.paths[url].post.security, [{}, { clientBasic: [] }], url);
      assert.ok(doc.paths[url].post.responses['401'] && doc.paths[url].post.responses['429'], url);
    }
    assert.ok(doc.paths['/.well-known/oauth-authorization-server'].get);
    assert.ok(doc.paths['/oauth2/authorizations'].get && doc.paths['/oauth2/authorizations'].post);
    assert.deepEqual(
      Object.keys(doc.components.schemas.AuthorizationServerMetadata.properties).sort(),
      Object.keys(meta).sort(),
    );
  });

  test('/docs and its assets are served from the installed package, without a token', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.doesNotMatch(page.body, /https?:\/\//, 'no external URL in the page');
    for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js', 'init.js']) {
      assert.equal((await t.app.inject({ method: 'GET', url: `/docs/${asset}` })).statusCode, 200, asset);
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/docs/package.json' })).statusCode, 404);
    // The Authorize button's redirect page: HTML whose script (a file beside it) the CSP lets run.
    const redirect = await t.app.inject({ method: 'GET', url: '/docs/oauth2-redirect.html' });
    assert.equal(redirect.statusCode, 200);
    assert.match(String(redirect.headers['content-type']), /^text\/html/);
    assert.match(String(redirect.headers['content-security-policy']), /default-src 'self'/);
    assert.match(redirect.body, /<script src="oauth2-redirect.js">/);
    assert.equal((await t.app.inject({ method: 'GET', url: '/docs/oauth2-redirect.js' })).statusCode, 200);
    assert.match(
      (await t.app.inject({ method: 'GET', url: '/docs/init.js' })).body,
      /oauth2RedirectUrl: window.location.origin \+ '\/docs\/oauth2-redirect.html'/,
    );
  });

  test('the page renders offline in Chromium with the users and jobs operations', { skip: browserSkip() }, async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const outside: string[] = [];
      // Anything not from this server is refused and recorded: the page must not need it.
      await page.route('**/*', (route) => {
        if (route.request().url().startsWith(base)) return route.continue();
        outside.push(route.request().url());
        return route.abort();
      });
      await page.goto(`${base}/docs`);
      // Every tag is listed, folded; each opens on a click.
      for (const tag of registry.list.map((c) => c.name)) {
        await page.locator(`#operations-tag-${tag}`).waitFor({ timeout: 20_000 });
      }
      for (const tag of ['users', 'jobs', 'files']) await page.click(`#operations-tag-${tag}`);
      await page.locator('#operations-files-uploadFiles').waitFor({ timeout: 20_000 });
      assert.ok(await page.locator('#operations-users-listUsers').isVisible());
      assert.ok(await page.locator('#operations-jobs-createJobs').isVisible());
      assert.ok(await page.locator('#operations-files-uploadFiles').isVisible());
      assert.deepEqual(outside, []);
    } finally {
      await browser.close();
    }
  });
});
