import { Type } from '@sinclair/typebox';
import type { Executor } from '../../db/tx.js';
import { validationError, type ApiErrorBody } from '../../errors.js';
import { AssocRef, isItemId, type ScalarField } from './fields.js';
import {
  CHARGE_KINDS,
  LIMIT,
  MONEY_SCALE,
  PERCENT_SCALE,
  QUANTITY_SCALE,
  decimalsOf,
  fromScaled,
  lineAmounts,
  moneyProblem,
  scaledProblem,
  toScaled,
  toScaledNearest,
  withinLimit,
} from './money.js';
import { isPlainObject } from './validate.js';

/**
 * The `lines` of a quote or an invoice, one value kind written once (PRODUCT §9). Stored as JSON
 * text whose numbers are exact decimals (each written from an integer by fromScaled, whose shortest
 * form is the decimal itself: money.ts); every amount is computed from integers by lineAmounts.
 */
export const MAX_LINES = 200;

const nullableRef = Type.Union([AssocRef, Type.Null()]);
const money = Type.Number({ minimum: -LIMIT, maximum: LIMIT });
const lineSchema = (withCharge: boolean) =>
  Type.Object(
    {
      description: Type.String({ minLength: 1, maxLength: 10_000 }),
      quantity: Type.Number({ exclusiveMinimum: 0, maximum: LIMIT }),
      unitPrice: money,
      taxRate: nullableRef,
      product: nullableRef,
      kind: Type.Union([...CHARGE_KINDS.map((k) => Type.Literal(k)), Type.Null()]),
      taxPercent: Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], { readOnly: true }),
      subtotal: { ...money, readOnly: true },
      tax: { ...money, readOnly: true },
      total: { ...money, readOnly: true },
      ...(withCharge ? { charge: Type.Union([AssocRef, Type.Null()], { readOnly: true }) } : {}),
    },
    { additionalProperties: false },
  );

const WRITABLE = new Set(['description', 'quantity', 'unitPrice', 'taxRate', 'product', 'kind']);
const READ_ONLY = new Set(['taxPercent', 'subtotal', 'tax', 'total', 'charge']);

/** Checks of the lines a client sends, before the transaction: each failure names `lines[i].member`. */
export function checkLinesInput(value: unknown, name: string): ApiErrorBody[] {
  if (!Array.isArray(value)) return [validationError('invalid', name, 'must be an array of lines')];
  if (value.length > MAX_LINES) return [validationError('invalid', name, `at most ${MAX_LINES} lines`)];
  const errors: ApiErrorBody[] = [];
  value.forEach((line, i) => {
    const at = (m: string) => `${name}[${i}].${m}`;
    if (!isPlainObject(line)) {
      errors.push(validationError('notAnObject', `${name}[${i}]`));
      return;
    }
    for (const key of Object.keys(line)) {
      if (READ_ONLY.has(key)) errors.push(validationError('readOnly', at(key)));
      else if (!WRITABLE.has(key)) errors.push(validationError('unknown', at(key)));
    }
    for (const m of ['description', 'quantity', 'unitPrice'])
      if (line[m] === undefined) errors.push(validationError('required', at(m)));
    const d = line.description;
    if (d !== undefined && (typeof d !== 'string' || d.length < 1 || d.length > 10_000))
      errors.push(validationError('invalid', at('description'), 'must be text of 1 to 10,000 characters'));
    if (line.quantity !== undefined) {
      const why = scaledProblem(line.quantity, QUANTITY_SCALE);
      if (why) errors.push(validationError('invalid', at('quantity'), why));
      else if ((line.quantity as number) <= 0) errors.push(validationError('invalid', at('quantity'), 'must be > 0'));
    }
    if (line.unitPrice !== undefined) {
      // Its decimals are the account currency's: priceLines checks them, naming that number.
      const why = moneyProblem(line.unitPrice);
      if (why) errors.push(validationError('invalid', at('unitPrice'), why));
    }
    for (const m of ['taxRate', 'product'])
      if (
        line[m] !== undefined &&
        line[m] !== null &&
        !(isPlainObject(line[m]) && isItemId(line[m].id) && Object.keys(line[m]).length === 1)
      )
        errors.push(validationError('association', at(m)));
    if (line.kind !== undefined && line.kind !== null && !(CHARGE_KINDS as readonly unknown[]).includes(line.kind))
      errors.push(validationError('invalid', at('kind'), `must be one of ${CHARGE_KINDS.join(', ')} or null`));
  });
  return errors;
}

