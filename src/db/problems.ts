/**
 * What is wrong with the database, in words for the operator: `fsm doctor` and a server that cannot
 * start say the same.
 */

/** Where the database is: `PostgreSQL at host:port/name` (never the password) or `SQLite at FILE`. */
export function databaseLabel(opts: { databaseUrl?: string; sqliteFile?: string }): string {
  if (!opts.databaseUrl) return `SQLite at ${opts.sqliteFile ?? ':memory:'}`;
  try {
    const url = new URL(opts.databaseUrl);
    return `PostgreSQL at ${url.host}${url.pathname}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL is not a URL)';
  }
}

/** The driver's message; a connection tried on several addresses (AggregateError) says each. */
export function reason(err: unknown): string {
  const inner = (err as { errors?: unknown[] }).errors;
  if (Array.isArray(inner) && inner.length && !(err as Error).message)
    return inner.map((e) => (e as Error).message || String(e)).join('; ');
  return (err as Error).message || String(err);
}

const WORDS: Record<string, string> = {
  ECONNREFUSED: 'nothing accepts connections at that host and port (is the server running? are host and port right?)',
  ENOTFOUND: 'the host name does not resolve',
  ETIMEDOUT: 'the connection timed out (a firewall, or the wrong host?)',
  '3D000': 'the database does not exist (create it, or fix the name in DATABASE_URL)',
  '28P01': 'the password was refused',
  '28000': 'the server refused this user (pg_hba.conf or the user name)',
  '55000': 'the database does not accept connections now',
  '57P03': 'the server is starting up or shutting down',
  SQLITE_CANTOPEN: 'the SQLite file cannot be opened (permissions?)',
  SQLITE_CORRUPT: 'the SQLite file is damaged: restore the last backup (docs/operations.md)',
  SQLITE_NOTADB: 'the file is not a SQLite database',
  EACCES: 'permission denied (is DATA_DIR writable?)',
};

/** The usual connection failures in words, then the driver's own message. */
export function connectionProblem(err: unknown): string {
  const code = (err as { code?: string }).code;
  const said = code ? WORDS[code] : undefined;
  return said ? `${said} [${reason(err)}]` : reason(err);
}
