// A second reporter of `npm test` (scripts/test.mjs): where the time went and what was skipped.
// Node's spec reporter prints only counts; this prints, once the run ends, the slowest test files
// (the sum of their top-level tests' durations) and every skipped test with its file and reason,
// so a skip is never silent.
import path from 'node:path';

export default async function* summary(source) {
  const files = new Map();
  const skipped = [];
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    const file = data.file ? path.relative(process.cwd(), data.file) : '(unknown file)';
    if (data.nesting === 0) files.set(file, (files.get(file) ?? 0) + (data.details?.duration_ms ?? 0));
    if (data.skip !== undefined && data.skip !== false)
      skipped.push(`${file}: ${data.name}${typeof data.skip === 'string' ? ` (${data.skip})` : ''}`);
  }
  const slow = [...files].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TEST_SLOWEST ?? 12));
  yield `\nslowest test files (seconds, summed over their top-level tests):\n`;
  for (const [file, ms] of slow) yield `  ${(ms / 1000).toFixed(1).padStart(7)}  ${file}\n`;
  yield skipped.length ? `skipped (${skipped.length}):\n${skipped.map((s) => `  ${s}\n`).join('')}` : 'skipped: none\n';
}
