import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

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

test('npm pack gives a tarball that installs in an empty project, type-checks there with tsc and runs', () => {
  const [packed] = JSON.parse(npm(['pack', '-w', 'packages/client', '--pack-destination', tmp, '--json'], ROOT)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const files = packed.files.map((f) => f.path);
  for (const f of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/api.d.ts'])
    assert.ok(files.includes(f), `${f} is in the package`);
  assert.deepEqual(
    files.filter((f) => !/^(package\.json|README\.md|dist\/)/.test(f)),
    [],
    'nothing but the build, its manifest and README',
  );

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
      files: ['app.ts'],
    }),
  );
  const checked = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(checked.status, 0, checked.stdout + checked.stderr);

  const ran = spawnSync(process.execPath, [path.join(project, 'out/app.js')], { encoding: 'utf8' });
  assert.equal(ran.status, 0, ran.stderr);
  assert.equal(ran.stdout, "(title ~ 'O\\'Brien') and (priority = 'high')\nfunction function\n");
});
