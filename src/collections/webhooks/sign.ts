import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes, base64. */
export const newSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;

/**
 * The Standard Webhooks headers of one attempt. During the 24 h after a rotation both secrets
 * sign (space-separated signatures), so a receiver can switch over at its own pace.
 */
export function signedHeaders(msgId: string, at: Date, payload: string, secrets: string[]): Record<string, string> {
  const signatures = secrets.map((s) => new Webhook(s).sign(msgId, at, payload));
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

let idPool = Buffer.alloc(0);
let idOffset = 0;

/**
 * The `webhook-id` of a delivery: 16 random bytes, the same on every retry of it. The bytes come
 * from the CSPRNG 256 ids at a time, each used once: one `randomBytes` call per id cost 6 µs, 6 % of
 * a W4 request's time with a webhook subscribed (CPU profile, docs/performance.md).
 */
export const newMessageId = (): string => {
  if (idOffset === idPool.length) {
    idPool = crypto.randomBytes(16 * 256);
    idOffset = 0;
  }
  idOffset += 16;
  return `msg_${idPool.toString('base64url', idOffset - 16, idOffset)}`;
};
