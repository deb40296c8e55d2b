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
  // The graph holds real edges (users imports oauth/tokens at run time), so an empty answer means something.
  assert.ok(g.get(path.join(src, 'collections/users/index.ts'))?.includes(path.join(src, 'oauth/tokens.ts')));
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

test('shared layers never import a particular collection; collections never import each other', () => {
  const g = graph();
  const collections = path.join(src, 'collections');
  const own = (p: string) => (p.startsWith(collections) ? path.relative(collections, p).split(path.sep)[0] : undefined);
  const bad: string[] = [];
  for (const [file, deps] of g) {
    const mine = own(file);
    for (const d of deps) {
      const theirs = own(d);
      if (!theirs || theirs === 'machinery' || theirs === 'index.ts' || theirs === mine) continue;
      // Only the registry (collections/index.ts) and the top (app, services, accounts, cli) name collections.
      const top =
        !file.startsWith(path.join(src, 'http')) &&
        !file.startsWith(path.join(src, 'auth')) &&
        !file.startsWith(path.join(src, 'db')) &&
        !file.startsWith(path.join(src, 'oauth')) &&
        !mine;
      if (mine === 'index.ts' || top) continue;
      bad.push(`${rel(file)} imports ${rel(d)}`);
    }
    if (file.startsWith(path.join(src, 'auth')) && deps.some((d) => d.startsWith(collections)))
      bad.push(`${rel(file)} imports the collections`);
  }
  assert.deepEqual(bad, []);
});
