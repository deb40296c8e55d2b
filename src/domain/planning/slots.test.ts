import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeSlots, type SlotProblem, type SlotUser } from './slots.js';
import type { Place } from './travel.js';

const JOB: Place = { lat: 51.5, lng: -0.1 };
const HOME: Place = { lat: 51.6, lng: -0.2 };
const ELSEWHERE: Place = { lat: 51.4, lng: 0 };
/** Half an hour between any two different places. */
const halfHour = (a: Place, b: Place) => (a.lat === b.lat && a.lng === b.lng ? 0 : 1800);
const iso = (ms: number) => new Date(ms).toISOString();
const at = (s: string) => Date.parse(s);

const user = (extra: Partial<SlotUser> = {}): SlotUser => ({
  id: 1,
  workingHours: [],
  home: null,
  skills: [],
  ...extra,
});
const problem = (extra: Partial<SlotProblem>): SlotProblem => ({
  place: JOB,
  skills: [],
  users: [],
  visits: [],
  unavailabilities: [],
  timeZone: 'UTC',
  travel: halfHour,
  from: 0,
  to: 0,
  durationMinutes: 60,
  windowMinutes: 60,
  ...extra,
});
const starts = (p: SlotProblem) => computeSlots(p).map((s) => iso(s.arrivalWindowStart));

describe('slots (PRODUCT §15)', () => {
  it('Europe/London, spring forward (2030-03-31): local hours of the short day', () => {
    const p = problem({
      timeZone: 'Europe/London',
      users: [user({ workingHours: [{ day: 'sun', start: '00:00', end: '04:00' }] })],
      from: at('2030-03-30T12:00:00Z'),
      to: at('2030-04-01T00:00:00Z'),
    });
    // 00:00 GMT, then 02:00 and 03:00 BST (01:00 does not exist); the day's 04:00 is 03:00Z.
    assert.deepEqual(starts(p), ['2030-03-31T00:00:00.000Z', '2030-03-31T01:00:00.000Z']);
  });

  it('Europe/London, summer time: working hours are local (09:00 BST is 08:00Z)', () => {
    const p = problem({
      timeZone: 'Europe/London',
      users: [user({ workingHours: [{ day: 'mon', start: '09:00', end: '12:00' }] })],
      from: at('2030-04-01T00:00:00Z'),
      to: at('2030-04-02T00:00:00Z'),
    });
    assert.deepEqual(starts(p), ['2030-04-01T08:00:00.000Z', '2030-04-01T09:00:00.000Z']);
  });

  it('America/New_York, fall back (2030-11-03): the repeated hour is offered twice', () => {
    const p = problem({
      timeZone: 'America/New_York',
      users: [user({ workingHours: [{ day: 'sun', start: '00:00', end: '04:00' }] })],
      from: at('2030-11-02T00:00:00Z'),
      to: at('2030-11-04T00:00:00Z'),
    });
    // 00:00 EDT, 01:00 EDT, 01:00 EST, 02:00 EST; 04:00 EST is 09:00Z, so the last span ends there.
    assert.deepEqual(starts(p), [
      '2030-11-03T04:00:00.000Z',
      '2030-11-03T05:00:00.000Z',
      '2030-11-03T06:00:00.000Z',
      '2030-11-03T07:00:00.000Z',
    ]);
  });

  it('touching intervals: a span never crosses from one into the next', () => {
    const p = problem({
      users: [
        user({
          workingHours: [
            { day: 'mon', start: '08:00', end: '10:00' },
            { day: 'mon', start: '10:00', end: '12:00' },
          ],
        }),
      ],
      from: at('2030-04-01T00:00:00Z'),
      to: at('2030-04-02T00:00:00Z'),
    });
    assert.deepEqual(starts(p), ['2030-04-01T08:00:00.000Z', '2030-04-01T10:00:00.000Z']);
  });

  it('travel from and back home cuts the interval; travelSeconds is the travel added', () => {
    const p = problem({
      users: [user({ home: HOME, workingHours: [{ day: 'mon', start: '08:00', end: '12:00' }] })],
      from: at('2030-04-01T00:00:00Z'),
      to: at('2030-04-02T00:00:00Z'),
    });
    const slots = computeSlots(p);
    assert.deepEqual(
      slots.map((s) => [iso(s.arrivalWindowStart), iso(s.arrivalWindowEnd), s.travelSeconds]),
      [['2030-04-01T09:00:00.000Z', '2030-04-01T10:00:00.000Z', 3600]],
    );
  });

  it('an existing visit with its travel: no window before it, the first after its end plus travel', () => {
    const p = problem({
      users: [user({ workingHours: [{ day: 'mon', start: '08:00', end: '17:00' }] })],
      visits: [{ userId: 1, start: at('2030-04-01T10:00:00Z'), end: at('2030-04-01T11:00:00Z'), place: ELSEWHERE }],
      from: at('2030-04-01T00:00:00Z'),
      to: at('2030-04-02T00:00:00Z'),
    });
    const slots = computeSlots(p);
    assert.deepEqual(
      slots.map((s) => iso(s.arrivalWindowStart)),
      ['12', '13', '14', '15'].map((h) => `2030-04-01T${h}:00:00.000Z`),
    );
    assert.ok(slots.every((s) => s.travelSeconds === 1800));
  });

  it('a visit at the same place needs no travel; between two visits the travel added is net', () => {
    const p = problem({
      users: [user({ workingHours: [{ day: 'mon', start: '08:00', end: '17:00' }] })],
      visits: [
        { userId: 1, start: at('2030-04-01T08:00:00Z'), end: at('2030-04-01T09:00:00Z'), place: ELSEWHERE },
        { userId: 1, start: at('2030-04-01T13:00:00Z'), end: at('2030-04-01T14:00:00Z'), place: ELSEWHERE },
      ],
      from: at('2030-04-01T00:00:00Z'),
      to: at('2030-04-01T13:00:00Z'),
    });
    const slots = computeSlots(p);
    // From 09:30 at the earliest; ending by 12:30: 10:00 only (10:00–11:00 window, visit to 12:00).
    assert.deepEqual(
      slots.map((s) => [iso(s.arrivalWindowStart), s.travelSeconds]),
      [['2030-04-01T10:00:00.000Z', 3600]],
    );
  });

  it('skills, leave and the order: by start, then travel, then user', () => {
    const p = problem({
      skills: [7],
      users: [
        user({ id: 1, skills: [7, 8], home: HOME, workingHours: [{ day: 'mon', start: '08:00', end: '13:00' }] }),
        user({ id: 2, skills: [7], home: JOB, workingHours: [{ day: 'mon', start: '08:00', end: '13:00' }] }),
        user({ id: 3, skills: [8], workingHours: [{ day: 'mon', start: '08:00', end: '13:00' }] }),
      ],
      unavailabilities: [{ userId: 2, start: at('2030-04-01T10:30:00Z'), end: at('2030-04-01T11:00:00Z') }],
      from: at('2030-04-01T00:00:00Z'),
      to: at('2030-04-02T00:00:00Z'),
    });
    const got = computeSlots(p).map((s) => `${iso(s.arrivalWindowStart).slice(11, 13)}:${s.userId}:${s.travelSeconds}`);
    // User 3 lacks skill 7; user 2's leave (10:30–11:00) takes 09:00 and 10:00; user 1 travels.
    assert.deepEqual(got, ['08:2:0', '09:1:3600', '10:1:3600', '11:2:0']);
  });
});
