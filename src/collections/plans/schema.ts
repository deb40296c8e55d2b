import { Type } from '@sinclair/typebox';
import { AssocRef, f, standardFields, type Field } from '../machinery/fields.js';

export const PLAN_STATES = ['proposed', 'applied', 'discarded', 'stale'] as const;

const Ref = Type.Object({ id: Type.Integer() });
const Step = Type.Object({
  visit: Ref,
  startTime: Type.String({ format: 'date-time' }),
  endTime: Type.String({ format: 'date-time' }),
  travelSeconds: Type.Integer(),
  distanceKm: Type.Number(),
});
const Route = Type.Object({
  user: Ref,
  steps: Type.Array(Step),
  travelSeconds: Type.Integer(),
  distanceKm: Type.Number(),
});
const Unassigned = Type.Object({
  visit: Ref,
  reason: Type.Union([Type.Literal('noUser'), Type.Literal('noLocation'), Type.Literal('noTime')]),
});

/** A plan's members (PRODUCT §15): what it is made of (written once, at creation), and what it made. */
export const planFields: Record<string, Field> = {
  date: f.date('date', {
    required: true,
    description: "The account's local date (`YYYY-MM-DD`) the plan is for.",
  }),
  users: f.json('users', Type.Array(AssocRef, { maxItems: 2000 }), {
    description: 'The users it may route (`[{id}]`); default: every user with working hours on the date.',
    references: { '[]': 'users' },
  }),
  visits: f.json('visits', Type.Array(AssocRef), {
    description:
      'The visits it places (`[{id}]`, at most 2,000); default: the visits of the date that are scheduled, neither locked nor deleted. A locked or deleted visit listed is a failure.',
    references: { '[]': 'visits' },
  }),
  timeLimitSeconds: f.integer('time_limit_seconds', {
    minimum: 1,
    maximum: 30,
    default: 5,
    description: "The solver's time limit, 1–30 seconds (default 5); the plan is answered within it plus a second.",
  }),
  notes: f.text('notes', { nullable: true, description: "The dispatcher's note on the plan (free text)." }),
  state: f.enum('state', PLAN_STATES, {
    readOnly: true,
    default: 'proposed',
    description: '`proposed`, then `applied` (apply), `discarded` (discard) or `stale` (apply found a change).',
  }),
  routes: f.json('routes', Type.Array(Route), {
    readOnly: true,
    description:
      "One per user with at least one visit: the steps in time order (a step's travel from the previous place: home, the previous visit, or a visit that stays), the route's travel including the way home.",
    references: { '[].user': 'users', '[].steps[].visit': 'visits' },
  }),
  unassigned: f.json('unassigned', Type.Array(Unassigned), {
    readOnly: true,
    description: 'The visits it could not place (`noUser`, `noLocation`, `noTime`); they keep their assignment.',
    references: { '[].visit': 'visits' },
  }),
  travelSeconds: f.integer('travel_seconds', { readOnly: true, description: "The routes' total travel time." }),
  distanceKm: f.number('distance_km', { readOnly: true, description: "The routes' total distance (km)." }),
  currentTravelSeconds: f.integer('current_travel_seconds', {
    readOnly: true,
    description:
      "The same measure for the plan's visits as assigned when it was made (visits with no user not counted).",
  }),
  currentDistanceKm: f.number('current_distance_km', { readOnly: true, description: 'Likewise, in km.' }),
  computeMilliseconds: f.integer('compute_milliseconds', {
    readOnly: true,
    description: 'How long making the plan took.',
  }),
  warnings: f.json('warnings', Type.Array(Type.String()), {
    readOnly: true,
    description: 'What the plan could not do as asked (the routing server failed: great-circle times).',
  }),
  ...standardFields(),
};
