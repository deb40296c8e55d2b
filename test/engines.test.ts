import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';

/**
 * Every installed package supports every Node.js line we declare (package.json `engines`), so
 * `npm ci` prints no EBADENGINE on any of them (cookie@2 wanted Node 22 while we declare 20).
 * `.ci/run` also fails on any engine warning in the `npm ci` output.
 */
const require = createRequire(import.meta.url);
const semver = require('semver') as {
  minVersion(r: string): { version: string } | null;
  satisfies(v: string, r: string): boolean;
};
const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8'));
const lock = JSON.parse(fs.readFileSync(new URL('package-lock.json', root), 'utf8'));

test('every locked package accepts the oldest Node.js of each line we declare, and this one', () => {
  const declared: string = pkg.engines.node;
  // The first version of each alternative of the range (20.19.0 and 22.13.0), and the running one.
  const versions = [
    ...new Set([...declared.split('||').map((r) => semver.minVersion(r.trim())!.version), process.versions.node]),
  ];
  const refused: string[] = [];
  type Entry = { engines?: { node?: string }; optional?: boolean; os?: string[]; cpu?: string[] };
  // Node.js 22 and later ship no 32-bit Windows build: an optional package for win32-ia32 alone
  // (sharp's @img/sharp-win32-ia32, which wants ^20.9) is never installed by one of them.
  const noSuchNode = (entry: Entry, v: string) =>
    entry.optional === true &&
    entry.os?.every((o) => o === 'win32') === true &&
    entry.cpu?.every((c) => c === 'ia32') === true &&
    semver.satisfies(v, '>=22');
  for (const [where, entry] of Object.entries<Entry>(lock.packages)) {
    const wants = entry.engines?.node;
    if (!where || !wants) continue;
    for (const v of versions)
      if (!semver.satisfies(v, wants) && !noSuchNode(entry, v))
        refused.push(`${where} wants node ${wants}; we declare ${declared} (${v} refused)`);
  }
  assert.deepEqual(refused, []);
});
