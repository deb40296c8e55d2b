import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PERIODS, expand, parseRule, type Rule } from './rrule.js';
import { hasEnded, occurrenceDates, visitInterval } from './occurrences.js';
import { addMonths } from './dates.js';

const rule = (text: string): Rule => {
  const r = parseRule(text);
  if ('error' in r) throw new Error(`${text}: ${r.error}`);
  return r;
};
/** RFC 5545 writes dates as 19970902; we as 1997-09-02. */
const d = (compact: string) => `${compact.slice(0, 4)}-${compact.slice(4, 6)}-${compact.slice(6, 8)}`;
const days = (y: number, m: number, list: number[]) =>
  list.map((n) => `${y}-${String(m).padStart(2, '0')}-${String(n).padStart(2, '0')}`);
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/**
 * RFC 5545 section 3.8.5.3's examples that fit PRODUCT §16's subset (dates only: no BYYEARDAY,
 * BYWEEKNO, BYHOUR…). Each: DTSTART, the rule, how far to look, and the dates the RFC lists. The
 * RFC's instances are at 09:00 New York time and its `UNTIL=19971224T000000Z` is midnight UTC,
 * before that day's instance: our UNTIL is a date, inclusive, so its equivalent is 19971223 (and
 * 19971007T000000Z is 19971006; 20000131T140000Z, 09:00 EST, is 20000131).
 */
