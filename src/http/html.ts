import type { FastifyReply } from 'fastify';

/** Everything placed in a page goes through this. */
export const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The pages' policy: inline style only, nothing loaded, never framed. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

/**
 * Pages are never framed (clickjacking), cached or leak their URL (it carries state or a secret) in
 * a Referer: the app's onRequest hook already sets X-Frame-Options, Referrer-Policy, nosniff and
 * no-store on every response (src/http/security.ts, envelope.ts). A page replaces the content type
 * and lets its inline style (and, given, its own scripts) through the Content-Security-Policy.
 */
export function sendPage(reply: FastifyReply, status: number, html: string, csp = PAGE_CSP): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html;charset=utf-8')
    .header('content-security-policy', csp)
    .send(html);
}
