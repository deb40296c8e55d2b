import { createRequire } from 'node:module';
import pg from 'pg';

/**
 * A named statement that asks for its row description only on its first execution on a
 * connection.
 *
 * node-postgres sends Describe with every execution of a statement, so PostgreSQL sends the
 * columns' names and types before every answer, and pg parses them and builds the row's parsers
 * again (`Result#addFields`: 6 % of the process's CPU on W3, `docs/performance.md`). A prepared
 * statement's result shape cannot change while it exists: PostgreSQL answers "cached plan must
 * not change result type" rather than a new shape. So the description learnt on the first
 * execution serves every later one on that connection: those send Bind, Execute and Sync only.
 *
 * This is pg's own `Query` with its `prepare` step taken over for the statements already
 * described; pg's `Submittable` interface is how it takes any query object (pg-cursor does so).
 * Written against pg 8.23's `lib/query.js` and `lib/result.js` (the lockfile's); a pg whose Query
 * lacks the steps used here gets its statements run as pg runs them, and
 * `src/db/described.test.ts` counts the Describes on the wire.
 */
type PrepareValue = (v: unknown) => unknown;

/**
 * Whether this pg has what DescribedOnce takes over, checked once at start on the module itself
 * (the pinned version's members, and `pg/lib/utils`): without them, named statements run as pg runs
 * them. `src/db/described.test.ts` simulates a pg without each of them.
 */
export function describedOnceSupport(
  pgModule: { Query?: unknown },
  loadUtils: () => unknown,
): { prepareValue: PrepareValue } | undefined {
  try {
    const Query = pgModule.Query as (new (config: object) => Record<string, unknown>) | undefined;
    const proto = Query?.prototype as Record<string, unknown> | undefined;
    if (
      !proto ||
      !['prepare', '_getRows', 'handleRowDescription', 'handleError'].every((m) => typeof proto[m] === 'function')
    ) {
      return undefined;
    }
    const result = new Query!({ text: 'select 1' })._result as Record<string, unknown> | undefined;
    if (
      !result ||
      typeof result.addFields !== 'function' ||
      !['fields', '_parsers', '_prebuiltEmptyResultObject'].every((k) => k in result)
    ) {
      return undefined;
    }
    const prepareValue = (loadUtils() as { prepareValue?: unknown }).prepareValue;
    return typeof prepareValue === 'function' ? { prepareValue: prepareValue as PrepareValue } : undefined;
  } catch {
    return undefined;
  }
}

const support = describedOnceSupport(pg, () => createRequire(import.meta.url)('pg/lib/utils'));

/** What pg's Result builds from a row description, kept per statement. */
interface Description {
  fields: unknown[];
  _parsers: unknown[];
  _prebuiltEmptyResultObject: object;
}

interface Connection {
  parsedStatements?: Record<string, string>;
  bind(msg: {
    portal: string;
    statement: string;
    values: unknown[];
    binary?: boolean;
    valueMapper: (v: unknown) => unknown;
  }): void;
  sync(): void;
}

/** pg's Query, with the members this file uses (pg/lib/query.js). */
interface QueryInternals {
  name: string;
  text: string;
  values: unknown[];
  portal: string;
  binary?: boolean;
  rows?: number;
  _result: Description & { addFields(fields: unknown[]): void };
  _accumulateRows: boolean;
  _getRows(connection: Connection, rows: number | undefined): void;
  handleError(err: unknown, connection: Connection): void;
}

type BaseQuery = new (config: object) => QueryInternals & {
  prepare(connection: Connection): void;
  handleRowDescription(msg: { fields: unknown[] }): void;
};

/** Per connection, per statement name: its description. Gone with the connection. */
const described = new WeakMap<Connection, Map<string, Description>>();

/** pg's Query with its `prepare` step taken over; made only when `support` found what it needs. */
const describedOnce = (Base: BaseQuery, prepareValue: PrepareValue) =>
  class DescribedOnce extends Base {
    /** Set when this execution sends Describe: the connection whose answer it learns. */
    private describing?: Connection;

    override prepare(connection: Connection) {
      // A connection without the bookkeeping this reads (another pg) takes pg's own path, below.
      const known =
        connection.parsedStatements?.[this.name] === this.text ? described.get(connection)?.get(this.name) : undefined;
      if (!known) {
        // pg, given a value it cannot send, closes the statement it has just parsed yet records it as
        // parsed, so every later execution on the connection would fail ("does not exist"): such a
        // value fails here, before anything is written, as on the described path below.
        try {
          for (const v of this.values ?? []) prepareValue(v);
        } catch (err) {
          return this.refuse(err, connection);
        }
        this.describing = connection;
        return super.prepare(connection);
      }
      const result = this._result;
      result.fields = known.fields;
      result._parsers = known._parsers;
      result._prebuiltEmptyResultObject = known._prebuiltEmptyResultObject;
      this._accumulateRows = true;
      // Values pg cannot send (a throwing toPostgres, a circular object) fail this query alone:
      // nothing of the Bind was written, and the statement stays.
      try {
        connection.bind({
          portal: this.portal,
          statement: this.name,
          values: this.values,
          binary: this.binary,
          valueMapper: prepareValue,
        });
      } catch (err) {
        return this.refuse(err, connection);
      }
      this._getRows(connection, this.rows);
    }

    /** Fails this query with nothing sent but a Sync, whose ReadyForQuery lets the next one go. */
    private refuse(err: unknown, connection: Connection) {
      connection.sync();
      this.handleError(err, connection);
    }

    override handleRowDescription(msg: { fields: unknown[] }) {
      super.handleRowDescription(msg);
      const connection = this.describing;
      if (!connection) return;
      let statements = described.get(connection);
      if (!statements) described.set(connection, (statements = new Map()));
      const { fields, _parsers, _prebuiltEmptyResultObject } = this._result;
      statements.set(this.name, { fields, _parsers, _prebuiltEmptyResultObject });
    }
  };

/** Runs named statements, with DescribedOnce when `found` (describedOnceSupport) has what it needs. */
export function namedRunner(found: { prepareValue: PrepareValue } | undefined) {
  const Described = found && describedOnce(pg.Query as unknown as BaseQuery, found.prepareValue);
  return (
    query: (q: object) => unknown,
    config: { name: string; text: string; values: unknown[] },
  ): Promise<pg.QueryResult> => {
    if (!Described) return query(config) as Promise<pg.QueryResult>;
    return new Promise((resolve, reject) => {
      query(
        new Described({
          ...config,
          callback: (err: Error | null, res: pg.QueryResult) => (err ? reject(err) : resolve(res)),
        }),
      );
    });
  };
}

/** Runs a named statement: its Describe only the first time on this client's connection. */
export const runNamed = namedRunner(support);
