import { Type } from '@sinclair/typebox';
import { validationError } from '../../errors.js';
import { parseRule } from '../../domain/maintenance/rrule.js';
import { f, standardFields, type Field } from '../machinery/fields.js';
import { linkList } from '../machinery/links.js';

export const BILLING = ['none', 'perVisit', 'monthly', 'quarterly', 'yearly'] as const;
export const AGREEMENT_STATES = ['active', 'cancelled', 'ended'] as const;

const live = { deleted: 0 };

export const agreementFields: Record<string, Field> = {
  client: f.assoc('client_id', 'clients', {
    required: true,
    referenceFilter: live,
    onDelete: 'cascade',
    members: ['name'],
  }),
  site: f.assoc('site_id', 'sites', {
    nullable: true,
    referenceFilter: live,
    members: ['name'],
    description: "A site of the agreement's client, or null.",
  }),
  name: f.string('name', { required: true, minLength: 1, maxLength: 200, description: "Each visit's label." }),
  jobTitle: f.string('job_title', { required: true, minLength: 1, maxLength: 200 }),
  jobDescription: f.text('job_description', { nullable: true }),
  startDate: f.date('start_date', { required: true, description: 'The first occurrence, YYYY-MM-DD.' }),
  endDate: f.date('end_date', { nullable: true, description: 'The last day occurrences may fall on, or null.' }),
  recurrence: f.string('recurrence', {
    required: true,
    maxLength: 500,
    description:
      'An RFC 5545 RRULE value: FREQ DAILY | WEEKLY | MONTHLY | YEARLY, with INTERVAL, COUNT, UNTIL (a date, YYYYMMDD), BYDAY (ordinals with MONTHLY and YEARLY), BYMONTHDAY, BYMONTH, BYSETPOS, WKST.',
    check: (v: unknown, name: string) => {
      const r = parseRule(v);
      return 'error' in r ? [validationError('invalid', name, r.error)] : [];
    },
  }),
  skipDates: f.json('skip_dates', Type.Array(Type.String({ format: 'date' }), { maxItems: 1000, uniqueItems: true }), {
    default: [],
    description: 'Dates of the rule left out (YYYY-MM-DD, distinct, at most 1,000).',
  }),
  visitTime: f.string('visit_time', {
    pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
    default: '09:00',
    description: "HH:MM, local (the account's zone): each visit starts then on its date.",
  }),
  visitMinutes: f.integer('visit_minutes', { minimum: 5, maximum: 1440, default: 60 }),
  user: f.assoc('user_id', 'users', {
    nullable: true,
    referenceFilter: live,
    members: ['firstName', 'lastName'],
    description: "Each visit's user, or null.",
  }),
  requiredSkills: linkList({
    through: 'agreement_skills',
    own: 'agreement_id',
    other: 'skill_id',
    target: 'skills',
    members: ['name'],
    oneWay: true,
    description: "Each occurrence job's required skills.",
  }),
  assets: linkList({
    through: 'agreement_assets',
    own: 'agreement_id',
    other: 'asset_id',
    target: 'assets',
    members: ['name'],
    oneWay: true,
    description: "Assets of the agreement's site: each occurrence job's assets.",
  }),
  horizonDays: f.integer('horizon_days', {
    minimum: 7,
    maximum: 400,
    default: 90,
    description: 'Occurrences are made up to today + this many days.',
  }),
  price: f.money('price', { nullable: true, description: "In the account's currency, or null." }),
  billing: f.enum('billing', BILLING, {
    default: 'none',
    description:
      'Draft invoices: none, one per visit checked out, or one per period from startDate. Not none without a price.',
  }),
  state: f.enum('state', AGREEMENT_STATES, {
    readOnly: true,
    default: 'active',
    description: '`cancelled` by the cancel action; `ended` past endDate or the rule’s last date.',
  }),
  ...standardFields(),
};
