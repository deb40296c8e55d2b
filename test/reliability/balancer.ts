import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sleep, startServer, type ServerProcess } from './process.js';

/**
 * Two server processes behind HAProxy (docs/deployment.md), for the deployment test. The
 * configuration is rendered here once: the test runs it, and docs/deployment.md shows it (a test
 * compares the two), so the documented configuration is the tested one.
 */

/** Debian's haproxy (`apt-get install -y haproxy`; .ci/run installs it), if present. */
export const HAPROXY = ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy', '/usr/bin/haproxy'].find((p) =>
  fs.existsSync(p),
);

export interface BalancerOptions {
  /** The frontend's address, `host:port`. */
  bind: string;
  /** Backend name and `host:port`, in order. */
  servers: [string, string][];
  /** The health check's path: `/healthz` where the server has it, else `/openapi.json`. */
  healthPath: string;
}

export function haproxyConfig(o: BalancerOptions): string {
  return `global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    timeout http-request 10s
    # A request whose connection to a server failed (it never reached the process) goes to the other one.
    retries 2
    option redispatch

frontend api
    bind ${o.bind}
    option forwardfor
    default_backend fsm

backend fsm
    balance roundrobin
    option httpchk GET ${o.healthPath}
    http-check expect status 200
    # Which process answered (for tests and debugging).
    http-response set-header X-Served-By %[srv_name]
    default-server check inter 500ms fall 2 rise 2
${o.servers.map(([name, addr]) => `    server ${name} ${addr}`).join('\n')}
`;
}

/** A port free on 127.0.0.1 right now (the kernel's choice). */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** Stops a child: SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stop(child: ChildProcess, exited: Promise<unknown>, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export interface Deployment {
  origin: string;
  backends: Record<string, ServerProcess>;
  healthPath: string;
  config: string;
  haproxyOutput(): string;
  close(): Promise<void>;
}

/**
 * Backends `a` and `b` on the same database (env, plus `own(name)`'s settings for each), then
 * HAProxy in front; resolves once both answer through it.
 */
export async function deploy(
  env: Record<string, string>,
  own: (name: string) => Record<string, string> = () => ({}),
): Promise<Deployment> {
  if (!HAPROXY) throw new Error('haproxy is not installed (apt-get install -y haproxy)');
  const backends: Record<string, ServerProcess> = {};
  let haproxy: ChildProcess | undefined;
  let haproxyExited: Promise<unknown> = Promise.resolve();
  let out = '';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-haproxy-'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (haproxy) await stop(haproxy, haproxyExited);
    await Promise.all(Object.values(backends).map((b) => stop(b.child, b.exited)));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Both processes migrate at start; the second waits for the first, so they never race on the schema.
    for (const name of ['a', 'b']) backends[name] = await startServer({ ...env, ...own(name), PUBLIC_URL: origin });
    const healthz = await fetch(`${backends.a.origin}/healthz`, { signal: AbortSignal.timeout(5000) }).catch(
      () => undefined,
    );
    const healthPath = healthz?.status === 200 ? '/healthz' : '/openapi.json';
    const config = haproxyConfig({
      bind: `127.0.0.1:${port}`,
      servers: Object.entries(backends).map(([name, b]) => [name, new URL(b.origin).host]),
      healthPath,
    });
    const file = path.join(dir, 'haproxy.cfg');
    fs.writeFileSync(file, config);
    const child = spawn(HAPROXY, ['-f', file, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
    haproxy = child;
    haproxyExited = new Promise((resolve) => child.on('exit', resolve));
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    // Ready when both backends have answered through the frontend (bounded: 15 s).
    const seen = new Set<string>();
    for (const deadline = Date.now() + 15_000; seen.size < 2;) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`HAProxy did not reach both backends: ${out}`);
      const res = await fetch(`${origin}/openapi.json`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
      await res?.arrayBuffer();
      const by = res?.status === 200 ? res.headers.get('x-served-by') : null;
      if (by) seen.add(by);
      else await sleep(100);
    }
    return { origin, backends, healthPath, config, haproxyOutput: () => out, close };
  } catch (err) {
    await close();
    throw err;
  }
}
