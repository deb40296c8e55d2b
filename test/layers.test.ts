import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The layers point one way (docs/design.md): read from the TypeScript sources, the runtime imports
 * (type-only ones are erased by the compiler and do not count) must form no cycle, migrations are
 * frozen history that import nothing above src/db, and shared machinery never reaches into a
 * particular collection.
 */
const root = path.resolve(import.meta.dirname, '../..');
const src = path.join(root, 'src');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : p.endsWith('.ts') && !p.endsWith('.d.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

/** Relative runtime imports of each source file, as source paths. */
function graph(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of files(src)) {
    const text = fs.readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const [, , typeOnly, clause, spec] = m;
      if (typeOnly || !spec.startsWith('.')) continue;
      // `import { type A, type B } from` is erased too.
      if (
        clause &&
        /^\{[^}]*\}\s+from\s+$/.test(clause.trim() + ' ') &&
        clause
          .replace(/[{}]/g, '')
          .split(',')
          .every((s) => s.trim() === '' || s.trim().startsWith('type '))
      )
        continue;
      deps.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
    }
    out.set(file, deps);
  }
  return out;
}

const rel = (p: string) => path.relative(root, p);

/** Every cycle of a graph, each as the path around it. */
function cycles(g: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const out: string[][] = [];
  const visit = (f: string, stack: string[]) => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'open') {
      out.push([...stack.slice(stack.indexOf(f)), f]);
      return;
    }
    state.set(f, 'open');
    for (const d of g.get(f) ?? []) visit(d, [...stack, f]);
    state.set(f, 'done');
  };
  for (const f of g.keys()) visit(f, []);
  return out;
}

test('no runtime import cycle in src/', () => {
  const g = graph();
  // The graph holds real edges (users imports auth/tokens at run time), so an empty answer means something.
  assert.ok(g.get(path.join(src, 'collections/users/index.ts'))?.includes(path.join(src, 'auth/tokens.ts')));
  assert.deepEqual(
    cycles(g).map((c) => c.map(rel).join(' -> ')),
    [],
  );
});

test('the cycle search finds a cycle (control)', () => {
  assert.deepEqual(
    cycles(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
        ['d', ['a']],
      ]),
    ),
    [['a', 'b', 'c', 'a']],
  );
});

test('migrations import nothing above src/db, and live code never imports a migration', () => {
  const g = graph();
  const migrations = path.join(src, 'db/migrations');
  const db = path.join(src, 'db');
  const bad: string[] = [];
  for (const [file, deps] of g) {
    for (const d of deps) {
      if (file.startsWith(migrations) && !d.startsWith(db)) bad.push(`${rel(file)} imports ${rel(d)}`);
      if (d.startsWith(migrations) && !file.startsWith(migrations) && file !== path.join(db, 'migrate.ts'))
        bad.push(`${rel(file)} imports ${rel(d)}`);
    }
  }
  assert.deepEqual(bad, []);
});

/**
 * The layers, lowest first (docs/design.md): a file imports only files of its own unit or of a
 * lower layer, at run time and by type alike. A unit is a folder of src/, or a collection's own
 * folder; files of one layer's different units never import each other (collections never import
 * each other). Every file of src/ belongs to exactly one layer.
 */
const LAYERS: string[][] = [
  ['errors.ts', 'config.ts'],
  ['time'],
  ['db'],
  ['storage'],
  ['auth'],
  ['collections/machinery'],
  ['domain/billing', 'domain/crew-time', 'domain/planning', 'domain/jobs'],
  ['domain/forms', 'domain/maintenance', 'domain/customers'],
  ['collections/policy.ts'],
  ['collections/*'],
  ['collections/index.ts'],
  ['accounts', 'retention.ts'],
  ['mail'],
  ['services.ts'],
  ['http'],
  ['oauth'],
  ['app.ts'],
  ['server.ts', 'cli'],
];

