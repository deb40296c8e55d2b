/**
 * Exact decimal values (PRODUCT §9): money, quantities and percentages are stored as integers of a
 * fixed scale, never as binary floating point, and every product goes through BigInt.
 *
 * - Money is stored in units of 10^-4 of the currency (`MONEY_SCALE`): 4 is the largest ISO 4217
 *   exponent of an active currency (CLF, UYW), so every currency's minor unit is a whole number of
 *   stored units (USD: 1 cent = 100 units, JPY: 1 yen = 10,000 units, KWD: 1 fils = 10 units), and
 *   one column type and one conversion serve every account. The currency's own exponent is what a
 *   value may carry (`checkCurrencyDecimals`) and what line amounts are rounded to (`lineAmounts`).
 * - Quantities are stored in thousandths (3 decimals), tax percentages in units of 10^-4 (4 decimals).
 *
 * Why reading the double is exact. Fastify hands the body over as JSON.parse made it: each number
 * is the double nearest to its text. A decimal of at most 15 significant digits survives that
 * round trip: doubles have 53-bit significands, and 10^15 < 2^53 - 1, so (the classic result of
 * Matula and of Goldberg, "What every computer scientist should know about floating-point", Theorem
 * 15) the nearest double to a decimal of ≤ 15 digits converts back to that same decimal, and
 * ECMAScript's Number::toString gives the SHORTEST decimal that reads back to the same double, so
 * `String(n)` is the sent text up to trailing zeros. Every value this module accepts has at most
 * 10 integer digits (|x| ≤ 1e9) and at most 4 decimals: ≤ 14 significant digits, within the bound.
 * Hence `decimalText(n)` IS the value sent, and its digits are turned into an integer by string
 * arithmetic, never by multiplying a double. A text with more decimals than allowed either keeps
 * them in String(n) (refused), or names a double whose shortest form has them (refused). The one
 * case a double cannot tell apart is a text of more than 15 significant digits whose nearest
 * double is a short decimal (`1.0000000000000001` is the double 1): such a text is taken as the
 * value JSON.parse gives (documented in docs/money.md).
 */

import type { Executor } from '../../db/tx.js';
import { validationError, type ApiErrorBody } from '../../errors.js';
import { dateFormat, partsOf, type DateStyle } from '../../time/format.js';

/** What a product, charge or line is (PRODUCT §9). */
export const CHARGE_KINDS = ['labour', 'material', 'service', 'expense'] as const;

export const MONEY_SCALE = 4;
export const QUANTITY_SCALE = 3;
export const PERCENT_SCALE = 4;
/** The largest magnitude of any amount, quantity, or document total (PRODUCT §9). */
export const LIMIT = 1_000_000_000;

/** Active ISO 4217 codes and their minor-unit exponents (funds and metals without one are left out). */
export const CURRENCIES: Readonly<Record<string, number>> = Object.freeze({
  AED: 2, AFN: 2, ALL: 2, AMD: 2, AOA: 2, ARS: 2, AUD: 2, AWG: 2, AZN: 2, BAM: 2, BBD: 2, BDT: 2,
  BGN: 2, BHD: 3, BIF: 0, BMD: 2, BND: 2, BOB: 2, BOV: 2, BRL: 2, BSD: 2, BTN: 2, BWP: 2, BYN: 2,
  BZD: 2, CAD: 2, CDF: 2, CHE: 2, CHF: 2, CHW: 2, CLF: 4, CLP: 0, CNY: 2, COP: 2, COU: 2, CRC: 2,
  CUP: 2, CVE: 2, CZK: 2, DJF: 0, DKK: 2, DOP: 2, DZD: 2, EGP: 2, ERN: 2, ETB: 2, EUR: 2, FJD: 2,
  FKP: 2, GBP: 2, GEL: 2, GHS: 2, GIP: 2, GMD: 2, GNF: 0, GTQ: 2, GYD: 2, HKD: 2, HNL: 2, HTG: 2,
  HUF: 2, IDR: 2, ILS: 2, INR: 2, IQD: 3, IRR: 2, ISK: 0, JMD: 2, JOD: 3, JPY: 0, KES: 2, KGS: 2,
  KHR: 2, KMF: 0, KPW: 2, KRW: 0, KWD: 3, KYD: 2, KZT: 2, LAK: 2, LBP: 2, LKR: 2, LRD: 2, LSL: 2,
  LYD: 3, MAD: 2, MDL: 2, MGA: 2, MKD: 2, MMK: 2, MNT: 2, MOP: 2, MRU: 2, MUR: 2, MVR: 2, MWK: 2,
  MXN: 2, MXV: 2, MYR: 2, MZN: 2, NAD: 2, NGN: 2, NIO: 2, NOK: 2, NPR: 2, NZD: 2, OMR: 3, PAB: 2,
  PEN: 2, PGK: 2, PHP: 2, PKR: 2, PLN: 2, PYG: 0, QAR: 2, RON: 2, RSD: 2, RUB: 2, RWF: 0, SAR: 2,
  SBD: 2, SCR: 2, SDG: 2, SEK: 2, SGD: 2, SHP: 2, SLE: 2, SOS: 2, SRD: 2, SSP: 2, STN: 2, SVC: 2,
  SYP: 2, SZL: 2, THB: 2, TJS: 2, TMT: 2, TND: 3, TOP: 2, TRY: 2, TTD: 2, TWD: 2, TZS: 2, UAH: 2,
  UGX: 0, USD: 2, USN: 2, UYI: 0, UYU: 2, UYW: 4, UZS: 2, VED: 2, VES: 2, VND: 0, VUV: 0, WST: 2,
  XAF: 0, XCD: 2, XCG: 2, XOF: 0, XPF: 0, YER: 2, ZAR: 2, ZMW: 2, ZWG: 2,
}); // prettier-ignore

