import type { Executor } from '../../db/runner.js';

export type Point = { lat: number; lng: number; accuracy?: number | null };

/** The user's latest ping recorded in [from, to], or undefined. */
export const latestPing = (db: Executor, accountId: number, userId: number, from: number, to: number) =>
  db
    .selectFrom('locations')
    .select(['lat', 'lng'])
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .where('recorded_at', '>=', from)
    .where('recorded_at', '<=', to)
    .orderBy('recorded_at', 'desc')
    .limit(1)
    .executeTakeFirst();

/** Where a visit's job is, and whose it is. */
export const jobPlace = (db: Executor, accountId: number, jobId: number) =>
  db
    .selectFrom('jobs')
    .select(['title', 'client_id', 'address_lat', 'address_lng'])
    .where('account_id', '=', accountId)
    .where('id', '=', jobId)
    .executeTakeFirstOrThrow();
