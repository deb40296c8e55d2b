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

/** The `webhook-id` of a delivery: random, the same on every retry of it. */
export const newMessageId = () => `msg_${crypto.randomBytes(16).toString('base64url')}`;
