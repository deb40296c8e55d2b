import type { FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { ActionAnswer, Caller, RetryHandle } from '../../collections/machinery/collection.js';
import type { Database } from '../../db/index.js';
import type { Executor } from '../../db/tx.js';
import { toApiError } from '../envelope.js';
import { ApiError } from '../../errors.js';
import { jsonDigest, sha256 } from './fingerprint.js';
import { parseIdempotencyKey } from './key.js';
import { claim, keep, keepOnce, release, type Claim, type KeptAnswer, type RowKey, type Scope } from './repository.js';

/** An answer on its way out; `raw`, when set, is its body text as sent (a replay's, or the one just kept). */
export interface Answer extends ActionAnswer {
  raw?: string;
}

/** The answer as kept; its body text is then what is sent too, so it is serialised once. */
function kept(a: Answer): KeptAnswer {
  a.raw ??= JSON.stringify(a.body);
  return { status: a.status, headers: a.headers ?? {}, body: a.raw };
}

/** Set only by the crash test: die between the commit of a kept answer and sending it. */
const KILL_AFTER_COMMIT = 'FSM_TEST_KILL_AFTER_COMMIT';

/** Thrown inside a write's transaction when another request holds the key: the write rolls back. */
class KeyTaken extends Error {
  constructor(readonly found: Exclude<Claim, { kind: 'claimed' }>) {
    super('the idempotency key is taken');
  }
}

/** The keys of this process's plain writes still running: a repeat meanwhile is a 409 at once. */
const running = new Set<string>();

/**
 * One request's `Idempotency-Key` (PRODUCT §7, the IETF httpapi draft).
 *
 * A write of the pipeline (POST, PATCH, DELETE of a collection) claims the key when it keeps its
 * answer: in its own transaction, by the insert of the kept answer (`keepOnce`), so the answer
 * commits with the write or not at all, and a key costs no commit of its own. A repeat while the
 * first runs in this process is a 409 at once; a repeat in another process runs up to that insert,
 * then finds the first's row and rolls back: it answers with the kept answer (or 409 / 422), and
 * the work is done once. An answer made without the transaction (a 4xx: nothing was committed) is
 * kept just after; a 5xx is not kept.
 *
 * An action claims the key first (its own short statement, `claim`) and keeps its answer after,
 * or in its transaction when it writes through the pipeline; an upload claims it with the digest
 * of the bytes it staged.
 */
export class Retry implements RetryHandle {
  private claimed?: RowKey & { lease: string };
  private keptInTransaction = false;

  constructor(
    private readonly database: Database,
    private readonly scope: Scope,
    private readonly target: string,
    private readonly now: number,
    /** The body's digest when the dispatcher has the body; undefined for streamed bodies. */
    private readonly bodyDigest: string | undefined,
    /** A write of the pipeline (not an action): the key is claimed with its answer, in its transaction. */
    private readonly write: boolean,
  ) {}

  private fingerprint(digest: string): string {
    return sha256(`${this.target}\n${digest}`);
  }

  /** The answer when another request's row holds the key: its kept answer, or a 409 / 422. */
  private answerFor(found: Exclude<Claim, { kind: 'claimed' }>): Answer {
    if (found.kind === 'mismatch') throw new ApiError('idempotencyKeyReused');
    if (found.kind === 'inFlight') throw new ApiError('idempotencyInFlight');
    return {
      status: found.answer.status,
      headers: { ...found.answer.headers, 'idempotency-replayed': 'true' },
      body: undefined,
      raw: found.answer.body,
    };
  }

  async claim(digest: string): Promise<Answer | undefined> {
    if (this.claimed) return undefined;
    const c = await claim(this.database.db, this.scope, this.fingerprint(digest), this.now);
    if (c.kind === 'claimed') {
      this.claimed = { accountId: this.scope.accountId, id: c.id, lease: c.lease };
      return undefined;
    }
    return this.answerFor(c);
  }

  async keep(tx: Executor, answer: Answer): Promise<void> {
    if (this.claimed) {
      // False when our lease ran out and another request took the key: this write must not commit.
      if (!(await keep(tx, this.claimed, this.claimed.lease, kept(answer)))) throw new ApiError('idempotencyInFlight');
    } else if (this.write && this.bodyDigest !== undefined) {
      const r = await keepOnce(tx, this.scope, this.fingerprint(this.bodyDigest), this.now, kept(answer));
      if (r.kind !== 'kept') throw new KeyTaken(r);
    } else {
      return;
    }
    this.keptInTransaction = true;
  }

  async run(work: () => Promise<Answer>): Promise<Answer> {
    if (this.write && this.bodyDigest !== undefined) return this.runWrite(work, this.bodyDigest);
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
      if (answer.status < 500) await keep(this.database.db, this.claimed, this.claimed.lease, kept(answer));
      else await release(this.database.db, this.claimed, this.claimed.lease);
    }
    return answer;
  }

  private async runWrite(work: () => Promise<Answer>, digest: string): Promise<Answer> {
    const { accountId, clientId, userId, key } = this.scope;
    const id = JSON.stringify([accountId, clientId, userId, key]);
    if (running.has(id)) throw new ApiError('idempotencyInFlight');
    running.add(id);
    try {
      let answer: Answer;
      try {
        answer = await work();
      } catch (err) {
        if (err instanceof KeyTaken) return this.answerFor(err.found);
        const e = toApiError(err);
        if (e.status >= 500) throw err;
        // A 4xx: nothing was committed; it is the final answer, unless another request kept one first.
        const r = await keepOnce(this.database.db, this.scope, this.fingerprint(digest), this.now, {
          status: e.status,
          headers: e.headers,
          body: JSON.stringify({ result: 'error', error: e.body }),
        });
        if (r.kind !== 'kept') return this.answerFor(r);
        throw err;
      }
      if (this.keptInTransaction) {
        if (process.env[KILL_AFTER_COMMIT] === '1') process.kill(process.pid, 'SIGKILL');
        return answer;
      }
      if (answer.status >= 500) return answer;
      const r = await keepOnce(this.database.db, this.scope, this.fingerprint(digest), this.now, kept(answer));
      return r.kind === 'kept' ? answer : this.answerFor(r);
    } finally {
      running.delete(id);
    }
  }

  /** After an error: a 4xx is the final answer (nothing was written); a 5xx frees the key. */
  private async settle(err: ApiError): Promise<void> {
    if (!this.claimed) return;
    try {
      if (err.status < 500) {
        const body = JSON.stringify({ result: 'error', error: err.body });
        await keep(this.database.db, this.claimed, this.claimed.lease, {
          status: err.status,
          headers: err.headers,
          body,
        });
      } else {
        await release(this.database.db, this.claimed, this.claimed.lease);
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
export function openRetry(
  database: Database,
  request: FastifyRequest,
  caller: Caller,
  method: string,
  write: boolean,
): Retry | undefined {
  if (method === 'GET') return undefined;
  const key = parseIdempotencyKey(request.headers['idempotency-key']);
  if (key === undefined) return undefined;
  const streamed = request.isMultipart() || request.body instanceof Readable;
  // A JSON body is compared as parsed (key order and whitespace do not matter); a streamed one
  // (an upload) by the digest of its bytes, which the action computes as it stages them.
  const digest = streamed ? undefined : request.body === undefined ? '' : jsonDigest(request.body);
  const scope = { accountId: caller.accountId, clientId: caller.clientId, userId: caller.userId, key };
  return new Retry(database, scope, `${method} ${request.url}`, caller.now, digest, write);
}

export { purgeExpired } from './repository.js';
