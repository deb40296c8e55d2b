import { sql } from 'kysely';
import { nextCount, numbered } from '../../db/counters.js';
import { insertRows, untyped, type Executor } from '../../db/runner.js';
import { hasEnded, occurrenceDates, visitInterval, type Schedule } from '../../domain/maintenance/occurrences.js';
import { parseRule } from '../../domain/maintenance/rrule.js';
import { localDate } from '../../time/local-time.js';
import type { Caller } from '../machinery/collection.js';
import { accountZone } from '../machinery/money.js';
import { searchTextOf } from '../machinery/search.js';
import type { ChangeRecording } from '../machinery/contracts.js';

/**
 * An agreement's occurrences as ordinary jobs with one visit each (PRODUCT §16), made and kept in
 * the transaction that writes the agreement (or that rolls its horizon): every date of the rule in
 * the horizon has its job; an untouched future occurrence (job and visit not modified since the
 * generator wrote them, the visit still `scheduled`) is rewritten to what the agreement says now,
 * or logically deleted when its date left the rule; every other occurrence stays as it is. The
 * unique index (account, agreement, occurrence) keeps one job per date whatever runs at once.
 */

type AgreementRow = {
  id: number;
  client_id: number;
  site_id: number | null;
  user_id: number | null;
  name: string;
  job_title: string;
  job_description: string | null;
  start_date: string;
  end_date: string | null;
  recurrence: string;
  skip_dates: string;
  visit_time: string;
  visit_minutes: number;
  horizon_days: number;
  state: string;
  deleted: number;
};

/** The schedule of a stored agreement's columns. */
export function scheduleOfRow(row: {
  recurrence: string;
  start_date: string;
  end_date: string | null;
  skip_dates: string;
  horizon_days: number;
}): Schedule | undefined {
  const rule = parseRule(row.recurrence);
  if ('error' in rule) return undefined;
  return {
    rule,
    startDate: row.start_date,
    endDate: row.end_date,
    skipDates: JSON.parse(row.skip_dates) as string[],
    horizonDays: Number(row.horizon_days),
  };
}

/** Today in the account's zone. */
export async function todayOf(db: Executor, caller: Caller): Promise<{ today: string; zone: string }> {
  const zone = await accountZone(db, caller.accountId);
  return { today: localDate(caller.now, zone), zone };
}

export { hasEnded };

async function linked(db: Executor, table: string, column: string, accountId: number, agreementId: number) {
  const rows = await untyped(db)
    .selectFrom(table)
    .select(column)
    .where('account_id', '=', accountId)
    .where('agreement_id', '=', agreementId)
    .orderBy(column)
    .execute();
  return rows.map((r) => Number((r as Record<string, unknown>)[column]));
}

const ADDRESS = [
  'address_line1',
  'address_line2',
  'address_city',
  'address_region',
  'address_postcode',
  'address_country',
  'address_lat',
  'address_lng',
] as const;

/** The address a new job copies: its site's, else its client's (as a job made by hand does). */
async function addressFor(db: Executor, accountId: number, a: AgreementRow): Promise<Record<string, unknown>> {
  for (const [table, id] of [
    ['sites', a.site_id],
    ['clients', a.client_id],
  ] as const) {
    if (id === null) continue;
    const row = (await untyped(db)
      .selectFrom(table)
      .select([...ADDRESS])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst()) as Record<string, unknown> | undefined;
    if (row && ADDRESS.some((c) => row[c] !== null && row[c] !== undefined && row[c] !== '')) return row;
  }
  return {};
}

/**
 * `n` new job references (`J-000123`, as a job made by hand gets), drawn from the account's counter
 * in one statement; any already taken (a reference given by hand) is replaced by the next free one.
 */
async function nextReferences(db: Executor, accountId: number, n: number): Promise<string[]> {
  const { value } = await db
    .insertInto('counters')
    .values({ account_id: accountId, name: 'jobs', value: n })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ value: sql`counters.value + ${n}` }))
    .returning('value')
    .executeTakeFirstOrThrow();
  const last = Number(value);
  const drawn = Array.from({ length: n }, (_, k) => numbered('J', last - n + 1 + k));
  const taken = new Set<string>();
  for (let i = 0; i < drawn.length; i += 500) {
    const rows = await db
      .selectFrom('jobs')
      .select('reference')
      .where('account_id', '=', accountId)
      .where('reference', 'in', drawn.slice(i, i + 500))
      .execute();
    for (const r of rows) taken.add(r.reference);
  }
  const out: string[] = [];
  for (const r of drawn) out.push(taken.has(r) ? await nextReference(db, accountId) : r);
  return out;
}

async function nextReference(db: Executor, accountId: number): Promise<string> {
  for (;;) {
    const reference = numbered('J', await nextCount(db, accountId, 'jobs'));
    const taken = await db
      .selectFrom('jobs')
      .select('id')
      .where('account_id', '=', accountId)
      .where('reference', '=', reference)
      .executeTakeFirst();
    if (!taken) return reference;
  }
}