const RFC_EXAMPLES: [string, string, string, string, string[]][] = [
  ['Daily for 10 occurrences', '19970902', 'FREQ=DAILY;COUNT=10', '19981231', days(1997, 9, range(2, 11))],
  [
    'Daily until December 24, 1997',
    '19970902',
    'FREQ=DAILY;UNTIL=19971223',
    '19981231',
    [
      ...days(1997, 9, range(2, 30)),
      ...days(1997, 10, range(1, 31)),
      ...days(1997, 11, range(1, 30)),
      ...days(1997, 12, range(1, 23)),
    ],
  ],
  [
    'Every other day, forever (to the end of 1997)',
    '19970902',
    'FREQ=DAILY;INTERVAL=2',
    '19971003',
    [...days(1997, 9, [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]), ...days(1997, 10, [2])],
  ],
  [
    'Every 10 days, 5 occurrences',
    '19970902',
    'FREQ=DAILY;INTERVAL=10;COUNT=5',
    '19981231',
    [...days(1997, 9, [2, 12, 22]), ...days(1997, 10, [2, 12])],
  ],
  [
    'Every day in January, for 3 years (YEARLY)',
    '19980101',
    'FREQ=YEARLY;UNTIL=20000131;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA',
    '20011231',
    [1998, 1999, 2000].flatMap((y) => days(y, 1, range(1, 31))),
  ],
  [
    'Every day in January, for 3 years (DAILY)',
    '19980101',
    'FREQ=DAILY;UNTIL=20000131;BYMONTH=1',
    '20011231',
    [1998, 1999, 2000].flatMap((y) => days(y, 1, range(1, 31))),
  ],
  [
    'Weekly for 10 occurrences',
    '19970902',
    'FREQ=WEEKLY;COUNT=10',
    '19981231',
    [...days(1997, 9, [2, 9, 16, 23, 30]), ...days(1997, 10, [7, 14, 21, 28]), ...days(1997, 11, [4])],
  ],
  [
    'Weekly until December 24, 1997',
    '19970902',
    'FREQ=WEEKLY;UNTIL=19971223',
    '19981231',
    [
      ...days(1997, 9, [2, 9, 16, 23, 30]),
      ...days(1997, 10, [7, 14, 21, 28]),
      ...days(1997, 11, [4, 11, 18, 25]),
      ...days(1997, 12, [2, 9, 16, 23]),
    ],
  ],
  [
    'Every other week, forever (to February 1998)',
    '19970902',
    'FREQ=WEEKLY;INTERVAL=2;WKST=SU',
    '19980228',
    [
      ...days(1997, 9, [2, 16, 30]),
      ...days(1997, 10, [14, 28]),
      ...days(1997, 11, [11, 25]),
      ...days(1997, 12, [9, 23]),
      ...days(1998, 1, [6, 20]),
      ...days(1998, 2, [3, 17]),
    ],
  ],
  [
    'Weekly on Tuesday and Thursday for five weeks (UNTIL)',
    '19970902',
    'FREQ=WEEKLY;UNTIL=19971006;WKST=SU;BYDAY=TU,TH',
    '19981231',
    [...days(1997, 9, [2, 4, 9, 11, 16, 18, 23, 25, 30]), ...days(1997, 10, [2])],
  ],
  [
    'Weekly on Tuesday and Thursday for five weeks (COUNT)',
    '19970902',
    'FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH',
    '19981231',
    [...days(1997, 9, [2, 4, 9, 11, 16, 18, 23, 25, 30]), ...days(1997, 10, [2])],
  ],
  [
    'Every other week on Monday, Wednesday, and Friday until December 24, 1997',
    '19970901',
    'FREQ=WEEKLY;INTERVAL=2;UNTIL=19971223;WKST=SU;BYDAY=MO,WE,FR',
    '19981231',
    [
      ...days(1997, 9, [1, 3, 5, 15, 17, 19, 29]),
      ...days(1997, 10, [1, 3, 13, 15, 17, 27, 29, 31]),
      ...days(1997, 11, [10, 12, 14, 24, 26, 28]),
      ...days(1997, 12, [8, 10, 12, 22]),
    ],
  ],
  [
    'Every other week on Tuesday and Thursday, for 8 occurrences',
    '19970902',
    'FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH',
    '19981231',
    [...days(1997, 9, [2, 4, 16, 18, 30]), ...days(1997, 10, [2, 14, 16])],
  ],
  [
    'Monthly on the first Friday for 10 occurrences',
    '19970905',
    'FREQ=MONTHLY;COUNT=10;BYDAY=1FR',
    '19991231',
    [
      '1997-09-05',
      '1997-10-03',
      '1997-11-07',
      '1997-12-05',
      '1998-01-02',
      '1998-02-06',
      '1998-03-06',
      '1998-04-03',
      '1998-05-01',
      '1998-06-05',
    ],
  ],
  [
    'Monthly on the first Friday until December 24, 1997',
    '19970905',
    'FREQ=MONTHLY;UNTIL=19971223;BYDAY=1FR',
    '19991231',
    ['1997-09-05', '1997-10-03', '1997-11-07', '1997-12-05'],
  ],
  [
    'Every other month on the first and last Sunday of the month for 10 occurrences',
    '19970907',
    'FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU',
    '19991231',
    [
      '1997-09-07',
      '1997-09-28',
      '1997-11-02',
      '1997-11-30',
      '1998-01-04',
      '1998-01-25',
      '1998-03-01',
      '1998-03-29',
      '1998-05-03',
      '1998-05-31',
    ],
  ],
  [
    'Monthly on the second-to-last Monday of the month for 6 months',
    '19970922',
    'FREQ=MONTHLY;COUNT=6;BYDAY=-2MO',
    '19991231',
    ['1997-09-22', '1997-10-20', '1997-11-17', '1997-12-22', '1998-01-19', '1998-02-16'],
  ],
  [
    'Monthly on the third-to-the-last day of the month, forever',
    '19970928',
    'FREQ=MONTHLY;BYMONTHDAY=-3',
    '19980228',
    ['1997-09-28', '1997-10-29', '1997-11-28', '1997-12-29', '1998-01-29', '1998-02-26'],
  ],
  [
    'Monthly on the 2nd and 15th of the month for 10 occurrences',
    '19970902',
    'FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15',
    '19991231',
    [
      '1997-09-02',
      '1997-09-15',
      '1997-10-02',
      '1997-10-15',
      '1997-11-02',
      '1997-11-15',
      '1997-12-02',
      '1997-12-15',
      '1998-01-02',
      '1998-01-15',
    ],
  ],
  [
    'Monthly on the first and last day of the month for 10 occurrences',
    '19970930',
    'FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1',
    '19991231',
    [
      '1997-09-30',
      '1997-10-01',
      '1997-10-31',
      '1997-11-01',
      '1997-11-30',
      '1997-12-01',
      '1997-12-31',
      '1998-01-01',
      '1998-01-31',
      '1998-02-01',
    ],
  ],
  [
    'Every 18 months on the 10th thru 15th of the month for 10 occurrences',
    '19970910',
    'FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15',
    '20001231',
    [...days(1997, 9, range(10, 15)), ...days(1999, 3, range(10, 13))],
  ],
  [
    'Every Tuesday, every other month',
    '19970902',
    'FREQ=MONTHLY;INTERVAL=2;BYDAY=TU',
    '19980331',
    [
      ...days(1997, 9, [2, 9, 16, 23, 30]),
      ...days(1997, 11, [4, 11, 18, 25]),
      ...days(1998, 1, [6, 13, 20, 27]),
      ...days(1998, 3, [3, 10, 17, 24, 31]),
    ],
  ],
  [
    'Yearly in June and July for 10 occurrences',
    '19970610',
    'FREQ=YEARLY;COUNT=10;BYMONTH=6,7',
    '20091231',
    range(1997, 2001).flatMap((y) => [`${y}-06-10`, `${y}-07-10`]),
  ],
  [
    'Every other year on January, February, and March for 10 occurrences',
    '19970310',
    'FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3',
    '20091231',
    ['1997-03-10', ...[1999, 2001, 2003].flatMap((y) => [`${y}-01-10`, `${y}-02-10`, `${y}-03-10`])],
  ],
  [
    'Every 20th Monday of the year, forever',
    '19970519',
    'FREQ=YEARLY;BYDAY=20MO',
    '19991231',
    ['1997-05-19', '1998-05-18', '1999-05-17'],
  ],
  [
    'Every Thursday in March, forever',
    '19970313',
    'FREQ=YEARLY;BYMONTH=3;BYDAY=TH',
    '19991231',
    [...days(1997, 3, [13, 20, 27]), ...days(1998, 3, [5, 12, 19, 26]), ...days(1999, 3, [4, 11, 18, 25])],
  ],
  [
    'Every Thursday, but only during June, July, and August, forever',
    '19970605',
    'FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8',
    '19981231',
    [
      ...days(1997, 6, [5, 12, 19, 26]),
      ...days(1997, 7, [3, 10, 17, 24, 31]),
      ...days(1997, 8, [7, 14, 21, 28]),
      ...days(1998, 6, [4, 11, 18, 25]),
      ...days(1998, 7, [2, 9, 16, 23, 30]),
      ...days(1998, 8, [6, 13, 20, 27]),
    ],
  ],
  [
    'The first Saturday that follows the first Sunday of the month, forever',
    '19970913',
    'FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13',
    '19980630',
    [
      '1997-09-13',
      '1997-10-11',
      '1997-11-08',
      '1997-12-13',
      '1998-01-10',
      '1998-02-07',
      '1998-03-07',
      '1998-04-11',
      '1998-05-09',
      '1998-06-13',
    ],
  ],
  [
    'U.S. Presidential Election day, every 4 years',
    '19961105',
    'FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8',
    '20051231',
    ['1996-11-05', '2000-11-07', '2004-11-02'],
  ],
  [
    'The third instance into the month of one of Tuesday, Wednesday, or Thursday, for the next 3 months',
    '19970904',
    'FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3',
    '19991231',
    ['1997-09-04', '1997-10-07', '1997-11-06'],
  ],
  [
    'The second-to-last weekday of the month',
    '19970929',
    'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2',
    '19980331',
    ['1997-09-29', '1997-10-30', '1997-11-27', '1997-12-30', '1998-01-29', '1998-02-26', '1998-03-30'],
  ],
  [
    'WKST=MO: every other week on Tuesday and Sunday',
    '19970805',
    'FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO',
    '19981231',
    ['1997-08-05', '1997-08-10', '1997-08-19', '1997-08-24'],
  ],
  [
    'WKST=SU: the same rule gives other dates',
    '19970805',
    'FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU',
    '19981231',
    ['1997-08-05', '1997-08-17', '1997-08-19', '1997-08-31'],
  ],
  [
    'An invalid date (30 February) is ignored',
    '20070115',
    'FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5',
    '20081231',
    ['2007-01-15', '2007-01-30', '2007-02-15', '2007-03-15', '2007-03-30'],
  ],
];

