import { Webhook } from 'standardwebhooks';
import type { WebhookEvent } from './types.js';

type Headers_ = Headers | Record<string, string | string[] | undefined>;
/**
 * A `node:http` request (`IncomingMessage`), its body unread: what is read of it, so the
 * declarations need no Node.js types.
 */
export interface NodeRequest extends AsyncIterable<Uint8Array | string> {
  headers: Record<string, string | string[] | undefined>;
  socket: unknown;
}
/** A delivery as a receiver has it: a fetch `Request`, a `node:http` request (its body unread), or headers and the raw body. */
export type Delivery = Request | NodeRequest | { headers: Headers_; body: string | Uint8Array };

/**
 * Checks a delivery's `webhook-signature` (Standard Webhooks: HMAC-SHA256 with the webhook's
 * `whsec_…` secret, timestamp within 5 minutes) over the exact bytes received, and answers the
 * event. Throws (`WebhookVerificationError`) on a bad or missing signature, or a stale timestamp.
 */
export async function verifyWebhook(delivery: Delivery, secret: string): Promise<WebhookEvent> {
  const { headers, body } = await read(delivery);
  const flat: Record<string, string> = {};
  if (headers instanceof Headers) headers.forEach((v, k) => (flat[k] = v));
  else
    for (const [k, v] of Object.entries(headers))
      if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  const event = new Webhook(secret).verify(body, flat) as object;
  return { id: flat['webhook-id'], ...event } as WebhookEvent;
}

async function read(d: Delivery): Promise<{ headers: Headers_; body: string }> {
  if (d instanceof Request) return { headers: d.headers, body: await d.text() };
  if ('body' in d && !('socket' in d))
    return { headers: d.headers, body: typeof d.body === 'string' ? d.body : new TextDecoder().decode(d.body) };
  const chunks: Uint8Array[] = [];
  const encoder = new TextEncoder();
  for await (const c of d as NodeRequest) chunks.push(typeof c === 'string' ? encoder.encode(c) : c);
  return { headers: (d as NodeRequest).headers, body: Buffer.concat(chunks).toString('utf8') };
}
