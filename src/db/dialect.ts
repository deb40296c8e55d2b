import type { DateSource, Period } from '../time/period.js';
import { sql, type Expression, type ExpressionBuilder, type Kysely, type RawBuilder, type SqlBool } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyKysely = Kysely<any>;

export type DialectName = 'sqlite' | 'postgres';

/** How a statement locks the rows it reads until the commit (PostgreSQL's row-level lock strengths). */
export type LockMode = 'key share' | 'share' | 'no key update' | 'update';
/** `of`: lock only that table's rows of a join; `skipLocked`: leave rows another transaction holds. */
export interface LockOptions {
  of?: string;
  skipLocked?: boolean;
}

/**
 * Every difference between the two databases, answered in one place: the rest of the code asks
 * this object ("are writers serial here?", "lock these rows") and never which database it is on.
 */
export interface DialectStrategy {
  readonly name: DialectName;
  /**
   * Write transactions run one at a time (SQLite's BEGIN IMMEDIATE): nothing needs locking
   * against another writer, and ids drawn in a transaction are in commit order.
   */
  readonly serialWriters: boolean;
  /**
   * Each commit that records events notifies channel `fsm_events` with its account id (PostgreSQL
   * LISTEN/NOTIFY, migration 081); otherwise live streams poll for the newest event id.
   */
  readonly commitNotifications?: boolean;
  /**
   * Statements run on the server's own thread (better-sqlite3 is synchronous): a long read
   * stops every other request while it runs, so a long job reads in short turns (GET /export).
   */
  readonly statementsOnThread: boolean;
  /** The clause that locks the rows a SELECT reads, until the commit (empty where writers are serial). */
  lockClause(mode: LockMode, opts?: LockOptions): RawBuilder<unknown>;
  /** A transaction-scoped lock on a key: writers holding the same key run one at a time. */
  lockKey(db: AnyKysely, key: string, account?: number): Promise<void>;
  /**
   * The account condition of a list's rows query. PostgreSQL: as a range; with `account_id = $1`
   * the planner treats account_id as a constant, drops it from the sort and walks the primary key
   * past every other account's rows (34 ms at 100,000 users, docs/performance.md), while a range
   * keeps `order by account_id, <sort>` whole, which only the (account_id, …) indexes provide.
   * SQLite keeps the equality its planner combines with the next index column.
   */
  accountCondition(eb: ExpressionBuilder<any, any>, column: string, account: number): Expression<SqlBool>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * Names the index a table is read by, where the database takes such a hint (SQLite's INDEXED BY,
   * for a planner that picks a worse one even with statistics); elsewhere nothing.
   */
  indexHint(index: string): RawBuilder<unknown>;
  /**
   * A page's LIMIT or OFFSET, a parameter. SQLite's planner reads a LIMIT that is a bare parameter,
   * and a statement whose plan read a parameter is prepared anew every time it is bound: the page
   * of `where customFields.<key> = …` took 100 µs instead of 30 (bench/custom.ts). `? + 0` is the
   * same number, which the planner leaves alone. PostgreSQL: the parameter itself.
   */
  pageBound(n: number): number | RawBuilder<number>;
  /**
   * Text lowered for `~` and `!~` over all of Unicode, as src/db/text.ts lowers the value compared:
   * PostgreSQL's lower() does so under a UTF-8 locale. SQLite's lower() knows only ASCII, so other
   * text goes through `fsm_lower` (src/db/sqlite.ts); text that is all ASCII (one byte per
   * character) stays on the native lower(), which lowers it the same: a scan of 100,000 ASCII titles
   * took 37 ms with lower(), 64–115 ms with fsm_lower on every row, 45–50 ms this way.
   */
  lower(text: Expression<unknown>): RawBuilder<string>;
  /**
   * A JSON array of rows (`json`, bound) as a table `r` of the given columns and `id`, for one
   * `UPDATE … FROM` that writes several rows of `table`: PostgreSQL types each value as its column
   * (`jsonb_populate_recordset`), SQLite takes each member's value (`json_each`, SQLite ≥ 3.33).
   */
  rowsFrom(table: string, columns: readonly string[], json: Expression<unknown>): RawBuilder<unknown>;
  /** The RETURNING list of such an UPDATE: the updated table's columns only (SQLite takes no `table.*` there). */
  updatedColumns(table: string): RawBuilder<unknown>;
  /**
   * The rows whose indexed text contains `lowered` (already lowered, at least CONTAINS_MIN code
   * points), through the trigram index `index` of migration 140, as a pre-filter beside the `like`
   * of `~`, which still decides; `id` is the row's id column. SQLite: its FTS5 table's phrase (a
   * phrase of trigrams matches exactly the text holding them in a row, a superset of the substring
   * matches); PostgreSQL: undefined, as its GIN index answers that `like` itself.
   */
  containsMatch(id: string, index: string, lowered: string): RawBuilder<SqlBool> | undefined;
  /**
   * A custom field's value in a JSON object column (PRODUCT §12), typed for comparison: text (text,
   * select, date), a number, or 1/0 (boolean). `key` is bound, never spliced.
   */
  jsonMember(column: Expression<unknown>, key: string, type: JsonMemberType): RawBuilder<unknown>;
  /**
   * `column` holds `key` with exactly `value` (a JSON scalar), where an index answers it (PostgreSQL's
   * GIN index with `@>`); undefined where none does (SQLite compares jsonMember).
   */
  jsonHas(column: Expression<unknown>, key: string, value: unknown): RawBuilder<SqlBool> | undefined;
  /** A JSON object as the parameter a JSON column takes (PostgreSQL: the object; SQLite: its text). */
  toJson(value: Record<string, unknown>): unknown;
  /** A JSON column's stored value as an object (PostgreSQL's driver parses JSONB; SQLite gives text). */
  fromJson(value: unknown): Record<string, unknown>;
  /**
   * Full-text search (`q`) of a table's `search_text` (migration 070): every folded word a prefix of
   * a word of the row. SQLite: its FTS5 table; PostgreSQL: the `simple` tsvector's GIN index.
   */
  searchMatch(table: string, words: string[]): RawBuilder<SqlBool>;
  /**
   * The rank of a row matching searchMatch: ascending is best first. Where the rank comes from a
   * table of its own (SQLite's FTS5), `join` is that table's matches (`fts_id`, `fts_rank`), joined
   * as `fts` on the row's id, and the rank is its column: each match ranked once, not once per row.
   */
  searchRank(table: string, words: string[]): { rank: RawBuilder<number>; join?: RawBuilder<unknown> };
  /**
   * A summary's period key (`2026-12-01`, `2026-W49`, `2026-12`, `2026`) of a stored date in the
   * account's zone (PRODUCT §19): PostgreSQL's own time zones and to_char; SQLite's `fsm_period`
   * (src/db/sqlite.ts, over src/domain/reports/period.ts). `zone` is bound, never spliced.
   */
  period(period: Period, value: Expression<unknown>, source: DateSource, zone: string): RawBuilder<string>;
  /** A date-time text with its offset as epoch ms (min and max compare instants, not text). */
  instant(text: Expression<unknown>): RawBuilder<number>;
  /** The database refused a duplicate of a unique key. */
  isUniqueViolation(err: unknown): boolean;
  /** The database refused a row whose reference is missing (or a delete of a referenced row). */
  isForeignKeyViolation(err: unknown): boolean;
}

