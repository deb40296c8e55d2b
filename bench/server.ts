import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface RunningServer {
  url: string;
  pid: number;
  /** The peak resident set size so far (MB): the largest process, and all processes together. */
  peakRss(): { max: number; total: number };
  /** CPU seconds the process and its workers have used so far (user + system). */
  cpuSeconds(): number;
  /** Database statements the server has run so far (ours only: from its /metrics). */
  statements?(): Promise<number | undefined>;
  stop(): Promise<void>;
}

/** VmHWM (peak RSS) of a process in MB, or 0 once it is gone. */
function vmHwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** utime + stime of a process in seconds (clock ticks of 1/100 s on Linux), or 0 once it is gone. */
function cpuOf(pid: number): number {
  try {
    // The fields after the command name, which sits in parentheses and may hold spaces.
    const rest = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(rest[11]) + Number(rest[12])) / 100;
  } catch {
    return 0;
  }
}

/** The largest VmHWM (MB) among a process's children now (0 with none): a short-lived helper's peak, sampled. */
export const childPeakRss = (pid: number): number => Math.max(0, ...children(pid).map(vmHwm));

function children(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Every process started here and not gone yet, killed when the bench exits, also when a run fails
 * midway: a server left behind went on polling the next run's database (same name) from its
 * delivery worker, and skewed its figures.
 */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts a server script as its own process and resolves once it printed `listening on`
 * (every worker, with WORKERS > 1). `script` is relative to the project root. A peer server
 * (bench/peer-directus.ts) passes its own arguments and a `readyUrl` to poll until it answers 200.
 */
export async function startProcess(
  root: string,
  script: string,
  env: Record<string, string | undefined>,
  opts: { workers?: number; args?: string[]; scriptArgs?: string[]; readyUrl?: string } = {},
): Promise<RunningServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...(opts.args ?? []), path.resolve(root, script), ...(opts.scriptArgs ?? [])],
    {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  const want = opts.workers ?? 1;
  const url = await new Promise<string>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`${script} did not start within 60 s:\n${out.slice(-2000)}`));
    }, 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (opts.readyUrl) return;
      const lines = out.match(/listening on (\S+)/g) ?? [];
      if (lines.length >= want) {
        clearTimeout(timer);
        resolve(String(lines[0]).replace('listening on ', ''));
      }
    };
    if (opts.readyUrl) {
      // Polled until it answers 200, or the process exits, or the 60 s are up.
      void (async () => {
        while (!settled && child.exitCode === null) {
          const ok = await fetch(opts.readyUrl!).then(
            (res) => res.status === 200,
            () => false,
          );
          if (ok && !settled) {
            settled = true;
            clearTimeout(timer);
            return resolve(new URL(opts.readyUrl!).origin);
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      })();
    }
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}:\n${out.slice(-2000)}`));
    });
  });
  // Keep draining the pipes (logs) so the server never blocks on a full pipe.
  child.stdout!.removeAllListeners('data').resume();
  child.stderr!.removeAllListeners('data').on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  const pid = child.pid!;
  return {
    url,
    pid,
    peakRss() {
      const all = [pid, ...children(pid)].map(vmHwm);
      return { max: Math.max(...all), total: all.reduce((a, b) => a + b, 0) };
    },
    cpuSeconds: () => [pid, ...children(pid)].map(cpuOf).reduce((a, b) => a + b, 0),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
