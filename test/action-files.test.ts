import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { registry } from '../src/collections/index.js';

/**
 * Issue 44: an action is declared (src/collections/machinery/write/transition.ts) or composed of
 * repository calls; the statements it runs live in repositories. Every module a collection's
 * `actions` come from is read here and may hold no query: no query builder call, no raw SQL.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const SQL =
  /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|executeQuery)\(|\bsql(\.raw)?`|\bsql\.(raw|ref|join|lit|id)\(/;

/** The module each name imported by `file` comes from (relative imports only), as source paths. */
function importsOf(file: string): Map<string, string> {
  const out = new Map<string, string>();
  const text = fs.readFileSync(file, 'utf8');
  for (const m of text.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'(\.[^']+)'/g))
    for (const part of m[1].split(',')) {
      const name = part
        .trim()
        .split(/\s+as\s+/)
        .pop()!
        .replace(/^type\s+/, '');
      if (name) out.set(name, path.resolve(path.dirname(file), m[2].replace(/\.js$/, '.ts')));
    }
  return out;
}

/** The identifiers the collection's declaration gives its `actions` (`actions: { a, b: f('x') }`). */
function actionIdentifiers(index: string): string[] {
  const text = fs.readFileSync(index, 'utf8');
  const at = /\n {2}actions: (\{[^}]*\}|\w+)/.exec(text);
  if (!at) return [];
  const body = at[1].startsWith('{') ? at[1].slice(1, -1) : at[1];
  return body
    .split(',')
    .map((p) => p.split(':').pop()!.trim())
    .map((v) => /^(\w+)/.exec(v)?.[1] ?? '')
    .filter(Boolean);
}

/** The top-level function `name` of a file, as text (an action written beside its declaration). */
function functionText(file: string, name: string): string | undefined {
  const text = fs.readFileSync(file, 'utf8');
  const at = new RegExp(`\\n(?:export )?(?:async )?function ${name}\\(`).exec(text);
  if (!at) return undefined;
  const end = text.indexOf('\n}\n', at.index);
  return text.slice(at.index + 1, end < 0 ? undefined : end + 2);
}

/** Each collection's declaring file: the `index.ts` under src/collections whose `defineCollection` names it. */
function declarations(): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'index.ts')
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/defineCollection\(\{\s*name: '(\w+)'/g)) out.set(m[1], p);
    }
  };
  walk(path.join(ROOT, 'src/collections'));
  return out;
}

test('no module a collection takes its actions from holds SQL', () => {
  const sources = new Map<string, string>();
  const declared = declarations();
  for (const c of registry.list) {
    if (!c.actions || !Object.keys(c.actions).length) continue;
    const index = declared.get(c.name);
    assert.ok(index, `${c.name} is declared in an index.ts under src/collections`);
    const imports = importsOf(index);
    const names = actionIdentifiers(index);
    assert.ok(names.length > 0, `${c.name}: its actions are found in index.ts`);
    for (const name of names) {
      const module = imports.get(name);
      if (module) {
        sources.set(path.relative(ROOT, module), fs.readFileSync(module, 'utf8'));
        continue;
      }
      const local = functionText(index, name);
      assert.ok(local, `${c.name}: the action '${name}' is imported from the project or written in index.ts`);
      sources.set(`${path.relative(ROOT, index)} (${name})`, local);
    }
  }
  // The collections with actions this round: their modules are all read.
  assert.ok(sources.size >= 8, [...sources.keys()].join(', '));
  const holding = [...sources].flatMap(([where, text]) =>
    text.split('\n').flatMap((l, i) => (SQL.test(l) ? [`${where}:${i + 1}: ${l.trim()}`] : [])),
  );
  assert.deepEqual(holding, []);
});

test('the SQL pattern of that check finds a query builder call and raw SQL', () => {
  for (const hit of ["db.selectFrom('jobs')", 'tx.updateTable(t)', 'sql`select 1`', 'sql.raw(x)', 'db.executeQuery(q)'])
    assert.ok(SQL.test(hit), hit);
  for (const miss of ['transition(', 'lockItem(tx', "'sql'", 'selectFromList']) assert.ok(!SQL.test(miss), miss);
});
