import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { offsetAt } from './local-time.js';

/** What Intl says the zone's clock shows at `ms`, as an offset: the reference the remembered offsets must match. */
function intlOffset(ms: number, timeZone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const local = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second);
  return local - Math.floor(ms / 1000) * 1000;
}

describe('offsetAt (remembered per quarter hour)', () => {
  // Spring forward and fall back in London, Lord Howe's half-hour change, Kathmandu's +05:45, and a
  // zone whose change fell at a half hour of UTC (Newfoundland, 2026), and Monrovia's change of
  // 1972 from −00:44:30, inside a quarter hour (the quarter that is not remembered).
  const changes: [string, string][] = [
    ['Europe/London', '2026-03-29T01:00:00Z'],
    ['Europe/London', '2026-10-25T01:00:00Z'],
    ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
    ['Australia/Lord_Howe', '2026-10-03T15:30:00Z'],
    ['America/St_Johns', '2026-03-08T05:30:00Z'],
    ['Asia/Kathmandu', '2026-06-01T00:00:00Z'],
    ['Africa/Monrovia', '1972-01-07T00:44:30Z'],
  ];
  for (const [zone, at] of changes)
    it(`matches Intl at every second around ${at} in ${zone}`, () => {
      const t = Date.parse(at);
      for (let ms = t - 1_200_000; ms <= t + 1_200_000; ms += 1000) {
        // Asked in the order slots ask (increasing), and with a sub-second part.
        assert.equal(offsetAt(ms + 250, zone), intlOffset(ms + 250, zone), new Date(ms).toISOString());
      }
      // And asked again, now remembered.
      for (let ms = t - 1_200_000; ms <= t + 1_200_000; ms += 7_000)
        assert.equal(offsetAt(ms, zone), intlOffset(ms, zone), new Date(ms).toISOString());
    });

  it('a change of offset shows on both sides of its second', () => {
    const t = Date.parse('2026-03-29T01:00:00Z');
    assert.equal(offsetAt(t - 1, 'Europe/London'), 0);
    assert.equal(offsetAt(t, 'Europe/London'), 3_600_000);
  });
});