/** A `lines` field: JSON of exact decimals, checked by checkLinesInput; `charge` on invoices' lines. */
export function linesField(column: string, opts: { withCharge?: boolean; description?: string } = {}): ScalarField {
  const schema = Type.Array(lineSchema(!!opts.withCharge), { maxItems: MAX_LINES });
  return {
    kind: 'scalar',
    column,
    type: 'json',
    schema,
    valueSchema: schema,
    check: checkLinesInput,
    description: opts.description,
    references: {
      '[].taxRate': 'taxRates',
      '[].product': 'products',
      ...(opts.withCharge ? { '[].charge': 'charges' } : {}),
    },
  };
}

/** A line as stored and shown. */
export interface Line {
  description: string;
  quantity: number;
  unitPrice: number;
  taxRate: { id: number } | null;
  product: { id: number } | null;
  kind: string | null;
  taxPercent: number | null;
  subtotal: number;
  tax: number;
  total: number;
  charge?: { id: number } | null;
}

export interface Priced {
  lines: Line[];
  /** Stored units (10^-4). */
  subtotal: number;
  taxTotal: number;
  total: number;
}

/** Sums of lines in stored units; `undefined` past the 1e9 bound (a failure naming `lines`). */
export function totalsOf(lines: { subtotal: number; tax: number; total: number }[]): Omit<Priced, 'lines'> | undefined {
  let subtotal = 0n;
  let taxTotal = 0n;
  for (const l of lines) {
    subtotal += BigInt(l.subtotal);
    taxTotal += BigInt(l.tax);
  }
  const total = subtotal + taxTotal;
  const out = { subtotal: Number(subtotal), taxTotal: Number(taxTotal), total: Number(total) };
  return withinLimit(out.subtotal) && withinLimit(out.taxTotal) && withinLimit(out.total) ? out : undefined;
}

/**
 * In the transaction: the lines a client sent, priced. The account currency's decimals on
 * `unitPrice`, tax rates and products of the account (not deleted), each line's amounts and the
 * document's totals within 1e9: failures name `lines[i].member`, or `lines`.
 */
export async function priceLines(
  db: Executor,
  accountId: number,
  input: Record<string, unknown>[],
  exponent: number,
  name = 'lines',
): Promise<{ priced?: Priced; errors: ApiErrorBody[] }> {
  const errors: ApiErrorBody[] = [];
  const rateIds = [
    ...new Set(input.map((l) => (l.taxRate as { id: number } | null)?.id).filter((x) => x !== undefined)),
  ];
  const productIds = [
    ...new Set(input.map((l) => (l.product as { id: number } | null)?.id).filter((x) => x !== undefined)),
  ];
  const rates = new Map<number, number>();
  if (rateIds.length)
    for (const r of await db
      .selectFrom('tax_rates')
      .select(['id', 'percent'])
      .where('account_id', '=', accountId)
      .where('id', 'in', rateIds as number[])
      .where('deleted', '=', 0)
      .execute())
      rates.set(r.id, Number(r.percent));
  const products = new Set<number>();
  if (productIds.length)
    for (const p of await db
      .selectFrom('products')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', 'in', productIds as number[])
      .where('deleted', '=', 0)
      .execute())
      products.add(p.id);
  const lines: Line[] = [];
  input.forEach((l, i) => {
    const at = (m: string) => `${name}[${i}].${m}`;
    const rate = (l.taxRate as { id: number } | null | undefined) ?? null;
    const product = (l.product as { id: number } | null | undefined) ?? null;
    if (decimalsOf(l.unitPrice as number) > exponent)
      errors.push(
        validationError('invalid', at('unitPrice'), `must have at most ${exponent} decimals (the account's currency)`),
      );
    if (rate && !rates.has(rate.id)) errors.push(validationError('reference', at('taxRate')));
    if (product && !products.has(product.id)) errors.push(validationError('reference', at('product')));
    const percent = rate ? (rates.get(rate.id) ?? null) : null;
    const a = lineAmounts(
      toScaled(l.quantity as number, QUANTITY_SCALE),
      toScaledNearest(l.unitPrice as number, MONEY_SCALE),
      percent,
      exponent,
    );
    if (!withinLimit(a.subtotal) || !withinLimit(a.total))
      errors.push(
        validationError('invalid', at('quantity'), 'subtotal and total must stay within 1,000,000,000 in magnitude'),
      );
    lines.push({
      description: l.description as string,
      quantity: l.quantity as number,
      unitPrice: l.unitPrice as number,
      taxRate: rate ? { id: rate.id } : null,
      product: product ? { id: product.id } : null,
      kind: (l.kind as string | null | undefined) ?? null,
      taxPercent: percent === null ? null : fromScaled(percent, PERCENT_SCALE),
      subtotal: fromScaled(a.subtotal, MONEY_SCALE),
      tax: fromScaled(a.tax, MONEY_SCALE),
      total: fromScaled(a.total, MONEY_SCALE),
    });
  });
  if (errors.length) return { errors };
  const totals = totalsOf(lines.map(scaledAmounts));
  if (!totals)
    return {
      errors: [validationError('invalid', name, "the document's totals must stay within 1,000,000,000 in magnitude")],
    };
  return { priced: { lines, ...totals }, errors };
}

