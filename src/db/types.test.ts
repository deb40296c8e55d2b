import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PG_URL, skipUnless } from '../../test/helpers.js';

/**
 * src/db/types.ts is what `npm run db:types` makes of the migrated schema (scripts/db-types.mjs:
 * PostgreSQL's tables, columns, nullability and defaults, checked against a SQLite database
 * migrated beside it). A migration whose types were not regenerated, or an edit by hand, fails here.
 */
const root = path.resolve(import.meta.dirname, '../../..');

test('src/db/types.ts is generated from the migrated schema', { skip: skipUnless('postgres') }, async () => {
  const generator = pathToFileURL(path.join(root, 'scripts/db-types.mjs')).href;
  const { renderTypes, TYPES_FILE } = await import(generator);
  const expected: string = await renderTypes(PG_URL);
  assert.match(expected, /export interface DB \{/);
  assert.match(expected, /export interface JobsTable \{[^}]*\n {2}client_id: number \| null;/);
  const committed = fs.readFileSync(TYPES_FILE, 'utf8');
  assert.ok(committed === expected, 'src/db/types.ts differs from the migrated schema: run `npm run db:types`');
});
