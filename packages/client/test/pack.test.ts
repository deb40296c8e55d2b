import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, test } from 'node:test';
import { serve } from './fixture.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-client-pack-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** npm as a user runs it: none of the settings `npm test` hands its children, but the same cache. */
function npm(args: string[], cwd: string) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('npm_') || /^npm_config_(cache|registry|userconfig|globalconfig)$/.test(k),
    ),
  );
  const r = spawnSync('npm', args, { cwd, env, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `npm ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// What an integrator writes: it compiles only if the package's declarations are complete and
// strict (each @ts-expect-error must meet an error, so types that fell back to `any` fail too).
const APP = `import { FieldService, FieldServiceError, whereString, type ChangeEvent, type Item } from '@fieldservice/client';

export async function integrate(fsm: FieldService): Promise<string> {
  const { item, etag } = await fsm.get('jobs', 1);
  const title: string = item.title;
  try {
    await fsm.updateItem('jobs', item.id, { title: title + '!' }, { ifMatch: etag, idempotencyKey: 'k-1' });
  } catch (e) {
    if (e instanceof FieldServiceError && e.status === 412) return 'changed meanwhile';
    throw e;
  }
  const clients: Item<'clients'>[] = await fsm.create('clients', [{ name: 'Acme' }]);
  for await (const event of fsm.events.follow({ after: 0, signal: AbortSignal.timeout(10) })) {
    const e: ChangeEvent = event;
    if (e.type === 'clients.created') return e.data.name;
  }
  // @ts-expect-error: no collection 'job'
  fsm.list('job');
  // @ts-expect-error: 'asap' is no priority
  await fsm.create('jobs', [{ title: 'Leak', priority: 'asap' }]);
  return clients[0].name;
}

console.log(whereString<'jobs'>({ and: [['title', '~', "O'Brien"], ['priority', '=', 'high']] }));
console.log(typeof FieldService.discover, typeof FieldServiceError);
`;

// And a program run against a live server: issue 50's invoice, its issue action, meta and a typed
// refusal, through nothing but the installed tarball. No @types/node: `process` is declared.
const LIVE = `import { AuthorizationRevokedError, FieldService, FieldServiceError } from '@fieldservice/client';
declare const process: { env: Record<string, string | undefined> };

const fsm = await FieldService.discover({
  issuer: process.env.FSM_URL ?? '',
  clientId: process.env.CLIENT_ID ?? '',
  clientSecret: 'unused',
  redirectUri: 'http://127.0.0.1/callback',
  tokens: { accessToken: process.env.ACCESS_TOKEN ?? '', expiresAt: Date.now() + 3_600_000 },
});
const client = await fsm.createOne('clients', { name: 'Packed' });
const draft = await fsm.createOne('invoices', {
  client: { id: client.id },
  lines: [{ description: 'Call-out', quantity: 1, unitPrice: 45 }],
});
const issued = await fsm.invoices.issue(draft, { idempotencyKey: 'packed-issue' });
const replayed = await fsm.invoices.issue(draft.id, { idempotencyKey: 'packed-issue' });
let refused: number | undefined;
try {
  await fsm.invoices.issue(draft.id);
} catch (e) {
  if (e instanceof FieldServiceError) refused = e.code;
}
console.log(JSON.stringify({
  state: issued.state,
  total: issued.total,
  number: replayed.number === issued.number,
  replayed: [issued.meta.replayed, replayed.meta.replayed],
  refused,
  errors: typeof AuthorizationRevokedError,
}));
`;

test('npm pack gives a tarball that installs in an empty project, type-checks there with tsc and runs against a live server', async () => {
  const [packed] = JSON.parse(npm(['pack', '-w', 'packages/client', '--pack-destination', tmp, '--json'], ROOT)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const files = packed.files.map((f) => f.path);
  for (const f of [
    'package.json',
    'README.md',
    'LICENSE',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/generated/api.d.ts',
    'dist/generated/actions.js',
    'examples/sync.ts',
  ])
    assert.ok(files.includes(f), `${f} is in the package`);
  assert.deepEqual(
    files.filter((f) => !/^(package\.json|README\.md|LICENSE|dist\/.*\.(js|d\.ts)|examples\/.*\.ts)$/.test(f)),
    [],
    'nothing but the build (no source maps of sources not shipped), its manifest, README, licence and examples',
  );
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages/client/package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  assert.equal(manifest.private, undefined, 'publishable');
  assert.equal(manifest.license, 'MIT');
  // Nothing of the server at run time: every import of the build is the package's own or a dependency.
  for (const f of files.filter((f) => f.endsWith('.js'))) {
    const text = fs.readFileSync(path.join(ROOT, 'packages/client', f), 'utf8');
    for (const [, spec] of text.matchAll(/\bfrom\s+'([^']+)'/g))
      assert.ok(
        /^\.\.?\//.test(spec)
          ? path
              .resolve(path.dirname(path.join(ROOT, 'packages/client', f)), spec)
              .startsWith(path.join(ROOT, 'packages/client/dist'))
          : Object.keys(manifest.dependencies as object).includes(spec),
        `${f} imports ${spec}`,
      );
  }

  // An empty project, nothing of this checkout: the tarball, and its dependencies from npm's cache.
  const project = path.join(tmp, 'project');
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'integration', private: true, type: 'module' }),
  );
  npm(
    ['install', path.join(tmp, packed.filename), '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'],
    project,
  );
  const installed = JSON.parse(
    fs.readFileSync(path.join(project, 'node_modules/@fieldservice/client/package.json'), 'utf8'),
  ) as { dependencies: Record<string, string> };
  for (const dep of Object.keys(installed.dependencies))
    assert.ok(fs.existsSync(path.join(project, 'node_modules', dep)), `${dep} installed`);

  fs.writeFileSync(path.join(project, 'app.ts'), APP);
  fs.writeFileSync(path.join(project, 'live.ts'), LIVE);
  fs.writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        // No @types/node: the declarations need only the fetch globals.
        lib: ['es2022', 'dom'],
        types: [],
        skipLibCheck: false,
        outDir: 'out',
      },
      files: ['app.ts', 'live.ts'],
    }),
  );
  const checked = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(checked.status, 0, checked.stdout + checked.stderr);

  const ran = spawnSync(process.execPath, [path.join(project, 'out/app.js')], { encoding: 'utf8' });
  assert.equal(ran.status, 0, ran.stderr);
  assert.equal(ran.stdout, "(title ~ 'O\\'Brien') and (priority = 'high')\nfunction function\n");

  // The server answers in this process: the program runs in its own, awaited (never spawnSync).
  const s = await serve('sqlite');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(project, 'out/live.js')], {
      env: { ...process.env, FSM_URL: s.base, CLIENT_ID: s.tenant.clientId, ACCESS_TOKEN: s.tenant.token },
      timeout: 60_000,
    });
    assert.deepEqual(JSON.parse(stdout), {
      state: 'issued',
      total: 45,
      number: true,
      replayed: [false, true],
      refused: 1280,
      errors: 'function',
    });
  } finally {
    await s.close();
  }
});