export type JsonMemberType = 'text' | 'number' | 'boolean' | 'date' | 'select';

/** FTS5's query: each word a quoted prefix phrase (words are letters and digits only: no syntax). */
const ftsQuery = (words: string[]) => words.map((w) => `"${w.replace(/"/g, '')}"*`).join(' ');
/** to_tsquery's: each word a prefix lexeme, all required. */
const tsQuery = (words: string[]) => words.map((w) => `'${w.replace(/['\\]/g, '')}':*`).join(' & ');

/** The indexed tsvector of migration 070 (`search_vector`, generated from `search_text`). */
const tsVector = (table: string) => sql.ref(`${table}.search_vector`);

const code = (err: unknown): string | undefined => (err as { code?: string } | null)?.code;

export const SQLITE: DialectStrategy = {
  name: 'sqlite',
  statementsOnThread: true,
  serialWriters: true,
  lockClause: () => sql``,
  lockKey: async () => {},
  accountCondition: (eb, column, account) => eb(column, '=', account),
  indexHint: (index) => sql`indexed by ${sql.id(index)}`,
  pageBound: (n) => sql<number>`${n} + 0`,
  lower: (text) =>
    sql`case when octet_length(${text}) = length(${text}) then lower(${text}) else fsm_lower(${text}) end`,
  jsonMember: (column, key, type) => {
    const path = `$.${key}`;
    return type === 'number'
      ? sql`cast(json_extract(${column}, ${path}) as real)`
      : sql`json_extract(${column}, ${path})`;
  },
  jsonHas: () => undefined,
  containsMatch: (id, index, lowered) =>
    sql<SqlBool>`${sql.ref(id)} in (select rowid from ${sql.table(index)} where ${sql.table(index)} match ${`"${lowered.replace(/"/g, '""')}"`})`,
  toJson: (value) => JSON.stringify(value),
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : ((value ?? {}) as Record<string, unknown>)),
  searchMatch: (table, words) =>
    sql<SqlBool>`${sql.ref(`${table}.id`)} in (select rowid from ${sql.table(`${table}_search`)} where ${sql.table(`${table}_search`)} match ${ftsQuery(words)})`,
  searchRank: (table, words) => ({
    rank: sql<number>`fts.fts_rank`,
    join: sql`(select rowid as fts_id, rank as fts_rank from ${sql.table(`${table}_search`)} where ${sql.table(`${table}_search`)} match ${ftsQuery(words)})`,
  }),
  rowsFrom: (_table, columns, json) =>
    sql`(select ${sql.join(
      [...columns, 'id'].map((k) => sql`value ->> ${sql.lit(`$.${k}`)} as ${sql.ref(k)}`),
    )} from json_each(${json})) as r`,
  updatedColumns: () => sql`*`,
  period: (period, value, source, zone) =>
    datePrefix(period, value, source) ?? sql<string>`fsm_period(${period}, ${value}, ${source}, ${zone})`,
  instant: (text) => sql<number>`fsm_instant(${text})`,
  isUniqueViolation: (err) => code(err) === 'SQLITE_CONSTRAINT_UNIQUE' || code(err) === 'SQLITE_CONSTRAINT_PRIMARYKEY',
  isForeignKeyViolation: (err) => code(err) === 'SQLITE_CONSTRAINT_FOREIGNKEY',
};