/** A file's unit (its folder under src/, a collection's folder, or a top-level file) and layer. */
function placeOf(file: string): { unit: string; layer: number } | undefined {
  const parts = path.relative(src, file).split(path.sep);
  const unit = parts[0] === 'collections' || parts[0] === 'domain' ? `${parts[0]}/${parts[1]}` : parts[0];
  // Searched lowest first: collections/machinery is listed before collections/*.
  const layer = LAYERS.findIndex((names) =>
    names.some((name) => name === unit || (name === 'collections/*' && parts[0] === 'collections' && parts.length > 2)),
  );
  return layer === -1 ? undefined : { unit, layer };
}

/** Every relative import of each source file, runtime and type-only alike, as source paths. */
function allImports(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of files(src)) {
    const text = fs.readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const m of text.matchAll(IMPORT))
      if (m[4].startsWith('.')) deps.push(path.resolve(path.dirname(file), m[4].replace(/\.js$/, '.ts')));
    for (const m of text.matchAll(/import\(['"](\.[^'"]+)['"]\)/g))
      deps.push(path.resolve(path.dirname(file), m[1].replace(/\.js$/, '.ts')));
    out.set(file, deps);
  }
  return out;
}

test('every file of src/ belongs to a layer', () => {
  assert.deepEqual(
    files(src)
      .filter((f) => !f.includes(`${path.sep}migrations${path.sep}`) && !placeOf(f))
      .map(rel),
    [],
  );
});

test('imports point down the layers (or within one unit): no exceptions', () => {
  const bad: string[] = [];
  for (const [file, deps] of allImports()) {
    if (file.includes(`${path.sep}db${path.sep}migrations${path.sep}`)) continue; // checked above
    const from = placeOf(file)!;
    for (const d of deps) {
      const to = placeOf(d);
      if (!to) continue;
      if (to.unit === from.unit || to.layer < from.layer) continue;
      bad.push(`${rel(file)} (${from.unit}) imports ${rel(d)} (${to.unit})`);
    }
  }
  assert.deepEqual(bad, []);
});

test('the layer rule finds an upward import (control)', () => {
  assert.ok(
    placeOf(path.join(src, 'http', 'api.ts'))!.layer >
      placeOf(path.join(src, 'collections', 'jobs', 'index.ts'))!.layer,
  );
  assert.equal(placeOf(path.join(src, 'collections', 'jobs', 'index.ts'))!.unit, 'collections/jobs');
  assert.notEqual(
    placeOf(path.join(src, 'collections', 'jobs', 'index.ts'))!.unit,
    placeOf(path.join(src, 'collections', 'notes', 'index.ts'))!.unit,
  );
});

/** Only the transport knows the web framework: routes, plugins and replies live in src/http, src/oauth and the app. */
test('the domain knows no web framework: fastify is imported only by src/http, src/oauth, app.ts and server.ts', () => {
  const allowed = ['http', 'oauth', 'app.ts', 'server.ts'];
  const bad = files(src).filter((f) => {
    const top = path.relative(src, f).split(path.sep)[0];
    return !allowed.includes(top) && /from ['"](fastify|@fastify\/[^'"]+)['"]/.test(fs.readFileSync(f, 'utf8'));
  });
  assert.deepEqual(bad.map(rel), []);
});

/**
 * The machinery's declarations are its leaf (docs/design.md): collection.ts, fields.ts and
 * contracts.ts name each other's types (an association field names its target collection; a
 * rule's context names the services), and nothing else of the machinery is part of any circle of
 * imports, type imports included; everything else imports the leaf and never the other way round.
 */
test('the machinery has no import circle but its declarations (types included)', () => {
  const mach = path.join(src, 'collections/machinery');
  const g = new Map([...allImports()].filter(([f]) => f.startsWith(mach)));
  const inCircle = new Set(
    cycles(g)
      .flat()
      .map((f) => path.relative(mach, f)),
  );
  assert.deepEqual([...inCircle].sort(), ['collection.ts', 'contracts.ts', 'fields.ts']);
});
