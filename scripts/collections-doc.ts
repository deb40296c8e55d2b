import type { TSchema } from '@sinclair/typebox';
import { permissionFor, type Access, type Collection, type RoleKind } from '../src/collections/machinery/collection.js';
import type { Field } from '../src/collections/machinery/fields.js';
import { PHONE, COLOUR } from '../src/collections/machinery/fields.js';
import type { Registry } from '../src/collections/machinery/registry.js';

/**
 * The tables of docs/collections.md, written from the declarations: each sits between
 * `<!-- generated:NAME -->` and `<!-- end:NAME -->` and is replaced whole by `npm run docs`;
 * a test fails when the file is not what the declarations say.
 */
const KNOWN_PATTERNS: Record<string, string> = { [PHONE]: '`+` and 7–15 digits', [COLOUR]: '`#RRGGBB`' };

function range(s: TSchema, unit: string): string {
  const lo = s.minLength ?? s.minimum;
  const hi = s.maxLength ?? s.maximum;
  if (lo !== undefined && hi !== undefined) return `, ${lo}–${hi}${unit}`;
  if (hi !== undefined) return `, at most ${hi}${unit}`;
  if (lo !== undefined) return `, at least ${lo}${unit}`;
  return '';
}

function scalarType(s: TSchema): string {
  if (s.anyOf)
    return s.anyOf.map((v: TSchema) => (v.const !== undefined ? `\`${v.const}\`` : scalarType(v))).join(' \\| ');
  if (s.type === 'boolean') return 'boolean';
  if (s.type === 'integer') return `integer${range(s, '')}`;
  if (s.type === 'number') return `number${range(s, '')}`;
  if (s.format === 'date-time') return 'date-time (ISO 8601 with offset)';
  if (s.format === 'date') return 'date `YYYY-MM-DD`';
  if (s.format === 'email') return 'e-mail';
  if (s.pattern && KNOWN_PATTERNS[s.pattern]) return KNOWN_PATTERNS[s.pattern];
  // A `|` of the pattern would end the Markdown table's cell.
  if (s.pattern) return `string matching \`${s.pattern.replace(/\|/g, '\\|')}\``;
  return `string${range(s, ' characters')}`;
}

/** A JSON value's type as its schema says: an array of what its items are (`lines`: objects with their members). */
function jsonType(s: TSchema): string {
  if (s.type === 'array') {
    const items = s.items as TSchema | undefined;
    if (items?.type === 'object' && items.properties)
      return `array of objects {${Object.keys(items.properties).join(', ')}}`;
    return items ? `array, each a ${scalarType(items)}` : 'array';
  }
  if (s.type === 'object' && s.properties) return `object {${Object.keys(s.properties).join(', ')}}`;
  return 'object';
}

function typeOf(field: Field): string {
  switch (field.kind) {
    case 'scalar':
      if (field.type === 'json') return `${jsonType(field.valueSchema)}${field.nullable ? ' or null' : ''}`;
      return `${scalarType(field.valueSchema)}${field.nullable ? ' or null' : ''}`;
    case 'object':
      return `object {${Object.keys(field.members).join(', ')}}`;
    case 'assoc':
      return `\`{id}\` of ${field.target}${field.nullable ? ' or null' : ''}`;
    case 'assocList':
      return `\`[{id}]\` of ${field.target}`;
    case 'computed':
      // A number (a `near` list's distance) or, as most are, a string.
      return `${(field.schema.anyOf as { type?: string }[] | undefined)?.some((s) => s.type === 'number') ? 'number or null' : 'string'} (computed at each read)`;
    default:
      return 'write-only';
  }
}

function notes(field: Field): string {
  const out: string[] = [];
  if (field.required) out.push('required');
  if (field.readOnly) out.push('read-only');
  if (field.kind === 'writeOnly') out.push('never returned');
  if (field.extended) out.push('with `fields=*`');
  if (field.kind === 'scalar' && field.default !== undefined) out.push(`default \`${JSON.stringify(field.default)}\``);
  if (field.kind === 'scalar' && field.unique)
    out.push(field.unique === 'account' ? 'unique in the account (1046)' : 'unique in the service (1046)');
  if (field.kind === 'assoc' && field.memberNames.length) out.push(`\`[*]\`: ${field.memberNames.join(', ')}`);
  if (field.kind === 'assocList' && field.memberNames.length) out.push(`\`[*]\`: ${field.memberNames.join(', ')}`);
  if (field.description) out.push(field.description);
  return out.join('; ');
}

/** One row per field: name, type, notes. */
export function fieldTable(c: Collection): string {
  const rows = Object.entries(c.fields).map(
    ([name, field]) => `| ${name} | ${typeOf(field)} | ${notes(field).replace(/\|/g, '\\|')} |`,
  );
  return ['| Field | Type | Notes |', '|---|---|---|', '| id | integer | read-only; always returned |', ...rows].join(
    '\n',
  );
}

const WORDS: Record<Access, (op: 'read' | 'write') => string> = {
  all: (op) => op,
  own: (op) => `${op} own`,
  none: () => '',
};

/** Who may read and write each collection (the policies), and the permissions a token needs. */
export function roleTable(registry: Registry): string {
  const roles: RoleKind[] = ['administrator', 'employee', 'contractor'];
  const cell = (c: Collection, role: RoleKind) =>
    [WORDS[c.policy.read[role]]('read'), WORDS[c.policy.write[role]]('write')].filter(Boolean).join(', ') || 'none';
  const perms = (c: Collection) =>
    (c.readOnly ? [permissionFor(c, 'read')] : [permissionFor(c, 'read'), permissionFor(c, 'write')])
      .map((p) => `\`${p}\``)
      .join(', ');
  const rows = registry.list.map((c) => `| ${c.name} | ${perms(c)} | ${roles.map((r) => cell(c, r)).join(' | ')} |`);
  return [
    '| Collection | Permissions | Administrator | Employee | Contractor |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The file with every generated block replaced by what the declarations say now. */
export function renderDoc(text: string, registry: Registry): string {
  const blocks = new Map<string, string>([
    ['roles', roleTable(registry)],
    ...registry.list.map((c) => [`fields:${c.name}`, fieldTable(c)] as [string, string]),
  ]);
  return text.replace(/<!-- generated:([\w:]+) -->\n[\s\S]*?<!-- end:\1 -->/g, (whole, name: string) => {
    const block = blocks.get(name);
    return block === undefined ? whole : `<!-- generated:${name} -->\n${block}\n<!-- end:${name} -->`;
  });
}

/** The names of the blocks a file has. */
export const generatedBlocks = (text: string): string[] =>
  [...text.matchAll(/<!-- generated:([\w:]+) -->/g)].map((m) => m[1]);
