import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import type { Database } from '../db/index.js';
import type { Services } from '../services.js';
import { UsageError } from './validate.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** Placeholder of the value in the help (`ID`, `S`, `URI`). */
  value?: string;
  required?: boolean;
  help: string;
}

export interface Invocation {
  database: Database;
  /** The registry and the write pipeline on that database. */
  services: Services;
  config: Config;
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** One command of the CLI: its words, its options, and what it does. */
export interface Command {
  name: string;
  summary: string;
  /** Positional arguments, as shown in the help (`CLIENT_ID`); exactly these many are taken. */
  positionals?: string[];
  options?: Record<string, OptionSpec>;
  /** More lines for `--help`. */
  details?: string;
  /** false: runs without opening (and migrating) the database first; `doctor` opens it itself. */
  needsDatabase?: boolean;
  /** It writes its own output to stdout (an export's lines): nothing is printed after it. */
  streams?: boolean;
  run(inv: Invocation): Promise<unknown>;
}

/** One usage line: `clients create --name S --redirect-uri URI [--permissions p,q]`. */
export function usageLine(c: Command): string {
  const opts = Object.entries(c.options ?? {}).map(([name, o]) => {
    const text =
      o.type === 'boolean'
        ? `--${name}`
        : `--${name} ${o.value ?? 'S'}${o.multiple ? ` [--${name} ${o.value ?? 'S'} ...]` : ''}`;
    return o.required ? text : `[${text}]`;
  });
  return [c.name, ...(c.positionals ?? []), ...opts].join(' ');
}

export function commandHelp(c: Command): string {
  const width =
    Math.max(
      0,
      ...Object.entries(c.options ?? {}).map(
        ([n, o]) => n.length + (o.type === 'string' ? (o.value ?? 'S').length + 1 : 0),
      ),
    ) + 4;
  const rows = Object.entries(c.options ?? {}).map(([n, o]) => {
    const left = `--${n}${o.type === 'string' ? ` ${o.value ?? 'S'}` : ''}`;
    return `  ${left.padEnd(width)}${o.help}${o.required ? ' (required)' : ''}`;
  });
  return [
    `usage: npm run --silent fsm -- ${usageLine(c)}`,
    '',
    c.summary,
    ...(c.details ? ['', c.details] : []),
    ...(rows.length ? ['', 'options:', ...rows] : []),
    '',
  ].join('\n');
}

/** Parses the command's arguments strictly (unknown options and stray words are errors). */
export function parse(
  c: Command,
  args: string[],
): { values: Invocation['values']; positionals: string[]; help: boolean } {
  const options = Object.fromEntries(
    Object.entries(c.options ?? {}).map(([n, o]) => [n, { type: o.type, ...(o.multiple ? { multiple: true } : {}) }]),
  );
  const parsed = parseArgs({
    args,
    options: { ...options, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: true,
  });
  const values = parsed.values as Invocation['values'];
  const positionals = parsed.positionals;
  if (values.help) return { values, positionals, help: true };
  const expected = c.positionals ?? [];
  if (positionals.length !== expected.length) {
    throw new UsageError(
      expected.length ? `expected exactly one ${expected.join(' ')}` : `unexpected argument '${positionals[0]}'`,
    );
  }
  const given = (v: unknown) => (Array.isArray(v) ? v.length > 0 : typeof v === 'string' && v.trim() !== '');
  const missing = Object.entries(c.options ?? {}).filter(([n, o]) => o.required && !given(values[n]));
  if (missing.length) throw new UsageError(`missing ${missing.map(([n]) => `--${n}`).join(', ')}`);
  return { values, positionals, help: false };
}

/** A positive integer id given as an option. */
export function idOption(values: Invocation['values'], name: string): number {
  const v = values[name];
  if (typeof v !== 'string' || !/^[1-9][0-9]{0,14}$/.test(v))
    throw new UsageError(`--${name} must be a positive integer id`);
  return Number(v);
}
