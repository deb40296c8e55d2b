/**
 * Intl date formatters, built once per style, locale and zone: building one costs tens of
 * microseconds (more than formatting with it), and a booking page formats about 150 times.
 * A style is a module's constant (its identity is the key: no key is built per call).
 */
export type DateStyle = Readonly<Omit<Intl.DateTimeFormatOptions, 'timeZone'>>;

const built = new Map<DateStyle, Map<string, Intl.DateTimeFormat>>();
/** Zones are validated and few; the bound keeps a process safe whatever it is asked. */
const MOST = 2000;
let count = 0;

export function dateFormat(locale: string, timeZone: string, style: DateStyle = {}): Intl.DateTimeFormat {
  let byZone = built.get(style);
  if (!byZone) built.set(style, (byZone = new Map()));
  const key = `${locale}\u0000${timeZone}`;
  let f = byZone.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { ...style, timeZone });
    if (count >= MOST) {
      built.clear();
      built.set(style, (byZone = new Map()));
      count = 0;
    }
    byZone.set(key, f);
    count++;
  }
  return f;
}

/** The parts of `ms` as `{year, month, day, hour, …}` of a cached formatter. */
export function partsOf(locale: string, timeZone: string, style: DateStyle, ms: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of dateFormat(locale, timeZone, style).formatToParts(ms)) out[p.type] = p.value;
  return out;
}
