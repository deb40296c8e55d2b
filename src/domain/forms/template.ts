import { validationError, type ApiErrorBody } from '../../errors.js';

/**
 * A form template's `fields` (PRODUCT §17): 1–200 fields, each `{key, label, type, required,
 * options}`; keys match KEY_PATTERN and are unique in the template; `options` (1–100 distinct
 * strings) belong to the two selects only, and they need them. Pure: the collection declares it.
 */
export const FIELD_TYPES = [
  'text',
  'number',
  'boolean',
  'date',
  'select',
  'multiSelect',
  'photo',
  'signature',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export const KEY_PATTERN = '^[a-z][A-Za-z0-9]{0,39}$';
export const MAX_FIELDS = 200;
export const MAX_OPTIONS = 100;
export const LABEL_MAX = 200;
export const OPTION_MAX = 200;

export interface FormField {
  key: string;
  label: string;
  type: FieldType;
  required: boolean;
  options?: string[];
}

const KEY = new RegExp(KEY_PATTERN);
const MEMBERS = new Set(['key', 'label', 'type', 'required', 'options']);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isSelect = (t: FieldType) => t === 'select' || t === 'multiSelect';

/** The fields as stored (`required` explicit, `options` only on selects), or the failures, each naming `fields[i].member`. */
export function checkTemplateFields(
  value: unknown,
  name = 'fields',
): { fields: FormField[]; errors: [] } | { fields?: undefined; errors: ApiErrorBody[] } {
  if (!Array.isArray(value)) return { errors: [validationError('invalid', name, 'must be an array of fields')] };
  if (value.length < 1 || value.length > MAX_FIELDS)
    return {
      errors: [validationError('invalid', name, `must hold 1 to ${MAX_FIELDS} fields (it holds ${value.length})`)],
    };
  const errors: ApiErrorBody[] = [];
  const fields: FormField[] = [];
  const seen = new Set<string>();
  value.forEach((raw, i) => {
    const at = `${name}[${i}]`;
    if (!isObject(raw)) {
      errors.push(validationError('invalid', at, 'must be an object {key, label, type, required, options}'));
      return;
    }
    const before = errors.length;
    for (const m of Object.keys(raw))
      if (!MEMBERS.has(m)) errors.push(validationError('unknown', `${at}.${m.slice(0, 40)}`));
    const { key, label, type, required = false, options } = raw;
    if (key === undefined) errors.push(validationError('required', `${at}.key`));
    else if (typeof key !== 'string' || !KEY.test(key))
      errors.push(validationError('invalid', `${at}.key`, `must match ${KEY_PATTERN}`));
    else if (seen.has(key)) errors.push(validationError('duplicate', `${at}.key`));
    else seen.add(key);
    if (label === undefined) errors.push(validationError('required', `${at}.label`));
    else if (typeof label !== 'string' || label.length < 1 || label.length > LABEL_MAX)
      errors.push(validationError('invalid', `${at}.label`, `must be a string of 1 to ${LABEL_MAX} characters`));
    if (type === undefined) errors.push(validationError('required', `${at}.type`));
    else if (!FIELD_TYPES.includes(type as FieldType))
      errors.push(validationError('invalid', `${at}.type`, `must be one of ${FIELD_TYPES.join(', ')}`));
    if (typeof required !== 'boolean') errors.push(validationError('invalid', `${at}.required`, 'must be a boolean'));
    const select = FIELD_TYPES.includes(type as FieldType) && isSelect(type as FieldType);
    if (select) {
      const why = optionsProblem(options);
      if (options === undefined) errors.push(validationError('required', `${at}.options`));
      else if (why) errors.push(validationError('invalid', `${at}.options`, why));
    } else if (options !== undefined && FIELD_TYPES.includes(type as FieldType))
      errors.push(validationError('invalid', `${at}.options`, 'only a select or multiSelect field has options'));
    if (errors.length > before) return;
    const field: FormField = {
      key: key as string,
      label: label as string,
      type: type as FieldType,
      required: required as boolean,
    };
    if (select) field.options = options as string[];
    fields.push(field);
  });
  return errors.length ? { errors } : { fields, errors: [] };
}

function optionsProblem(options: unknown): string | undefined {
  if (!Array.isArray(options) || options.length < 1 || options.length > MAX_OPTIONS)
    return `must be an array of 1 to ${MAX_OPTIONS} distinct strings`;
  for (const o of options)
    if (typeof o !== 'string' || o.length < 1 || o.length > OPTION_MAX)
      return `each option must be a string of 1 to ${OPTION_MAX} characters`;
  if (new Set(options).size !== options.length) return 'the options must be distinct';
  return undefined;
}