interface Occurrence {
  jobId: number;
  date: string;
  untouched: boolean;
  deleted: boolean;
  job: Record<string, unknown>;
  visit?: Record<string, unknown>;
  skills: number[];
  assets: number[];
}

/** The agreement's occurrences from `from` on, with whether nobody changed them since made. */
async function occurrencesFrom(db: Executor, accountId: number, agreementId: number, from: string) {
  const jobs = (await untyped(db)
    .selectFrom('jobs')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('agreement_id', '=', agreementId)
    .where('occurrence', '>=', from)
    .execute()) as Record<string, unknown>[];
  if (!jobs.length) return new Map<string, Occurrence>();
  const ids = jobs.map((j) => Number(j.id));
  const visits = (await untyped(db)
    .selectFrom('visits')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('job_id', 'in', ids)
    .orderBy('id')
    .execute()) as Record<string, unknown>[];
  const links = async (table: string, column: string) => {
    const rows = (await untyped(db)
      .selectFrom(table)
      .select(['job_id', column])
      .where('account_id', '=', accountId)
      .where('job_id', 'in', ids)
      .orderBy(column)
      .execute()) as Record<string, unknown>[];
    const by = new Map<number, number[]>();
    for (const r of rows) {
      const list = by.get(Number(r.job_id)) ?? [];
      list.push(Number(r[column]));
      by.set(Number(r.job_id), list);
    }
    return by;
  };
  const [skills, assets] = await Promise.all([links('job_skills', 'skill_id'), links('job_assets', 'asset_id')]);
  const out = new Map<string, Occurrence>();
  for (const job of jobs) {
    const id = Number(job.id);
    const mine = visits.filter((v) => Number(v.job_id) === id);
    // Nobody changed it since the generator wrote it: the versions it left.
    const untouched =
      job.generated !== null &&
      Number(job.version) === Number(job.generated) &&
      mine.length === 1 &&
      mine[0].generated !== null &&
      Number(mine[0].version) === Number(mine[0].generated) &&
      mine[0].state === 'scheduled' &&
      Number(mine[0].deleted) === Number(job.deleted);
    out.set(String(job.occurrence), {
      jobId: id,
      date: String(job.occurrence),
      untouched,
      deleted: Number(job.deleted) === 1,
      job,
      visit: mine[0],
      skills: skills.get(id) ?? [],
      assets: assets.get(id) ?? [],
    });
  }
  return out;
}

const sameList = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Brings the agreement's occurrences from today on to what it says now (see above). `forget`:
 * the agreement is cancelled or deleted, every untouched future occurrence goes. Returns the
 * number of jobs made.
 */
