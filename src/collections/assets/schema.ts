import { Type } from '@sinclair/typebox';
import { localDate } from '../../time/local-time.js';
import { nextServiceDue } from '../../domain/maintenance/dates.js';
import type { Executor } from '../../db/runner.js';
import type { Caller } from '../machinery/collection.js';
import { f, standardFields, type ComputedField, type Field } from '../machinery/fields.js';
import { accountZone } from '../machinery/money.js';
import { lastCheckOuts } from './repository.js';

const live = { deleted: 0 };
const DATE = Type.Union([Type.String({ format: 'date' }), Type.Null()]);

/** Each row's `lastServicedOn`, read once per batch of rows (both computed fields ask it). */
const serviced = new WeakMap<object, Promise<(string | null)[]>>();
function lastServiced(db: Executor, caller: Caller, rows: Record<string, unknown>[]): Promise<(string | null)[]> {
  let made = serviced.get(rows);
  if (!made) {
    made = (async () => {
      const ids = rows.map((r) => Number(r.id));
      const [zone, last] = await Promise.all([
        accountZone(db, caller.accountId),
        lastCheckOuts(db, caller.accountId, ids),
      ]);
      return ids.map((id) => (last.has(id) ? localDate(last.get(id)!, zone) : null));
    })();
    serviced.set(rows, made);
  }
  return made;
}

const lastServicedOn: ComputedField = {
  kind: 'computed',
  readOnly: true,
  columns: ['id'],
  schema: DATE,
  description:
    "The local date (the account's zone) of the latest check-out of a visit of a job that lists the asset; null when none.",
  compute: (db, caller, rows) => lastServiced(db, caller, rows),
};

const nextDue: ComputedField = {
  kind: 'computed',
  readOnly: true,
  columns: ['id', 'installed_on', 'service_interval_months'],
  schema: DATE,
  description:
    '`lastServicedOn`, else `installedOn`, plus `serviceIntervalMonths` (a month lacking the day gives its last day); null without an interval or either date.',
  async compute(db, caller, rows) {
    const last = await lastServiced(db, caller, rows);
    return rows.map((r, i) =>
      nextServiceDue(
        last[i],
        (r.installed_on as string | null) ?? null,
        r.service_interval_months === null || r.service_interval_months === undefined
          ? null
          : Number(r.service_interval_months),
      ),
    );
  },
};

export const assetFields: Record<string, Field> = {
  site: f.assoc('site_id', 'sites', {
    required: true,
    referenceFilter: live,
    onDelete: 'cascade',
    members: ['name'],
    description: 'Where the equipment is.',
  }),
  client: f.assoc('client_id', 'clients', {
    readOnly: true,
    onDelete: 'cascade',
    members: ['name'],
    description: "The site's client (follows the site).",
  }),
  name: f.string('name', { required: true, minLength: 1, maxLength: 200, contains: true }),
  kind: f.string('kind', { nullable: true, maxLength: 100, description: 'Boiler, air handler, fire panel…' }),
  make: f.string('make', { nullable: true, maxLength: 100 }),
  model: f.string('model', { nullable: true, maxLength: 100 }),
  serialNumber: f.string('serial_number', {
    nullable: true,
    minLength: 1,
    maxLength: 100,
    unique: 'account',
    description: 'Unique in the account, or null; a logically deleted asset keeps its serial number taken.',
  }),
  installedOn: f.date('installed_on', { nullable: true, description: 'A calendar date, YYYY-MM-DD.' }),
  warrantyUntil: f.date('warranty_until', { nullable: true, description: 'A calendar date, YYYY-MM-DD.' }),
  serviceIntervalMonths: f.integer('service_interval_months', {
    nullable: true,
    minimum: 1,
    maximum: 120,
    description: 'Months between services (1–120), or null.',
  }),
  notes: f.text('notes', { nullable: true }),
  lastServicedOn,
  nextServiceDue: nextDue,
  ...standardFields(),
};