describe('RRULE expansion (PRODUCT §16) against RFC 5545 3.8.5.3', () => {
  for (const [name, start, text, last, want] of RFC_EXAMPLES)
    it(name, () => assert.deepEqual(expand(rule(text), d(start), d(last)), want));

  it('Friday the 13th: DTSTART is always the first instance (the RFC drops it with EXDATE; we with skipDates)', () => {
    const fridays = ['1998-02-13', '1998-03-13', '1998-11-13', '1999-08-13', '2000-10-13'];
    const r = rule('FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13');
    assert.deepEqual(expand(r, '1997-09-02', '2000-12-31'), ['1997-09-02', ...fridays]);
    const s = { rule: r, startDate: '1997-09-02', endDate: '2000-12-31', skipDates: ['1997-09-02'], horizonDays: 400 };
    assert.deepEqual(occurrenceDates(s, '1997-09-01'), ['1998-02-13', '1998-03-13']);
  });

  it('the start counts toward COUNT even when the rule would not give it', () => {
    assert.deepEqual(expand(rule('FREQ=WEEKLY;BYDAY=MO;COUNT=3'), '2026-01-01', '2026-12-31'), [
      '2026-01-01',
      '2026-01-05',
      '2026-01-12',
    ]);
  });

  it('MONTHLY and YEARLY without a day repeat the start day, a shorter month giving its last (PRODUCT §16)', () => {
    assert.deepEqual(expand(rule('FREQ=MONTHLY;COUNT=5'), '2024-01-31', '2030-01-01'), [
      '2024-01-31',
      '2024-02-29',
      '2024-03-31',
      '2024-04-30',
      '2024-05-31',
    ]);
    assert.deepEqual(expand(rule('FREQ=YEARLY;COUNT=3'), '2024-02-29', '2030-01-01'), [
      '2024-02-29',
      '2025-02-28',
      '2026-02-28',
    ]);
    assert.deepEqual(expand(rule('FREQ=MONTHLY;INTERVAL=3;COUNT=3'), '2025-11-30', '2030-01-01'), [
      '2025-11-30',
      '2026-02-28',
      '2026-05-30',
    ]);
    assert.equal(addMonths('2024-01-31', 1), '2024-02-29');
    assert.equal(addMonths('2024-03-31', -1), '2024-02-29');
    assert.equal(addMonths('2024-12-15', 1), '2025-01-15');
  });

  it('a long past start costs little without COUNT, and a rule matching nothing ends its expansion', () => {
    // The work is counted in periods looked at, not timed (timings belong to the bench).
    const daily = { periods: 0 };
    assert.deepEqual(expand(rule('FREQ=DAILY'), '0001-01-01', '2026-12-03', { from: '2026-12-01', walked: daily }), [
      '2026-12-01',
      '2026-12-02',
      '2026-12-03',
    ]);
    assert.ok(daily.periods <= 5, `two millennia of days are jumped over: ${daily.periods} periods looked at`);
    assert.deepEqual(expand(rule('FREQ=WEEKLY;BYDAY=TU'), '0001-01-02', '0001-01-20'), [
      '0001-01-02',
      '0001-01-09',
      '0001-01-16',
    ]);
    const none = { periods: 0 };
    assert.deepEqual(
      expand(rule('FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30;COUNT=5'), '1970-01-01', '2500-01-01', { walked: none }),
      ['1970-01-01'],
    );
    assert.ok(
      none.periods <= MAX_PERIODS + 2,
      `a rule matching nothing stops after ${MAX_PERIODS} periods: ${none.periods}`,
    );
    assert.ok(none.periods > MAX_PERIODS, 'and looks that far before it gives up');
  });

  it('refuses what the subset does not take, each with its reason', () => {
    for (const bad of [
      '',
      'RRULE:FREQ=DAILY',
      'FREQ=HOURLY',
      'FREQ=daily',
      'INTERVAL=2',
      'FREQ=DAILY;FREQ=WEEKLY',
      'FREQ=DAILY;INTERVAL=0',
      'FREQ=DAILY;INTERVAL=-1',
      'FREQ=DAILY;INTERVAL=1000',
      'FREQ=DAILY;INTERVAL=x',
      'FREQ=DAILY;COUNT=0',
      'FREQ=DAILY;COUNT=1.5',
      'FREQ=DAILY;COUNT=3;UNTIL=20260101',
      'FREQ=DAILY;UNTIL=20260230',
      'FREQ=DAILY;UNTIL=20260101T000000Z',
      'FREQ=DAILY;UNTIL=2026-01-01',
      'FREQ=WEEKLY;BYDAY=1MO',
      'FREQ=DAILY;BYDAY=-1FR',
      'FREQ=MONTHLY;BYDAY=6MO',
      'FREQ=MONTHLY;BYDAY=0MO',
      'FREQ=YEARLY;BYDAY=54MO',
      'FREQ=WEEKLY;BYDAY=XX',
      'FREQ=WEEKLY;BYDAY=MO,',
      'FREQ=WEEKLY;BYMONTHDAY=1',
      'FREQ=MONTHLY;BYMONTHDAY=0',
      'FREQ=MONTHLY;BYMONTHDAY=32',
      'FREQ=MONTHLY;BYMONTHDAY=-32',
      'FREQ=YEARLY;BYMONTH=13',
      'FREQ=YEARLY;BYMONTH=0',
      'FREQ=MONTHLY;BYSETPOS=1',
      'FREQ=MONTHLY;BYDAY=MO;BYSETPOS=0',
      'FREQ=MONTHLY;BYDAY=MO;BYSETPOS=367',
      'FREQ=WEEKLY;WKST=XX',
      'FREQ=YEARLY;BYYEARDAY=1',
      'FREQ=YEARLY;BYWEEKNO=20',
      'FREQ=DAILY;BYHOUR=9',
      'FREQ=DAILY;X-NAME=1',
      'FREQ=DAILY;',
      'FREQ=DAILY;;COUNT=2',
      'x'.repeat(501),
    ]) {
      const r = parseRule(bad);
      assert.ok('error' in r, bad);
      assert.ok((r as { error: string }).error.length > 5, bad);
    }
    for (const bad of [null, 3, ['FREQ=DAILY'], {}]) assert.ok('error' in parseRule(bad), JSON.stringify(bad));
  });

  it('the horizon: from the later of start and today to the earlier of end and today + horizonDays, less skipDates', () => {
    const s = {
      rule: rule('FREQ=WEEKLY;BYDAY=MO,TH'),
      startDate: '2026-01-01',
      endDate: null,
      skipDates: ['2026-03-05'],
      horizonDays: 7,
    };
    assert.deepEqual(occurrenceDates(s, '2026-03-02'), ['2026-03-02', '2026-03-09']);
    assert.deepEqual(occurrenceDates({ ...s, endDate: '2026-03-08' }, '2026-03-02'), ['2026-03-02']);
    assert.deepEqual(occurrenceDates({ ...s, startDate: '2026-03-04' }, '2026-03-02'), ['2026-03-04', '2026-03-09']);
    assert.equal(hasEnded(s, '2026-03-02'), false);
    assert.equal(hasEnded({ ...s, endDate: '2026-03-01' }, '2026-03-02'), true);
    assert.equal(hasEnded({ ...s, rule: rule('FREQ=WEEKLY;COUNT=2') }, '2026-03-02'), true);
    assert.equal(hasEnded({ ...s, rule: rule('FREQ=WEEKLY;UNTIL=20260301') }, '2026-03-02'), true);
    assert.equal(hasEnded({ ...s, rule: rule('FREQ=WEEKLY;UNTIL=20260305') }, '2026-03-02'), false);
  });
});

