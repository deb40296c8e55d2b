import type { Measurement } from './load.js';

export interface Row {
  label: string;
  m?: Measurement;
  rssMb?: number;
  note?: string;
}

const num = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits));

/** The printed table (also valid Markdown). */
export function table(rows: Row[]): string {
  const head = [
    'workload',
    'requests/s',
    'items/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'peak RSS MB',
    'CPU µs/req',
    'statements/req',
  ];
  const lines = rows.map((r) => [
    r.label,
    r.m ? num(r.m.requestsPerSecond) : (r.note ?? 'unavailable'),
    num(r.m?.itemsPerSecond),
    num(r.m?.p50, 1),
    num(r.m?.p99, 1),
    r.m ? String(r.m.errors) : '–',
    num(r.rssMb),
    num(r.m?.cpuUs),
    num(r.m?.statements, 2),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  return [
    fmt(head),
    `|${widths.map((w, i) => (i === 0 ? ':' : '') + '-'.repeat(w + 1) + (i === 0 ? '' : ':')).join('|')}|`,
    ...lines.map(fmt),
  ].join('\n');
}

export interface Target {
  name: string;
  value: number | undefined;
  ok: (v: number) => boolean;
  want: string;
}

export function targets(ts: Target[]): string {
  return ts
    .map(
      (t) =>
        `${t.value === undefined ? 'n/a    ' : t.ok(t.value) ? 'met    ' : 'NOT met'}  ${t.name}: ${t.value === undefined ? 'not measured' : t.value.toFixed(2)} (target ${t.want})`,
    )
    .join('\n');
}

const COLOURS = [
  '#2563eb',
  '#dc2626',
  '#16a34a',
  '#9333ea',
  '#ea580c',
  '#0891b2',
  '#4b5563',
  '#ca8a04',
  '#db2777',
  '#65a30d',
];

/**
 * The latency distribution of every measured series as an SVG line chart: percentile (x, spaced
 * as 1/(1-p) so the tail is readable) against milliseconds (y, logarithmic).
 */
export function latencyChart(title: string, series: { label: string; m: Measurement }[]): string {
  const W = 900;
  const H = 480;
  const L = 70;
  const R = 230;
  const T = 40;
  const B = 50;
  const xs = (p: number) => Math.log10(1 / (1 - p / 100));
  const xMax = xs(99.99);
  const all = series.flatMap((s) => s.m.percentiles.map(([, v]) => Math.max(v, 0.1)));
  const yMin = Math.pow(10, Math.floor(Math.log10(Math.min(...all))));
  const yMax = Math.pow(10, Math.ceil(Math.log10(Math.max(...all))));
  const X = (p: number) => L + ((W - L - R) * xs(p)) / xMax;
  const Y = (v: number) =>
    T + (H - T - B) * (1 - (Math.log10(Math.max(v, 0.1)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin)));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="24" font-size="15" font-weight="bold">${escape(title)}</text>`,
  ];
  for (const p of [0, 50, 90, 99, 99.9, 99.99]) {
    out.push(
      `<line x1="${X(p)}" x2="${X(p)}" y1="${T}" y2="${H - B}" stroke="#e5e7eb"/>`,
      `<text x="${X(p)}" y="${H - B + 18}" text-anchor="middle">p${p}</text>`,
    );
  }
  for (let v = yMin; v <= yMax; v *= 10) {
    out.push(
      `<line x1="${L}" x2="${W - R}" y1="${Y(v)}" y2="${Y(v)}" stroke="#e5e7eb"/>`,
      `<text x="${L - 6}" y="${Y(v) + 4}" text-anchor="end">${v >= 1 ? v : v.toFixed(1)} ms</text>`,
    );
  }
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle">percentile of requests</text>`);
  series.forEach((s, i) => {
    const c = COLOURS[i % COLOURS.length];
    const pts = s.m.percentiles.map(([p, v]) => `${X(p).toFixed(1)},${Y(v).toFixed(1)}`).join(' ');
    const dash = i >= COLOURS.length ? ' stroke-dasharray="6 3"' : '';
    out.push(`<polyline fill="none" stroke="${c}" stroke-width="2"${dash} points="${pts}"/>`);
    out.push(
      `<rect x="${W - R + 15}" y="${T + i * 20}" width="12" height="12" fill="${c}"/>`,
      `<text x="${W - R + 32}" y="${T + i * 20 + 10}">${escape(s.label)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n');
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
