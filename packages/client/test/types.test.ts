import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

const typesDir = fileURLToPath(new URL('../test/types/', import.meta.url));
const scratch = fileURLToPath(new URL('./types-check/', import.meta.url)); // under dist-test: resolves the package as an integrator does
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const DIRECTIVE = /^\s*\/\/ @ts-expect-error/;

/** tsc over one file, strict, as an integrator's project compiles it; answers the lines with errors. */
function compile(file: string): { status: number | null; lines: number[]; output: string } {
  const r = spawnSync(
    process.execPath,
    [
      tsc,
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      file,
    ],
    { encoding: 'utf8' },
  );
  const lines = [...r.stdout.matchAll(/\.ts\((\d+),\d+\): error/g)].map((m) => Number(m[1]));
  return { status: r.status, lines: [...new Set(lines)], output: r.stdout + r.stderr };
}

describe('client package: misuse does not compile', () => {
  // misuse.ts: reads, filters, events; inputs.ts: every collection's create and update with its
  // required members only, nested values' members, read-only members and the actions.
  for (const [name, min] of [
    ['misuse', 12],
    ['inputs', 12],
  ] as const)
    test(`${name}.ts: every @ts-expect-error case compiles as expected, and each directive is needed`, () => {
      const source = fs.readFileSync(`${typesDir}${name}.ts`, 'utf8');
      fs.mkdirSync(scratch, { recursive: true });
      const withDirectives = `${scratch}${name}.ts`;
      fs.writeFileSync(withDirectives, source);
      const ok = compile(withDirectives);
      assert.equal(ok.status, 0, ok.output);

      // Without the directives: exactly the line after each one fails, and nothing else.
      const kept: string[] = [];
      const expected: number[] = [];
      for (const line of source.split('\n')) {
        if (DIRECTIVE.test(line)) expected.push(kept.length + 1);
        else kept.push(line);
      }
      assert.ok(expected.length >= min);
      const stripped = `${scratch}${name}-stripped.ts`;
      fs.writeFileSync(stripped, kept.join('\n'));
      const bad = compile(stripped);
      assert.notEqual(bad.status, 0);
      assert.deepEqual(
        bad.lines.sort((a, b) => a - b),
        expected,
        bad.output,
      );
    });
});
