import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { ActionAnswer, Caller, RetryHandle } from '../../collections/machinery/collection.js';
import type { Database } from '../../db/index.js';
import type { Executor } from '../../db/tx.js';
import { toApiError } from '../envelope.js';
import { ApiError } from '../errors.js';
import { parseIdempotencyKey } from './key.js';
import { claim, keep, release, type KeptAnswer, type Scope } from './store.js';

/** An answer on its way out; `raw`, when set, is its body text as sent (a replay's, or the one just kept). */
export interface Answer extends ActionAnswer {
  raw?: string;
}

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/** The answer as kept; its body text is then what is sent too, so it is serialised once. */
function kept(a: Answer): KeptAnswer {
  a.raw ??= JSON.stringify(a.body);
  return { status: a.status, headers: a.headers ?? {}, body: a.raw };
}

/** Set only by the crash test: die between the commit of a kept answer and sending it. */
const KILL_AFTER_COMMIT = 'FSM_TEST_KILL_AFTER_COMMIT';

/**
 * One request's `Idempotency-Key` (PRODUCT §7, the IETF httpapi draft). `run` claims the key
 * (its own short statement), runs the request, and keeps its final answer: in the write's own
 * transaction through `keep` (the write pipeline's seal hook), so the answer commits with the
 * write or not at all; otherwise (a 4xx, nothing committed) just after. A 5xx gives the key up.
 * A request whose body only its action reads (an upload) is claimed by that action, with the
 * digest of the bytes it staged.
 */
export class Retry implements RetryHandle {
  private claimed?: { id: number; lease: string };
  private keptInTransaction = false;

  constructor(
    private readonly database: Database,
    private readonly scope: Scope,
    private readonly target: string,
    private readonly now: number,
    /** The body's digest when the dispatcher has the body; undefined for streamed bodies. */
    private readonly bodyDigest: string | undefined,
  ) {}

  async claim(digest: string): Promise<Answer | undefined> {
    if (this.claimed) return undefined;
    const c = await claim(this.database.db, this.scope, sha256(`${this.target}\n${digest}`), this.now);
    if (c.kind === 'mismatch') throw new ApiError('idempotencyKeyReused');
    if (c.kind === 'inFlight') throw new ApiError('idempotencyInFlight');
    if (c.kind === 'done') return { status: c.answer.status, headers: { ...c.answer.headers, 'idempotency-replayed': 'true' }, body: undefined, raw: c.answer.body };
    this.claimed = { id: c.id, lease: c.lease };
    return undefined;
  }

  async keep(tx: Executor, answer: Answer): Promise<void> {
    if (!this.claimed) return;
    // False when our lease ran out and another request took the key: this write must not commit.
    if (!(await keep(tx, this.claimed.id, this.claimed.lease, kept(answer)))) throw new ApiError('idempotencyInFlight');
    this.keptInTransaction = true;
  }

  async run(work: () => Promise<Answer>): Promise<Answer> {
    if (this.bodyDigest !== undefined) {
      const replay = await this.claim(this.bodyDigest);
      if (replay) return replay;
    }
    let answer: Answer;
    try {
      answer = await work();
    } catch (err) {
      await this.settle(toApiError(err));
      throw err;
    }
    if (this.claimed && this.keptInTransaction) {
      if (process.env[KILL_AFTER_COMMIT] === '1') process.kill(process.pid, 'SIGKILL');
    } else if (this.claimed) {
      if (answer.status < 500) await keep(this.database.db, this.claimed.id, this.claimed.lease, kept(answer));
      else await release(this.database.db, this.claimed.id, this.claimed.lease);
    }
    return answer;
  }

  /** After an error: a 4xx is the final answer (nothing was written); a 5xx frees the key. */
  private async settle(err: ApiError): Promise<void> {
    if (!this.claimed) return;
    try {
      if (err.status < 500) {
        const body = JSON.stringify({ result: 'error', error: err.body });
        await keep(this.database.db, this.claimed.id, this.claimed.lease, { status: err.status, headers: err.headers, body });
      } else {
        await release(this.database.db, this.claimed.id, this.claimed.lease);
      }
    } catch {
      // The database is failing: the lease runs out by itself.
    }
  }
}

/**
 * The Retry of a POST, PATCH or DELETE carrying `Idempotency-Key` (400 when malformed); undefined
 * without the header, and for GET, where it is ignored.
 */
export function openRetry(database: Database, request: FastifyRequest, caller: Caller, method: string): Retry | undefined {
  if (method === 'GET') return undefined;
  const key = parseIdempotencyKey(request.headers['idempotency-key']);
  if (key === undefined) return undefined;
  const streamed = request.isMultipart() || request.body instanceof Readable;
  const digest = streamed ? undefined : request.body === undefined ? '' : sha256(JSON.stringify(request.body));
  const scope = { accountId: caller.accountId, clientId: caller.clientId, userId: caller.userId, key };
  return new Retry(database, scope, `${method} ${request.url}`, caller.now, digest);
}

export { purgeExpired } from './store.js';
