import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addressBucket, enforceRateLimit } from '../../http/rate-limit/index.js';
import { ApiError } from '../../errors.js';
import { clientBucket } from '../rate-limits.js';

/**
 * The rate limit of one client-endpoint request: counted in the client's bucket once it has
 * authenticated; a request that fails before that (bad credentials, malformed form) is counted
 * against the client address instead, and over the limit its 429 replaces the error.
 */
export function clientRateLimit(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  let counted = false;
  const limiter = app.rateLimits.auth;
  return {
    async authenticated(clientId: string): Promise<void> {
      counted = true;
      await enforceRateLimit(reply, limiter, clientBucket(clientId));
    },
    /** Returns the error to answer with. */
    async failed(err: unknown): Promise<unknown> {
      if (counted || err instanceof ApiError) return err;
      counted = true;
      try {
        await enforceRateLimit(reply, limiter, addressBucket(request));
        return err;
      } catch (refusal) {
        return refusal;
      }
    },
  };
}
