import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers: a status, optional headers, and an optional delay first. */
export type Answer = { status: number; headers?: Record<string, string>; delayMs?: number };

/** A webhook receiver on 127.0.0.1 recording every request; `answer` decides each reply. */
export async function startReceiver(answer: (r: Received, n: number) => Answer = () => ({ status: 200 })) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      const a = receiver.answer(r, received.length);
      const reply = () => {
        if (res.destroyed) return;
        res.writeHead(a.status, a.headers).end('ok');
      };
      if (a.delayMs) setTimeout(reply, a.delayMs).unref();
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // A test that fails before closing its receiver must not keep the test file's process alive
  // (it would hang the run): neither the listening socket nor a connection holds the event loop.
  server.unref();
  server.on('connection', (socket) => socket.unref());
  const { port } = server.address() as AddressInfo;
  const receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    answer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** Waits until `check` holds, polling; fails after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
