import fs from 'node:fs';
import http from 'node:http';
import { jobItem, postgresFloor, sha256, sqliteFloor, userItem, userRow, type FloorDb } from './floor.js';

/**
 * The ceilings, each a bare node:http server (run as its own process, as our server is):
 * - bytes: answers W1, W3 and GET /users/ID with the very response bytes captured from our server;
 * - floor: answers W1 and W3 with the same SQL on the same driver and database, and JSON.stringify;
 * - one statement: only the data, one statement per request (W1's page with its kept count, W3's
 *   item), JSON.stringify, the same headers; the token is checked against a table read at start,
 *   so nothing of authentication reaches the database. No correct server that sends a statement of
 *   its own for each request does less (ours shares one statement among the item reads of a
 *   moment, src/db/batched.ts, and so may go past it on W3);
 *   and W4 (POST /users) as the least a server that stores the items durably must do: the body
 *   parsed, the users inserted by one statement in one transaction (no validation, defaults,
 *   events or counts), their rows answered with JSON.stringify.
 */
const mode = process.env.CEILING_MODE;
// Every header our answers must carry (spec §1.7, the security headers), and per request the
// rate-limit fields: the floor does all a correct server must do, and no more.
const HEADERS = {
  'content-type': 'application/json;charset=UTF-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-version': '1.0',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};
const LIMIT = Number(process.env.RATE_LIMIT_API ?? 600);

function send(res: http.ServerResponse, status: number, body: string, limits?: Record<string, string>) {
  res.writeHead(status, { ...HEADERS, ...limits, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function bytesHandler(): http.RequestListener {
  const captured = JSON.parse(fs.readFileSync(process.env.CEILING_BYTES!, 'utf8')) as Record<
    'w1' | 'w3' | 'w3u',
    { headers: Record<string, string>; body: string }
  >;
  const answer = (c: { headers: Record<string, string>; body: string }) => {
    // Node writes its own date, connection and keep-alive headers, as it does for our server.
    const headers = Object.fromEntries(
      Object.entries(c.headers).filter(([k]) => !['date', 'connection', 'keep-alive'].includes(k)),
    );
    return { headers, body: Buffer.from(c.body) };
  };
  const w1 = answer(captured.w1);
  const w3 = answer(captured.w3);
  const w3u = answer(captured.w3u);
  return (req, res) => {
    const url = req.url!;
    const a = url.startsWith('/users/') ? w3u : url.startsWith('/users') ? w1 : w3;
    res.writeHead(200, a.headers);
    res.end(a.body);
  };
}

function floorHandler(db: FloorDb): http.RequestListener {
  return (req, res) => {
    const run = async () => {
      const auth = req.headers.authorization;
      const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
      const tokenHash = token === undefined ? undefined : sha256(token);
      // The token names its account (src/auth/secrets.ts): the row is looked up in it.
      const row = tokenHash ? await db.token(tokenHash, Number(/^(\d+)\./.exec(token!)?.[1] ?? 0)) : undefined;
      const now = Date.now();
      if (!row || Number(row.expires_at) <= now) return send(res, 401, '{"result":"error"}');
      const windowStart = now - (now % 60_000);
      const hits = await db.hit(`api:${tokenHash}`, windowStart);
      if (hits > LIMIT) return send(res, 429, '{"result":"error"}');
      const limits = {
        'ratelimit-limit': String(LIMIT),
        'ratelimit-remaining': String(Math.max(0, LIMIT - hits)),
        'ratelimit-reset': String(Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000))),
      };
      const url = req.url!;
      if (url.startsWith('/users')) {
        if (!(JSON.parse(row.permissions) as string[]).includes('users.read'))
          return send(res, 403, '{"result":"error"}');
        const perPage = Number(/recordsPerPage=(\d+)/.exec(url)?.[1] ?? 50);
        const [rows, count] = await Promise.all([db.users(row.account_id, perPage, 0), db.usersCount(row.account_id)]);
        const metadata = {
          page: 1,
          pagesCount: Math.ceil(count / perPage),
          recordsPerPage: perPage,
          recordsCount: count,
        };
        return send(res, 200, JSON.stringify({ result: 'success', users: rows.map(userItem), metadata }), limits);
      }
      if (!(JSON.parse(row.permissions) as string[]).includes('jobs.read')) return send(res, 403, '{"result":"error"}');
      const job = await db.job(row.account_id, Number(url.split('/')[2]));
      if (!job) return send(res, 404, '{"result":"error"}');
      const metadata = { page: 1, pagesCount: 1, recordsPerPage: 50, recordsCount: 1 };
      return send(res, 200, JSON.stringify({ result: 'success', jobs: [jobItem(job)], metadata }), limits);
    };
    run().catch(() => send(res, 500, '{"result":"error"}'));
  };
}

/** One statement per request, the bearer token checked in memory (see above). */
function oneStatementHandler(
  db: FloorDb,
  tokens: Map<string, number>,
  roles: Map<number, number>,
): http.RequestListener {
  return (req, res) => {
    const run = async () => {
      const auth = req.headers.authorization;
      const account = auth?.startsWith('Bearer ') ? tokens.get(sha256(auth.slice(7))) : undefined;
      if (account === undefined) return send(res, 401, '{"result":"error"}');
      const url = req.url!;
      if (req.method === 'POST') {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const now = Date.now();
        const items = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { users: Record<string, any>[] }).users;
        const rows = items.map((it) => userRow(it, account, roles.get(account), now));
        const made = await db.insertUsers(rows);
        return send(
          res,
          200,
          JSON.stringify({
            result: 'success',
            users: made.map(userItem),
            metadata: { receivedItemsCount: items.length, validItems: items.map((_, i) => i), invalidItems: [] },
          }),
        );
      }
      if (url.startsWith('/users')) {
        const perPage = Number(/recordsPerPage=(\d+)/.exec(url)?.[1] ?? 50);
        const rows = await db.usersPage(account, perPage, 0);
        const count = Number(rows[0]?.kept_count ?? 0);
        const metadata = {
          page: 1,
          pagesCount: Math.ceil(count / perPage),
          recordsPerPage: perPage,
          recordsCount: count,
        };
        return send(res, 200, JSON.stringify({ result: 'success', users: rows.map(userItem), metadata }));
      }
      const job = await db.job(account, Number(url.split('/')[2]));
      if (!job) return send(res, 404, '{"result":"error"}');
      const metadata = { page: 1, pagesCount: 1, recordsPerPage: 50, recordsCount: 1 };
      return send(res, 200, JSON.stringify({ result: 'success', jobs: [jobItem(job)], metadata }));
    };
    run().catch(() => send(res, 500, '{"result":"error"}'));
  };
}

const floorDb = () =>
  process.env.DATABASE_URL
    ? postgresFloor(process.env.DATABASE_URL)
    : sqliteFloor(`${process.env.DATA_DIR}/fsm.sqlite`);
const handler =
  mode === 'bytes'
    ? bytesHandler()
    : mode === 'one-statement'
      ? oneStatementHandler(
          floorDb(),
          new Map(JSON.parse(process.env.CEILING_TOKENS ?? '[]') as [string, number][]),
          new Map(JSON.parse(process.env.CEILING_ROLES ?? '[]') as [number, number][]),
        )
      : floorHandler(floorDb());
const server = http.createServer(handler);
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as { port: number }).port}`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