/**
 * A calendar date's day, month or year is a prefix of its text (`2026-12-01`): no conversion per
 * row (a summary of 20,000 invoices by month took 88 ms through to_char, a bare GROUP BY 24 ms).
 */
function datePrefix(period: Period, value: Expression<unknown>, source: DateSource): RawBuilder<string> | undefined {
  if (source !== 'date' || period === 'week') return undefined;
  return sql<string>`substr(${value}, 1, ${sql.lit(period === 'day' ? 10 : period === 'month' ? 7 : 4)})`;
}

/** to_char's pattern of each period key (`IYYY`/`IW`: the ISO week-numbering year and week). */
const PG_PERIOD_FORMATS: Record<Period, string> = {
  day: 'YYYY-MM-DD',
  week: 'IYYY-"W"IW',
  month: 'YYYY-MM',
  year: 'YYYY',
};

export const POSTGRES: DialectStrategy = {
  name: 'postgres',
  statementsOnThread: false,
  serialWriters: false,
  commitNotifications: true,
  lockClause: (mode, opts = {}) =>
    sql.raw(` for ${mode}${opts.of ? ` of ${opts.of}` : ''}${opts.skipLocked ? ' skip locked' : ''}`),
  lockKey: async (db, key, account) => {
    if (account === undefined) await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(db);
    else await sql`select pg_advisory_xact_lock(${account}, hashtext(${key}))`.execute(db);
  },
  accountCondition: (eb, column, account) => eb.and([eb(column, '>=', account), eb(column, '<=', account)]),
  indexHint: () => sql``,
  pageBound: (n) => n,
  lower: (text) => sql`lower(${text})`,
  jsonMember: (column, key, type) =>
    type === 'number'
      ? sql`(${column} ->> ${key})::float8`
      : type === 'boolean'
        ? sql`((${column} ->> ${key})::boolean)::int`
        : sql`(${column} ->> ${key})`,
  jsonHas: (column, key, value) => sql<SqlBool>`${column} @> ${JSON.stringify({ [key]: value })}::jsonb`,
  containsMatch: () => undefined,
  toJson: (value) => value,
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : ((value ?? {}) as Record<string, unknown>)),
  searchMatch: (table, words) => sql<SqlBool>`${tsVector(table)} @@ to_tsquery('simple', ${tsQuery(words)})`,
  searchRank: (table, words) => ({
    rank: sql<number>`-ts_rank(${tsVector(table)}, to_tsquery('simple', ${tsQuery(words)}))`,
  }),
  rowsFrom: (table, _columns, json) => sql`jsonb_populate_recordset(null::${sql.table(table)}, ${json}::jsonb) as r`,
  updatedColumns: (table) => sql`${sql.table(table)}.*`,
  period: (period, value, source, zone) => {
    const prefix = datePrefix(period, value, source);
    if (prefix) return prefix;
    const local =
      source === 'ms'
        ? sql`(to_timestamp(${value}::float8 / 1000) at time zone ${zone})`
        : source === 'text'
          ? sql`((${value})::timestamptz at time zone ${zone})`
          : sql`((${value})::date)`;
    return sql<string>`to_char(${local}, ${sql.lit(PG_PERIOD_FORMATS[period])})`;
  },
  instant: (text) => sql<number>`(extract(epoch from (${text})::timestamptz) * 1000)::bigint`,
  isUniqueViolation: (err) => code(err) === '23505',
  isForeignKeyViolation: (err) => code(err) === '23503',
};

export const DIALECTS: Record<DialectName, DialectStrategy> = { sqlite: SQLITE, postgres: POSTGRES };
