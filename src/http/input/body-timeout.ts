import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorAnswer } from '../serialize.js';
import { ApiError } from '../../errors.js';

/** Below this average rate, once the first `timeoutMs` have passed, a body is too slow. */
const MIN_BYTES_PER_SECOND = 1024;
/** During a shutdown, a body that made no progress for this long is not waited for. */
const CLOSING_IDLE_MS = 1000;

const timedOut = (() => {
  const err = new ApiError('bodyTimeout');
  const body = errorAnswer(err.body);
  return (
    `HTTP/1.1 ${err.status} Request Timeout\r\nContent-Type: application/json;charset=UTF-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Version: 1.0\r\nConnection: close\r\n\r\n${body}`
  );
})();

/**
 * A request whose body is still arriving must keep arriving: no byte for `timeoutMs`, or on
 * average fewer than 1 KiB a second once `timeoutMs` has passed (a client trickling a byte every
 * few seconds), and it is answered 408 (code 1408) when nothing was answered yet, and its
 * connection closed. Everything reading the body then fails (an upload removes its staging), so
 * no request is held forever. Node's own `requestTimeout` would bound the whole request instead,
 * cutting a large upload on a slow but steady link. Progress is the socket's byte count, polled
 * (a timer only for requests whose body had not fully arrived when they started: uploads, large
 * bodies). During a shutdown (`closing()`), a body idle for a second is not waited for.
 */
export function watchBody(
  request: FastifyRequest,
  reply: FastifyReply,
  timeoutMs: number,
  closing: () => boolean,
): void {
  const raw = request.raw;
  const socket = raw.socket;
  // An injected request (tests) has no real socket to watch.
  if (raw.complete || typeof socket?.bytesRead !== 'number') return;
  const start = performance.now();
  const base = socket.bytesRead;
  let seen = base;
  let lastProgress = start;
  const timer = setInterval(
    () => {
      if (raw.complete || socket.destroyed) return clearInterval(timer);
      const now = performance.now();
      if (socket.bytesRead !== seen) {
        seen = socket.bytesRead;
        lastProgress = now;
      }
      const idleLimit = closing() ? Math.min(timeoutMs, CLOSING_IDLE_MS) : timeoutMs;
      const allowed = timeoutMs + ((seen - base) / MIN_BYTES_PER_SECOND) * 1000;
      if (now - lastProgress < idleLimit && now - start <= allowed) return;
      clearInterval(timer);
      // As Node answers its own request timeout: straight on the socket when no answer has begun.
      if (!reply.raw.headersSent && socket.writable) socket.write(timedOut);
      socket.destroy();
    },
    Math.min(1000, timeoutMs / 4, CLOSING_IDLE_MS / 4),
  );
  timer.unref();
  reply.raw.once('close', () => clearInterval(timer));
}
