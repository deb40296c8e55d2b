import type { KyselyConfig } from 'kysely';
import type { DialectName } from './dialect.js';

/** Told of every statement's duration (and its SQL); the server passes the metrics' observer. */
export type QueryObserver = (dialect: DialectName, seconds: number, failed: boolean, sql: string) => void;

/** Kysely's `log` hook, timing every statement that goes through Kysely's executor. */
export const kyselyLog = (dialect: DialectName, observe: QueryObserver | undefined): KyselyConfig['log'] =>
  observe && ((event) => observe(dialect, event.queryDurationMillis / 1000, event.level === 'error', event.query.sql));

/** Times a direct run; `undefined` means "not run here" (a transaction is open): Kysely runs and times it. */
export function timed<A, R>(
  fn: (a: A) => R | undefined,
  observe: (a: A, seconds: number, failed: boolean) => void,
): (a: A) => R | undefined {
  return (a) => {
    const start = performance.now();
    let r: R | undefined;
    try {
      r = fn(a);
    } catch (err) {
      observe(a, (performance.now() - start) / 1000, true);
      throw err;
    }
    if (r !== undefined) observe(a, (performance.now() - start) / 1000, false);
    return r;
  };
}
