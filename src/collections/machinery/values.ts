import type { ScalarField } from './fields.js';

/** A stored value as the API shows it: 0/1 flags as booleans, epoch ms as ISO 8601, numbers as numbers. */
export function toApi(s: Pick<ScalarField, 'type'>, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (s.type) {
    case 'boolean':
      return v === 1 || v === true;
    case 'time':
      return new Date(Number(v)).toISOString();
    case 'json':
      return JSON.parse(v as string);
    case 'flag':
    case 'integer':
    case 'number':
      return Number(v);
    default:
      return v;
  }
}