export async function syncOccurrences(
  db: Executor,
  changes: ChangeRecording,
  caller: Caller,
  agreementId: number,
): Promise<number> {
  const accountId = caller.accountId;
  const a = (await untyped(db)
    .selectFrom('agreements')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', agreementId)
    .executeTakeFirst()) as AgreementRow | undefined;
  if (!a) return 0;
  const { today, zone } = await todayOf(db, caller);
  const schedule = scheduleOfRow(a);
  const live = a.state !== 'cancelled' && Number(a.deleted) === 0 && schedule !== undefined;
  const dates = live ? (occurrenceDates(schedule!, today) ?? []) : [];
  const wanted = new Set(dates);
  const [skills, assets] = await Promise.all([
    linked(db, 'agreement_skills', 'skill_id', accountId, agreementId),
    linked(db, 'agreement_assets', 'asset_id', accountId, agreementId),
  ]);
  const existing = await occurrencesFrom(db, accountId, agreementId, today);
  const jobsC = changes.collection('jobs');
  const visitsC = changes.collection('visits');
  const now = caller.now;

  const jobColumns = {
    title: a.job_title,
    description: a.job_description,
    client_id: a.client_id,
    site_id: a.site_id,
  };
  const visitColumns = (date: string) => {
    const [start, end] = visitInterval(date, a.visit_time, Number(a.visit_minutes), zone);
    return { label: a.name, user_id: a.user_id, start_time: start, end_time: end };
  };

  // Untouched occurrences: rewritten, revived or logically deleted.
  const touchedJobs: number[] = [];
  const touchedVisits: number[] = [];
  const jobUpdates: [number, Record<string, unknown>][] = [];
  const visitUpdates: [number, Record<string, unknown>][] = [];
  const relink: Occurrence[] = [];
  for (const o of existing.values()) {
    if (!o.untouched) continue;
    const want = wanted.has(o.date);
    const job: Record<string, unknown> = {};
    const visit: Record<string, unknown> = {};
    if (!want) {
      if (!o.deleted) {
        job.deleted = 1;
        visit.deleted = 1;
      }
    } else {
      if (o.deleted) {
        job.deleted = 0;
        visit.deleted = 0;
      }
      for (const [k, v] of Object.entries(jobColumns)) if (o.job[k] !== v) job[k] = v;
      for (const [k, v] of Object.entries(visitColumns(o.date)))
        if (o.visit && (o.visit[k] === null ? null : k.endsWith('_time') ? Number(o.visit[k]) : o.visit[k]) !== v)
          visit[k] = v;
      if (!sameList(o.skills, skills) || !sameList(o.assets, assets)) relink.push(o);
    }
    const relinked = relink.includes(o);
    if (Object.keys(job).length || Object.keys(visit).length || relinked) {
      touchedJobs.push(o.jobId);
      jobUpdates.push([o.jobId, job]);
      if (o.visit && Object.keys(visit).length) {
        touchedVisits.push(Number(o.visit.id));
        visitUpdates.push([Number(o.visit.id), visit]);
      }
    }
  }
  await changes.touch(jobsC, touchedJobs);
  await changes.touch(visitsC, touchedVisits);
  // Links first: their triggers move the job's version, which `generated` then records.
  for (const o of relink) {
    for (const [table, column, list] of [
      ['job_skills', 'skill_id', skills],
      ['job_assets', 'asset_id', assets],
    ] as const) {
      await untyped(db).deleteFrom(table).where('account_id', '=', accountId).where('job_id', '=', o.jobId).execute();
      if (list.length)
        await insertRows(
          untyped(db),
          table,
          list.map((x) => ({ account_id: accountId, job_id: o.jobId, [column]: x })),
        );
    }
  }
  for (const [id, set] of jobUpdates) {
    const merged = { ...existingJob(existing, id), ...set };
    await untyped(db)
      .updateTable('jobs')
      .set({ ...set, search_text: searchTextOf(jobsC, merged), modified: now, generated: NEXT_VERSION })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }
  for (const [id, set] of visitUpdates)
    await untyped(db)
      .updateTable('visits')
      .set({ ...set, modified: now, generated: NEXT_VERSION })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();

  // New dates: a job and its visit each.
  const fresh = dates.filter((d) => !existing.has(d));
  if (!fresh.length) return 0;
  const status = await db
    .selectFrom('statuses')
    .select('id')
    .where('account_id', '=', accountId)
    .where('is_default', '=', 1)
    .executeTakeFirstOrThrow();
  const address = await addressFor(db, accountId, a);
  const rows: Record<string, unknown>[] = [];
  const references = await nextReferences(db, accountId, fresh.length);
  for (const [k, date] of fresh.entries()) {
    const row: Record<string, unknown> = {
      account_id: accountId,
      reference: references[k],
      ...jobColumns,
      ...address,
      status_id: status.id,
      priority: 'normal',
      // The background roll has no user: null.
      created_by: caller.userId || null,
      deleted: 0,
      created: now,
      modified: now,
      agreement_id: agreementId,
      occurrence: date,
    };
    row.search_text = searchTextOf(jobsC, row);
    rows.push(row);
  }
  // A date another writer made meanwhile is skipped: its job is that writer's (one per date).
  const made = await insertRows<{ id: number; occurrence: string }>(untyped(db), 'jobs', rows, ['id', 'occurrence'], {
    skipConflictsOn: ['account_id', 'agreement_id', 'occurrence'],
  });
  changes.created(
    jobsC,
    made.map((m) => m.id),
  );
  for (const [table, column, list] of [
    ['job_skills', 'skill_id', skills],
    ['job_assets', 'asset_id', assets],
  ] as const)
    if (list.length)
      await insertRows(
        untyped(db),
        table,
        made.flatMap((m) => list.map((x) => ({ account_id: accountId, job_id: m.id, [column]: x }))),
      );
  const visits = await insertRows<{ id: number }>(
    untyped(db),
    'visits',
    made.map((m) => ({
      account_id: accountId,
      job_id: m.id,
      ...visitColumns(m.occurrence),
      state: 'scheduled',
      deleted: 0,
      created: now,
      modified: now,
    })),
    ['id'],
  );
  changes.created(
    visitsC,
    visits.map((v) => v.id),
  );
  await markGenerated(
    db,
    'jobs',
    accountId,
    made.map((m) => m.id),
  );
  await markGenerated(
    db,
    'visits',
    accountId,
    visits.map((v) => v.id),
  );
  return made.length;
}

/**
 * `generated := version + 1` in the statement whose own version trigger moves `version` by one:
 * both dialects then leave `generated` equal to the row's new version (PostgreSQL's trigger sets
 * NEW.version before the row is written; SQLite's, after, to version + 1).
 */
const NEXT_VERSION = sql<number>`version + 1`;

async function markGenerated(db: Executor, table: 'jobs' | 'visits', accountId: number, ids: number[]) {
  for (let i = 0; i < ids.length; i += 500)
    await untyped(db)
      .updateTable(table)
      .set({ generated: NEXT_VERSION })
      .where('account_id', '=', accountId)
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
}

function existingJob(existing: Map<string, Occurrence>, id: number): Record<string, unknown> {
  for (const o of existing.values()) if (o.jobId === id) return o.job;
  return {};
}