export const isCurrency = (code: string): boolean => Object.hasOwn(CURRENCIES, code);
/** The currency's exponent (2 for an unknown code, which account creation never stores). */
export const exponentOf = (code: string): number => CURRENCIES[code] ?? 2;

/** Whether the IANA time zone is one this process knows (Intl). */
export function isTimeZone(zone: string): boolean {
  if (!/^[A-Za-z0-9_+\-/]{1,64}$/.test(zone)) return false;
  try {
    dateFormat('en-US', zone);
    return true;
  } catch {
    return false;
  }
}

const CALENDAR_DATE: DateStyle = { year: 'numeric', month: '2-digit', day: '2-digit' };

/** The calendar date `YYYY-MM-DD` of an instant in a time zone. */
export function dateIn(zone: string, ms: number): string {
  const d = partsOf('en-CA', zone, CALENDAR_DATE, ms);
  return `${d.year}-${d.month}-${d.day}`;
}

/** The plain decimal text of a finite double (String(n) in exponent form written out). */
export function decimalText(n: number): string {
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, lead, frac = '', expText] = m;
  const exp = Number(expText);
  const digits = lead + frac;
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  return sign + digits.padEnd(exp + 1, '0');
}

/** The decimals a finite number carries, as JSON would have sent it (see the proof above). */
export function decimalsOf(n: number): number {
  const t = decimalText(n);
  const dot = t.indexOf('.');
  return dot < 0 ? 0 : t.length - dot - 1;
}

/** Why `n` is no value of `scale` decimals within ±1e9 (undefined when it is one). */
export function scaledProblem(n: unknown, scale: number, decimals = scale): string | undefined {
  if (typeof n !== 'number' || !Number.isFinite(n)) return 'must be a finite number';
  if (Math.abs(n) > LIMIT) return `must be at most ${LIMIT.toLocaleString('en-US')} in magnitude`;
  if (decimalsOf(n) > decimals) return `must have at most ${decimals} decimal${decimals === 1 ? '' : 's'}`;
  return undefined;
}

/**
 * Why `n` is no amount of money, leaving its decimals out: those are the account currency's
 * (checkCurrencyDecimals, priceLines), so a USD amount with float noise (16.990000000000002) hears
 * "at most 2 decimals", not the 4 the storage keeps.
 */
export function moneyProblem(n: unknown): string | undefined {
  return scaledProblem(n, MONEY_SCALE, Infinity);
}

/**
 * `n` as the nearest integer count of 10^-scale (half away from zero): the column of an amount whose
 * extra decimals fail later, with the currency's message, so nothing rounded is ever written.
 */
export function toScaledNearest(n: number, scale: number): number {
  const t = decimalText(n);
  const negative = t.startsWith('-');
  const [int, frac = ''] = (negative ? t.slice(1) : t).split('.');
  if (frac.length <= scale) return toScaled(n, scale);
  const v = Number(int + frac.slice(0, scale)) + (frac[scale] >= '5' ? 1 : 0);
  return negative && v !== 0 ? -v : v;
}

