import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { computeSlots, type BusyVisit, type SlotProblem, type SlotUser } from './slots.js';
import { instantOf, localDate, weekday } from '../../time/local-time.js';
import type { Place } from './travel.js';

const PLACES: Place[] = [0, 1, 2, 3].map((i) => ({ lat: 50 + i / 10, lng: i / 10 }));
const ZONES = ['UTC', 'Europe/London', 'America/New_York', 'Asia/Kolkata'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
/** Five days across London's spring forward (2030-03-31). */
const BASE = Date.parse('2030-03-29T00:00:00Z');
const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

const problems: fc.Arbitrary<SlotProblem> = fc
  .record({
    zone: fc.constantFrom(...ZONES),
    jobPlace: fc.integer({ min: 0, max: 3 }),
    jobSkills: fc.uniqueArray(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
    travel: fc.array(fc.integer({ min: 0, max: 5400 }), { minLength: 16, maxLength: 16 }),
    users: fc.array(
      fc.record({
        home: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
        skills: fc.uniqueArray(fc.integer({ min: 1, max: 3 }), { maxLength: 3 }),
        hours: fc.array(
          fc.record({
            day: fc.constantFrom(...DAYS),
            start: fc.integer({ min: 0, max: 1380 }),
            len: fc.integer({ min: 30, max: 720 }),
          }),
          { maxLength: 4 },
        ),
        visits: fc.array(
          fc.record({
            at: fc.integer({ min: 0, max: 5 * 96 }),
            len: fc.integer({ min: 1, max: 16 }),
            place: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
          }),
          { maxLength: 5 },
        ),
        absences: fc.array(
          fc.record({ at: fc.integer({ min: 0, max: 5 * 96 }), len: fc.integer({ min: 1, max: 40 }) }),
          {
            maxLength: 2,
          },
        ),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    fromQ: fc.integer({ min: 0, max: 96 }),
    spanQ: fc.integer({ min: 1, max: 4 * 96 }),
    duration: fc.constantFrom(5, 30, 60, 90, 240),
    window: fc.constantFrom(5, 60, 120, 180),
  })
  .map((r): SlotProblem => {
    const users: SlotUser[] = r.users.map((u, i) => ({
      id: i + 1,
      home: u.home === null ? null : PLACES[u.home],
      skills: u.skills,
      // Overlapping intervals are not valid working hours; keep the first of each clash.
      workingHours: u.hours
        .map((h) => ({ day: h.day, s: h.start, e: Math.min(h.start + h.len, 1439) }))
        .filter((h, j, all) => all.slice(0, j).every((o) => o.day !== h.day || o.e <= h.s || h.e <= o.s))
        .map((h) => ({ day: h.day, start: hhmm(h.s), end: hhmm(h.e) })),
    }));
    const visits: BusyVisit[] = r.users.flatMap((u, i) =>
      u.visits.map((v) => ({
        userId: i + 1,
        start: BASE + v.at * 15 * 60_000,
        end: BASE + (v.at + v.len) * 15 * 60_000,
        place: v.place === null ? null : PLACES[v.place],
      })),
    );
    const unavailabilities = r.users.flatMap((u, i) =>
      u.absences.map((a) => ({
        userId: i + 1,
        start: BASE + a.at * 15 * 60_000,
        end: BASE + (a.at + a.len) * 15 * 60_000,
      })),
    );
    const index = (p: Place) => PLACES.findIndex((q) => q.lat === p.lat && q.lng === p.lng);
    return {
      place: PLACES[r.jobPlace],
      skills: r.jobSkills,
      users,
      visits,
      unavailabilities,
      timeZone: r.zone,
      travel: (a, b) => (index(a) === index(b) ? 0 : r.travel[index(a) * 4 + index(b)]),
      from: BASE + r.fromQ * 15 * 60_000,
      to: BASE + (r.fromQ + r.spanQ) * 15 * 60_000,
      durationMinutes: r.duration,
      windowMinutes: r.window,
    };
  });

/** Every invariant of §15, checked from the problem alone, for one offered slot. */
function violation(p: SlotProblem, s: ReturnType<typeof computeSlots>[number]): string | undefined {
  const u = p.users.find((x) => x.id === s.userId)!;
  const w = s.arrivalWindowStart;
  const end = s.arrivalWindowEnd + p.durationMinutes * 60_000;
  if (s.arrivalWindowEnd - w !== p.windowMinutes * 60_000) return 'window length';
  if (w < p.from || s.arrivalWindowEnd > p.to) return 'outside from/to';
  if (!p.skills.every((k) => u.skills.includes(k))) return 'skills';
  const minute = new Intl.DateTimeFormat('en-GB', { timeZone: p.timeZone, minute: '2-digit' }).format(new Date(w));
  if (Number(minute) !== 0) return 'not on the hour';
  const date = localDate(w, p.timeZone);
  const interval = u.workingHours
    .filter((h) => h.day === weekday(date))
    .map((h) => [
      instantOf(date, Number(h.start.slice(0, 2)) * 60 + Number(h.start.slice(3)), p.timeZone),
      instantOf(date, Number(h.end.slice(0, 2)) * 60 + Number(h.end.slice(3)), p.timeZone),
    ])
    .find(([a, b]) => a <= w && end <= b);
  if (!interval) return 'not inside one working interval of its date';
  const [is, ie] = interval;
  if (p.unavailabilities.some((a) => a.userId === u.id && a.start < end && a.end > w)) return 'leave';
  const mine = p.visits.filter((v) => v.userId === u.id);
  const go = (a: Place | null, b: Place | null) => (a && b ? p.travel(a, b) * 1000 : 0);
  for (const v of mine) {
    if (v.start < end && v.end > w) return 'overlaps a visit';
    if (v.end <= w && v.end + go(v.place, p.place) > w) return 'no time to come from the visit before';
    if (v.start >= end && end + go(p.place, v.place) > v.start) return 'no time to go to the visit after';
  }
  if (u.home && !mine.some((v) => v.end > is && v.end <= w) && is + go(u.home, p.place) > w) return 'from home';
  if (u.home && !mine.some((v) => v.start < ie && v.start >= end) && end + go(p.place, u.home) > ie) return 'home';
  return undefined;
}

test('every offered slot satisfies the invariants, and slots are ordered', () => {
  let offered = 0;
  fc.assert(
    fc.property(problems, (p) => {
      const slots = computeSlots(p);
      offered += slots.length;
      for (const s of slots) {
        const why = violation(p, s);
        assert.equal(why, undefined, `${why}: ${JSON.stringify(s)}`);
      }
      for (let i = 1; i < slots.length; i++) {
        const a = slots[i - 1];
        const b = slots[i];
        assert.ok(
          a.arrivalWindowStart < b.arrivalWindowStart ||
            (a.arrivalWindowStart === b.arrivalWindowStart && a.travelSeconds <= b.travelSeconds),
          'ordered by start, then travel',
        );
      }
    }),
    { numRuns: 300 },
  );
  // Not vacuous: the random problems do offer slots.
  assert.ok(offered > 100, `${offered} slots offered`);
});

test('a free user working all day is offered every local hour that fits', () => {
  const p: SlotProblem = {
    place: PLACES[0],
    skills: [],
    users: [{ id: 1, home: null, skills: [], workingHours: [{ day: 'mon', start: '08:00', end: '18:00' }] }],
    visits: [],
    unavailabilities: [],
    timeZone: 'Asia/Kolkata',
    travel: () => 0,
    from: Date.parse('2030-04-01T00:00:00Z'),
    to: Date.parse('2030-04-02T00:00:00Z'),
    durationMinutes: 60,
    windowMinutes: 120,
  };
  // 08:00–15:00 IST, every hour: 02:30Z–09:30Z.
  assert.equal(computeSlots(p).length, 8);
  assert.equal(new Date(computeSlots(p)[0].arrivalWindowStart).toISOString(), '2030-04-01T02:30:00.000Z');
});

test('visits that end together: the window leaves time to come from the one furthest away (fast-check seed 284509288)', () => {
  const at = (hhmm: string) => Date.parse(`2030-04-01T${hhmm}:00Z`);
  const p: SlotProblem = {
    place: PLACES[0],
    skills: [],
    users: [{ id: 1, home: null, skills: [], workingHours: [{ day: 'mon', start: '08:00', end: '18:00' }] }],
    // Both end at 10:00; the first has no place (no travel), the second is an hour away.
    visits: [
      { userId: 1, start: at('08:00'), end: at('10:00'), place: null },
      { userId: 1, start: at('09:45'), end: at('10:00'), place: PLACES[1] },
    ],
    unavailabilities: [],
    timeZone: 'UTC',
    travel: (a, b) => (a === b ? 0 : 3600),
    from: at('08:00'),
    to: at('18:00'),
    durationMinutes: 30,
    windowMinutes: 30,
  };
  const starts = computeSlots(p).map((s) => new Date(s.arrivalWindowStart).toISOString().slice(11, 16));
  // 10:00 is too soon to come from the visit an hour away; 11:00 is the first window.
  assert.equal(starts[0], '11:00');
  assert.ok(!starts.includes('10:00'), starts.join(' '));
  // With the far visit ending earlier (09:00), 10:00 is offered again: only the travel decides.
  const earlier = { ...p, visits: [p.visits[0], { ...p.visits[1], start: at('08:30'), end: at('09:00') }] };
  assert.equal(new Date(computeSlots(earlier)[0].arrivalWindowStart).toISOString().slice(11, 16), '10:00');
});
