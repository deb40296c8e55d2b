/**
 * Calendar arithmetic of maintenance (PRODUCT §16), on `YYYY-MM-DD` dates: no time zone, no
 * database. A month lacking the day of `date + N months` gives its last day (31 January + 1 month
 * is 28 or 29 February).
 */

/** The number of days of a month (`month` 1–12). */
export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** `date` plus `months` calendar months (may be negative), the day clamped to the month's last. */
export function addMonths(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number);
  const index = y * 12 + (m - 1) + months;
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  const day = Math.min(d, daysInMonth(year, month));
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** `date` plus `days` days (may be negative). */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number);
  return utc(y, m, d + days)
    .toISOString()
    .slice(0, 10);
}

/** The UTC midnight of a date (`day` may run past the month); years below 100 as they are (Date.UTC reads them as 19xx). */
export function utc(year: number, month: number, day: number): Date {
  const t = new Date(0);
  t.setUTCFullYear(year, month - 1, day);
  return t;
}

/**
 * When an asset is next due (PRODUCT §16): its last service, else its installation, plus its
 * interval in months; null without an interval or without either date.
 */
export function nextServiceDue(
  lastServicedOn: string | null,
  installedOn: string | null,
  intervalMonths: number | null,
): string | null {
  const base = lastServicedOn ?? installedOn;
  return base === null || intervalMonths === null ? null : addMonths(base, intervalMonths);
}
