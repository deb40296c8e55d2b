import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';

/** A mail the test relay received: its envelope and the parsed message. */
export interface Received {
  from: string;
  to: string[];
  mail: ParsedMail;
  raw: string;
}

export interface TestRelay {
  url: string;
  received: Received[];
  /** Decides each message at DATA: undefined accepts; a number refuses with that SMTP code. */
  refuse: (r: Received) => number | undefined;
  close(): Promise<void>;
}

/** A real SMTP server inside the test (nodemailer's `smtp-server`), on a free loopback port. */
export async function startRelay(): Promise<TestRelay> {
  const relay: TestRelay = {
    url: '',
    received: [],
    refuse: () => undefined,
    close: async () => {},
  };
  const options: SMTPServerOptions = {
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then(
          (mail) => {
            const r: Received = {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((a) => a.address),
              mail,
              raw,
            };
            relay.received.push(r);
            const code = relay.refuse(r);
            if (code === undefined) return cb();
            const err = Object.assign(new Error(code >= 500 ? 'mailbox unavailable' : 'try again later'), {
              responseCode: code,
            });
            cb(err);
          },
          (err: Error) => cb(err),
        );
      });
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  relay.url = `smtp://127.0.0.1:${port}`;
  relay.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return relay;
}

/** Waits until `cond` holds (polling), failing after `ms`. */
export async function until(cond: () => Promise<boolean> | boolean, ms = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