/** `n` as an integer count of 10^-scale, exactly (string arithmetic; `n` passed scaledProblem). */
export function toScaled(n: number, scale: number): number {
  const t = decimalText(n);
  const negative = t.startsWith('-');
  const [int, frac = ''] = (negative ? t.slice(1) : t).split('.');
  if (frac.length > scale) throw new RangeError(`${t} has more than ${scale} decimals`);
  const v = Number(int + frac.padEnd(scale, '0'));
  return negative && v !== 0 ? -v : v;
}

/**
 * A stored integer of 10^-scale as the JSON number it stands for: one IEEE division of two exact
 * integers is correctly rounded, so it is the double nearest the decimal, whose shortest form (what
 * JSON.stringify writes) is that decimal: the proof above, read backwards.
 */
export const fromScaled = (v: number, scale: number): number => v / 10 ** scale;

/** a / b rounded to the nearest integer, halves away from zero (b > 0). */
export function divRound(a: bigint, b: bigint): bigint {
  const q = a / b;
  const r = a % b;
  if (r === 0n) return q;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice >= b) return a < 0n ? q - 1n : q + 1n;
  return q;
}

/** A line's amounts in stored money units (10^-4), rounded to the currency's minor unit. */
export interface LineAmounts {
  subtotal: number;
  tax: number;
  total: number;
}

/**
 * PRODUCT §9's two roundings, written once: `subtotal` = quantity × unitPrice rounded to the minor
 * unit, `tax` = subtotal × percent / 100 rounded the same way, halves away from zero; `total` their
 * sum. Inputs are stored integers (quantity in 10^-3, unitPrice in 10^-4, percent in 10^-4 or null).
 */
export function lineAmounts(
  quantity: number,
  unitPrice: number,
  percent: number | null,
  exponent: number,
): LineAmounts {
  const unit = 10n ** BigInt(MONEY_SCALE - exponent); // stored units per minor unit
  // quantity·10^3 × price·10^4 = value·10^7; in minor units: / (10^3 · unit)
  const minor = divRound(BigInt(quantity) * BigInt(unitPrice), 10n ** BigInt(QUANTITY_SCALE) * unit);
  const subtotal = minor * unit;
  // subtotal (units) × percent·10^4 / (100·10^4) in minor units: / (10^6 · unit)
  const taxMinor =
    percent === null ? 0n : divRound(subtotal * BigInt(percent), 10n ** BigInt(PERCENT_SCALE + 2) * unit);
  const tax = taxMinor * unit;
  return { subtotal: Number(subtotal), tax: Number(tax), total: Number(subtotal + tax) };
}

/** Whether stored money units are within ±1e9. */
export const withinLimit = (units: number): boolean => Math.abs(units) <= LIMIT * 10 ** MONEY_SCALE;

/** The account's currency and time zone (fixed at creation), asked once per write through `once`. */
export async function accountMoney(
  db: Executor,
  accountId: number,
): Promise<{ currency: string; exponent: number; timeZone: string }> {
  const row = await db
    .selectFrom('accounts')
    .select(['currency', 'time_zone'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { currency: row.currency, exponent: exponentOf(row.currency), timeZone: row.time_zone };
}

/** The account's time zone (PRODUCT §1), from the same read. */
export async function accountZone(db: Executor, accountId: number): Promise<string> {
  return (await accountMoney(db, accountId)).timeZone;
}

/**
 * Money members of an item carry at most the account currency's decimals (the schema let up to 4
 * through, the largest exponent): one failure naming each field that has more. `prefix` names a
 * member of a line (`lines[2].`).
 */
export function checkCurrencyDecimals(
  fields: Record<string, { kind: string; money?: boolean }>,
  item: Record<string, unknown>,
  exponent: number,
  prefix = '',
): ApiErrorBody[] {
  const errors: ApiErrorBody[] = [];
  for (const [name, field] of Object.entries(fields)) {
    const v = item[name];
    if (field.kind !== 'scalar' || !field.money || typeof v !== 'number') continue;
    if (decimalsOf(v) > exponent)
      errors.push(
        validationError(
          'invalid',
          `${prefix}${name}`,
          `must have at most ${exponent} decimal${exponent === 1 ? '' : 's'} (the account's currency)`,
        ),
      );
  }
  return errors;
}