/** A line's amounts back in stored units (exact: the JSON numbers are decimals of ≤ 4 places). */
export const scaledAmounts = (l: Pick<Line, 'subtotal' | 'tax' | 'total'>) => ({
  subtotal: toScaled(l.subtotal, MONEY_SCALE),
  tax: toScaled(l.tax, MONEY_SCALE),
  total: toScaled(l.total, MONEY_SCALE),
});

/** The columns of a charge a document line copies (lineOfCharge), as quotes and invoices select them. */
export const CHARGE_LINE_COLUMNS = [
  'id',
  'description',
  'quantity',
  'unit_price',
  'tax_rate_id',
  'product_id',
  'kind',
  'tax_percent',
  'subtotal',
  'tax',
  'total',
] as const;

/** A stored charge row as a document line (amounts copied as the charge has them). */
export function lineOfCharge(c: {
  id: number;
  description: string;
  quantity: number | string | bigint;
  unit_price: number | string | bigint;
  tax_rate_id: number | null;
  product_id: number | null;
  kind: string;
  tax_percent: number | string | bigint | null;
  subtotal: number | string | bigint;
  tax: number | string | bigint;
  total: number | string | bigint;
}): Line {
  return {
    description: c.description,
    quantity: fromScaled(Number(c.quantity), QUANTITY_SCALE),
    unitPrice: fromScaled(Number(c.unit_price), MONEY_SCALE),
    taxRate: c.tax_rate_id === null ? null : { id: c.tax_rate_id },
    product: c.product_id === null ? null : { id: c.product_id },
    kind: c.kind,
    taxPercent: c.tax_percent === null ? null : fromScaled(Number(c.tax_percent), PERCENT_SCALE),
    subtotal: fromScaled(Number(c.subtotal), MONEY_SCALE),
    tax: fromScaled(Number(c.tax), MONEY_SCALE),
    total: fromScaled(Number(c.total), MONEY_SCALE),
  };
}

/**
 * A document built from a job's charges (a quote from its quoted charges, an invoice from the
 * charges it bills): a line per charge and the totals, under the same bounds as lines sent (at
 * most MAX_LINES, totals within 1e9), else the failure naming `lines`.
 */
export function linesOfCharges(
  charges: Parameters<typeof lineOfCharge>[0][],
  withCharge: boolean,
): { lines: Line[]; totals: Omit<Priced, 'lines'> } | { errors: ApiErrorBody[] } {
  if (charges.length > MAX_LINES)
    return {
      errors: [
        validationError(
          'invalid',
          'lines',
          `at most ${MAX_LINES} lines; the job has ${charges.length} charges to copy: send lines instead`,
        ),
      ],
    };
  const lines = charges.map((c) => (withCharge ? { ...lineOfCharge(c), charge: { id: c.id } } : lineOfCharge(c)));
  const totals = totalsOf(lines.map(scaledAmounts));
  if (!totals)
    return {
      errors: [
        validationError('invalid', 'lines', "the document's totals must stay within 1,000,000,000 in magnitude"),
      ],
    };
  return { lines, totals };
}
