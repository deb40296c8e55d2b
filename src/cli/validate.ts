import { isCurrency, isTimeZone } from '../collections/machinery/money.js';
/** Input rules of the admin CLI, the same as the API's for users (PRODUCT §3). */
export class UsageError extends Error {}
/** A command that could not do what it was asked (no such account, invalid input): exit 1. */
export class CommandError extends Error {}

export const MOBILE = /^\+\d{7,15}$/;
export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD = 10;

export function checkAccountInput(v: {
  mobile: string;
  password: string;
  email?: string;
  login: string;
  currency?: string;
  timeZone?: string;
}): void {
  if (v.currency !== undefined && !isCurrency(v.currency))
    throw new UsageError('--currency must be an active ISO 4217 code in upper case, such as USD');
  if (v.timeZone !== undefined && !isTimeZone(v.timeZone))
    throw new UsageError('--time-zone must be an IANA time zone, such as Europe/Paris');
  if (!MOBILE.test(v.mobile)) throw new UsageError('--mobile must be + followed by 7 to 15 digits');
  if (v.password.length < MIN_PASSWORD) throw new UsageError(`--password must be at least ${MIN_PASSWORD} characters`);
  if (v.email !== undefined && !EMAIL.test(v.email)) throw new UsageError('--email is not a valid e-mail address');
  if (v.login.length > 200 || /\s/.test(v.login))
    throw new UsageError('--login must be at most 200 characters without spaces');
}
