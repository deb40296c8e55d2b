import { sql } from 'kysely';
import { insertRows, untyped, type Executor } from '../../db/runner.js';

/**
 * The statements of an agreement's occurrences (occurrences.ts): the agreement's row and links,
 * the jobs and visits made for its dates, their links and references.
 */

export type AgreementRow = {
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

/** The account's agreement, as stored. */
export async function agreementRow(db: Executor, accountId: number, id: number): Promise<AgreementRow | undefined> {
  return (await untyped(db)
    .selectFrom('agreements')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()) as AgreementRow | undefined;
}

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

/** The skills and assets an agreement gives its jobs, in id order. */
export async function agreementLinks(db: Executor, accountId: number, agreementId: number) {
  const [skills, assets] = await Promise.all([
    linked(db, 'agreement_skills', 'skill_id', accountId, agreementId),
    linked(db, 'agreement_assets', 'asset_id', accountId, agreementId),
  ]);
  return { skills, assets };
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
export async function addressFor(db: Executor, accountId: number, a: AgreementRow): Promise<Record<string, unknown>> {
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
 * An agreement's jobs from `from` on, with their visits (id order) and their skills' and assets'
 * ids by job.
 */
export async function occurrenceRows(db: Executor, accountId: number, agreementId: number, from: string) {
  const jobs = (await untyped(db)
    .selectFrom('jobs')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('agreement_id', '=', agreementId)
    .where('occurrence', '>=', from)
    .execute()) as Record<string, unknown>[];
  if (!jobs.length)
    return { jobs, visits: [], skills: new Map<number, number[]>(), assets: new Map<number, number[]>() };
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
  return { jobs, visits, skills, assets };
}

/** Gives these jobs exactly these skills and assets (`replace`: their links so far go first). */
export async function relinkJobs(
  db: Executor,
  accountId: number,
  jobIds: number[],
  skills: number[],
  assets: number[],
  replace: boolean,
): Promise<void> {
  if (!jobIds.length) return;
  for (const [table, column, list] of [
    ['job_skills', 'skill_id', skills],
    ['job_assets', 'asset_id', assets],
  ] as const) {
    if (replace)
      await untyped(db).deleteFrom(table).where('account_id', '=', accountId).where('job_id', 'in', jobIds).execute();
    if (list.length)
      await insertRows(
        untyped(db),
        table,
        jobIds.flatMap((id) => list.map((x) => ({ account_id: accountId, job_id: id, [column]: x }))),
      );
  }
}

/** Rewrites an untouched occurrence's job or visit; it stays untouched (`generated`, NEXT_VERSION). */
export async function rewriteOccurrence(
  db: Executor,
  table: 'jobs' | 'visits',
  accountId: number,
  id: number,
  set: Record<string, unknown>,
  now: number,
): Promise<void> {
  await untyped(db)
    .updateTable(table)
    .set({ ...set, modified: now, generated: NEXT_VERSION })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** Inserts occurrences' jobs; a date another writer made meanwhile is skipped (one job per date). */
export function insertOccurrenceJobs(db: Executor, rows: Record<string, unknown>[]) {
  return insertRows<{ id: number; occurrence: string }>(untyped(db), 'jobs', rows, ['id', 'occurrence'], {
    skipConflictsOn: ['account_id', 'agreement_id', 'occurrence'],
  });
}

/** Inserts occurrences' visits: their ids. */
export function insertOccurrenceVisits(db: Executor, rows: Record<string, unknown>[]) {
  return insertRows<{ id: number }>(untyped(db), 'visits', rows, ['id']);
}

/**
 * `generated := version + 1` in the statement whose own version trigger moves `version` by one:
 * both dialects then leave `generated` equal to the row's new version (PostgreSQL's trigger sets
 * NEW.version before the row is written; SQLite's, after, to version + 1).
 */
const NEXT_VERSION = sql<number>`version + 1`;

export async function markGenerated(db: Executor, table: 'jobs' | 'visits', accountId: number, ids: number[]) {
  for (let i = 0; i < ids.length; i += 500)
    await untyped(db)
      .updateTable(table)
      .set({ generated: NEXT_VERSION })
      .where('account_id', '=', accountId)
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
}
