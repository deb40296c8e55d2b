// Rewrites the generated tables of docs/collections.md from the collection declarations
// (run after `npm run build`; `npm run docs` does both).
import fs from 'node:fs';
import { registry } from '../dist/src/collections/index.js';
import { renderDoc } from '../dist/scripts/collections-doc.js';

const file = new URL('../docs/collections.md', import.meta.url);
const before = fs.readFileSync(file, 'utf8');
const after = renderDoc(before, registry);
fs.writeFileSync(file, after);
console.log(before === after ? 'docs/collections.md is current' : 'docs/collections.md rewritten');
