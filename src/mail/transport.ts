import nodemailer from 'nodemailer';

/** How long a relay may take to accept a connection, greet, or answer a command. */
const CONNECT_MS = 10_000;
const SOCKET_MS = 30_000;
/** A lease outlives the longest attempt (connection, greeting, then the message), with a margin. */
export const ATTEMPT_MS = CONNECT_MS * 2 + SOCKET_MS;

export interface Mail {
  from: string;
  to: string;
  subject: string;
  text: string;
  messageId: string;
}

/** What became of one attempt: sent, or refused for now (4xx, no connection) or for good (5xx). */
export type Attempt = { ok: true } | { ok: false; permanent: boolean; error: string };

export interface MailSender {
  send(mail: Mail): Promise<Attempt>;
  close(): void;
}

/** The envelope's sender: the address of `Name <address>`, or the whole setting. */
export const addressOf = (from: string): string => /<([^<>]+)>$/.exec(from)?.[1] ?? from;

/**
 * A pooled nodemailer transport on SMTP_URL (`smtp://` plain or STARTTLS when offered, `smtps://`
 * TLS from the start; user and password from the URL). The recipient is passed as an address
 * object and as the envelope, never parsed from text, so one message has exactly one recipient.
 */
export function smtpSender(smtpUrl: string): MailSender {
  const transport = nodemailer.createTransport(smtpUrl, {
    pool: true,
    maxConnections: 4,
    connectionTimeout: CONNECT_MS,
    greetingTimeout: CONNECT_MS,
    socketTimeout: SOCKET_MS,
    logger: false,
    debug: false,
  } as object);
  return {
    async send(mail) {
      try {
        await transport.sendMail({
          from: mail.from,
          to: { name: '', address: mail.to },
          envelope: { from: addressOf(mail.from), to: [mail.to] },
          subject: mail.subject,
          text: mail.text,
          messageId: mail.messageId,
          disableFileAccess: true,
          disableUrlAccess: true,
        });
        return { ok: true };
      } catch (err) {
        return refusal(err as Error & { responseCode?: number });
      }
    },
    close: () => transport.close(),
  };
}

/** A 5xx answer is final; a 4xx, a timeout or a connection that failed is tried again later. */
export function refusal(err: Error & { responseCode?: number }): Attempt {
  const code = err.responseCode;
  const error = (err.message || String(err)).replace(/[\r\n]+/g, ' ').slice(0, 1000);
  return { ok: false, permanent: typeof code === 'number' && code >= 500 && code < 600, error };
}