describe('visit times across daylight-saving changes (PRODUCT §16: that date’s offset)', () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  it('Europe/Berlin: 09:00 local is 08:00Z in winter, 07:00Z in summer, both ways across a change', () => {
    const r = rule('FREQ=WEEKLY;BYDAY=SA,SU,MO');
    const dates = expand(r, '2026-03-28', '2026-03-30');
    assert.deepEqual(dates, ['2026-03-28', '2026-03-29', '2026-03-30']);
    assert.deepEqual(
      dates.map((x) => iso(visitInterval(x, '09:00', 60, 'Europe/Berlin')[0])),
      ['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z'],
    );
    const autumn = expand(r, '2026-10-24', '2026-10-26');
    assert.deepEqual(
      autumn.map((x) => iso(visitInterval(x, '09:00', 90, 'Europe/Berlin')[1])),
      ['2026-10-24T08:30:00.000Z', '2026-10-25T09:30:00.000Z', '2026-10-26T09:30:00.000Z'],
    );
    // 02:30 on the spring-forward night does not exist: taken as the clock set forward shows it.
    assert.equal(iso(visitInterval('2026-03-29', '02:30', 60, 'Europe/Berlin')[0]), '2026-03-29T01:30:00.000Z');
  });

  it('America/New_York: monthly on the second Sunday (the day the clocks change in March)', () => {
    const dates = expand(rule('FREQ=MONTHLY;BYDAY=2SU;COUNT=3'), '2026-02-08', '2026-12-31');
    assert.deepEqual(dates, ['2026-02-08', '2026-03-08', '2026-04-12']);
    assert.deepEqual(
      dates.map((x) => iso(visitInterval(x, '09:00', 60, 'America/New_York')[0])),
      ['2026-02-08T14:00:00.000Z', '2026-03-08T13:00:00.000Z', '2026-04-12T13:00:00.000Z'],
    );
    // November: back to EST on the 1st.
    const fall = expand(rule('FREQ=DAILY;COUNT=3'), '2026-10-31', '2026-12-31');
    assert.deepEqual(
      fall.map((x) => iso(visitInterval(x, '07:30', 30, 'America/New_York')[0])),
      ['2026-10-31T11:30:00.000Z', '2026-11-01T12:30:00.000Z', '2026-11-02T12:30:00.000Z'],
    );
    // 01:30 on the fall-back night happens twice: its first occurrence (EDT).
    assert.equal(iso(visitInterval('2026-11-01', '01:30', 60, 'America/New_York')[0]), '2026-11-01T05:30:00.000Z');
  });
});
