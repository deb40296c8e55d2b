import type { Executor } from '../../db/runner.js';
import { hasEnded, occurrenceDates, visitInterval, type Schedule } from '../../domain/maintenance/occurrences.js';
import { parseRule } from '../../domain/maintenance/rrule.js';
import { localDate } from '../../time/local-time.js';
import type { Caller } from '../machinery/collection.js';
import { accountZone } from '../machinery/money.js';
import { searchTextOf } from '../machinery/search.js';
import type { ChangeRecording } from '../machinery/contracts.js';
import {
  addressFor,
  agreementLinks,
  agreementRow,
  insertOccurrenceJobs,
  insertOccurrenceVisits,
  markGenerated,
  occurrenceRows,
  relinkJobs,
  rewriteOccurrence,
} from './occurrences-repository.js';
import { defaultStatus, nextReferences } from '../../domain/jobs/new-job.js';

/**
 * An agreement's occurrences as ordinary jobs with one visit each (PRODUCT §16), made and kept in
 * the transaction that writes the agreement (or that rolls its horizon): every date of the rule in
 * the horizon has its job; an untouched future occurrence (job and visit not modified since the
 * generator wrote them, the visit still `scheduled`) is rewritten to what the agreement says now,
 * or logically deleted when its date left the rule; every other occurrence stays as it is. The
 * unique index (account, agreement, occurrence) keeps one job per date whatever runs at once.
 */

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
  const { jobs, visits, skills, assets } = await occurrenceRows(db, accountId, agreementId, from);
  if (!jobs.length) return new Map<string, Occurrence>();
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
  const a = await agreementRow(db, accountId, agreementId);
  if (!a) return 0;
  const { today, zone } = await todayOf(db, caller);
  const schedule = scheduleOfRow(a);
  const live = a.state !== 'cancelled' && Number(a.deleted) === 0 && schedule !== undefined;
  const dates = live ? (occurrenceDates(schedule!, today) ?? []) : [];
  const wanted = new Set(dates);
  const { skills, assets } = await agreementLinks(db, accountId, agreementId);
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
  for (const o of relink) await relinkJobs(db, accountId, [o.jobId], skills, assets, true);
  for (const [id, set] of jobUpdates) {
    const merged = { ...existingJob(existing, id), ...set };
    await rewriteOccurrence(db, 'jobs', accountId, id, { ...set, search_text: searchTextOf(jobsC, merged) }, now);
  }
  for (const [id, set] of visitUpdates) await rewriteOccurrence(db, 'visits', accountId, id, set, now);

  // New dates: a job and its visit each.
  const fresh = dates.filter((d) => !existing.has(d));
  if (!fresh.length) return 0;
  const statusId = await defaultStatus(db, accountId);
  const address = await addressFor(db, accountId, a);
  const rows: Record<string, unknown>[] = [];
  const references = await nextReferences(db, accountId, fresh.length);
  for (const [k, date] of fresh.entries()) {
    const row: Record<string, unknown> = {
      account_id: accountId,
      reference: references[k],
      ...jobColumns,
      ...address,
      status_id: statusId,
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
  const made = await insertOccurrenceJobs(db, rows);
  // Every new date made by another writer meanwhile: nothing of this one's to link or visit.
  if (!made.length) return 0;
  changes.created(
    jobsC,
    made.map((m) => m.id),
  );
  await relinkJobs(
    db,
    accountId,
    made.map((m) => m.id),
    skills,
    assets,
    false,
  );
  const visits = await insertOccurrenceVisits(
    db,
    made.map((m) => ({
      account_id: accountId,
      job_id: m.id,
      ...visitColumns(m.occurrence),
      state: 'scheduled',
      deleted: 0,
      created: now,
      modified: now,
    })),
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

function existingJob(existing: Map<string, Occurrence>, id: number): Record<string, unknown> {
  for (const o of existing.values()) if (o.jobId === id) return o.job;
  return {};
}
