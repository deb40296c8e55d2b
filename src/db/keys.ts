import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';

/**
 * Rows of any accounts by their keys, for the server's own sweeps across accounts (retention, the
 * delivery worker, purges). Ids are unique in their table; naming their accounts as well lets the
 * `(account_id, id)` key find them (src/db/migrations/scheme.ts), and a distributed database send
 * each account's part to its node.
 */
export const byKeys =
  (rows: readonly { account_id: number; id: number }[]) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  (eb: ExpressionBuilder<any, any>): Expression<SqlBool> =>
    eb.and([
      eb('account_id', 'in', [...new Set(rows.map((r) => r.account_id))]),
      eb(
        'id',
        'in',
        rows.map((r) => r.id),
      ),
    ]);
