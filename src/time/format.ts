/**
 * Intl date formatters, built once per locale, options and zone: building one costs tens of
 * microseconds (more than formatting with it), and a booking page formats about 150 times.
 */
const built = new Map<string, Intl.DateTimeFormat>();
/** Zones are validated and few; the bound keeps a process safe whatever it is asked. */
const MOST = 2000;

export function dateFormat(locale: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}\u0000${JSON.stringify(options)}`;
  let f = built.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, options);
    if (built.size >= MOST) built.clear();
    built.set(key, f);
  }
  return f;
}

/** The parts of `ms` as `{year, month, day, hour, …}` of a cached formatter. */
export function partsOf(locale: string, options: Intl.DateTimeFormatOptions, ms: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of dateFormat(locale, options).formatToParts(ms)) out[p.type] = p.value;
  return out;
}
