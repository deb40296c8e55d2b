import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DIALECTS, PG_URL, formAction, inputValue, skipUnless } from './helpers.js';

/**
 * The README's shell commands run as written, in order, on a fresh setup: every ```sh block is
 * run with bash from the project's directory against a fresh server started as `npm start` does
 * (`node dist/src/server.js`, a temporary DATA_DIR, a free PORT). Shell variables a block sets
 * (CLIENT_ID, ACCESS_TOKEN, …) carry over to the next. The browser step is driven here (login
 * and consent forms with a cookie jar), and sets CODE as the README tells its reader to.
 * New sections are covered as they are written: only the blocks listed in STAND_INS are not run.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const README_ORIGIN = 'http://127.0.0.1:8080';

/** Commands the test stands in for: it installs nothing, does not run itself, and starts the server itself. */
const STAND_INS: [RegExp, string][] = [
  [/^npm ci && npm start$/, 'the server: started by the test'],
  [/^DATABASE_URL=\S+ npm start$/, 'the server on PostgreSQL: started by the test for that dialect'],
  [/^npm ci && npm test$/, 'the test suite: this is it'],
  [/^(DATABASE_URL=\S+ )?npm run bench(\s+#.*)?$/, 'the benchmark: minutes of load'],
];

export function shBlocks(md: string): { code: string; line: number }[] {
  const out: { code: string; line: number }[] = [];
  for (const m of md.matchAll(/^([ \t]*)```sh[ \t]*\n([\s\S]*?)^\1```[ \t]*$/gm)) {
    const indent = m[1].length;
    const code = m[2]
      .split('\n')
      .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
      .join('\n');
    out.push({ code, line: md.slice(0, m.index).split('\n').length + 1 });
  }
  return out;
}

const commands = (code: string) =>
  code
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
const standIn = (code: string) => {
  const reasons = commands(code).map((c) => STAND_INS.find(([re]) => re.test(c))?.[1]);
  return reasons.every(Boolean) ? reasons.join('; ') : undefined;
};

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** A browser stand-in over fetch: keeps cookies, never follows redirects. */
async function authorize(url: string, base: string, who: { login: string; password: string }): Promise<string> {
  const jar = new Map<string, string>();
  const request = async (method: 'GET' | 'POST', target: string, form?: Record<string, string>) => {
    const res = await fetch(new URL(target, base), {
      method,
      redirect: 'manual',
      headers: {
        ...(jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [kv] = c.split(';');
      const i = kv.indexOf('=');
      jar.set(kv.slice(0, i), kv.slice(i + 1));
    }
    return { status: res.status, location: res.headers.get('location') ?? '', body: await res.text() };
  };
  let page = await request('GET', url);
  assert.equal(page.status, 200, `the authorization page: ${page.body.slice(0, 300)}`);
  if (page.body.includes('name="password"')) {
    const signIn = await request('POST', formAction(page.body), {
      csrf: inputValue(page.body, 'csrf'),
      login: who.login,
      password: who.password,
    });
    assert.equal(signIn.status, 303, `sign-in: ${signIn.body.slice(0, 300)}`);
    page = await request('GET', signIn.location);
  }
  const consent = await request('POST', formAction(page.body), {
    csrf: inputValue(page.body, 'csrf'),
    decision: 'allow',
  });
  const code = new URL(consent.location).searchParams.get('code');
  assert.ok(code, `consent answered ${consent.status} ${consent.location}`);
  return code;
}

/** Every JSON line a block printed that is an error or a failure envelope (or an OAuth error). */
function refusals(stdout: string): string[] {
  return stdout.split('\n').filter((line) => {
    try {
      const v = JSON.parse(line);
      return (
        v && typeof v === 'object' && (v.result === 'error' || v.result === 'failure' || typeof v.error === 'string')
      );
    } catch {
      return false;
    }
  });
}

it('the README has sh blocks, and each is either run or stood in for', () => {
  const blocks = shBlocks(README);
  assert.ok(blocks.length >= 8, `only ${blocks.length} sh blocks found`);
  assert.ok(
    blocks.some((b) => b.code.includes('/oauth2/code?')),
    'the browser step prints its address',
  );
});

for (const dialect of DIALECTS) {
  describe(`README commands as written, in order, on a fresh setup (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let server: ChildProcess | undefined;
    let dataDir: string;
    let base: string;
    let dropDb = async () => {};
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.DATABASE_URL;

    before(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-readme-'));
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      Object.assign(env, {
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        README_STATE: path.join(dataDir, 'shell-state.sh'),
        LOG_LEVEL: 'warn',
      });
      if (dialect === 'postgres') {
        const name = `fsm_readme_${crypto.randomBytes(6).toString('hex')}`;
        const admin = new pg.Client({ connectionString: PG_URL });
        await admin.connect();
        await admin.query(`create database ${name}`);
        await admin.end();
        const url = new URL(PG_URL!);
        url.pathname = `/${name}`;
        env.DATABASE_URL = url.toString();
        dropDb = async () => {
          const c = new pg.Client({ connectionString: PG_URL });
          await c.connect();
          await c.query(`drop database if exists ${name} with (force)`);
          await c.end();
        };
      }
    });
    after(async () => {
      if (server && server.exitCode === null) {
        server.kill('SIGTERM');
        await new Promise((resolve) => server!.once('exit', resolve));
      }
      await dropDb();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    /** As `npm start` does: the compiled server, waiting for its "listening on" line. */
    async function startServer() {
      if (server) return;
      server = spawn(process.execPath, ['dist/src/server.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the server did not start: ${output}`)), 30_000);
        const seen = (d: Buffer) => {
          output += d;
          if (output.includes('listening on')) {
            clearTimeout(timer);
            resolve();
          }
        };
        server!.stdout!.on('data', seen);
        server!.stderr!.on('data', (d) => (output += d));
        server!.once('exit', (code) => reject(new Error(`the server exited (${code}): ${output}`)));
      });
    }

    it('runs every sh block of the README in order', async (t) => {
      const who = /--login (\S+) --password "([^"]+)"/.exec(README);
      assert.ok(who, 'the README creates a user with --login and --password');
      let ran = 0;
      for (const block of shBlocks(README)) {
        const skip = standIn(block.code);
        if (skip) {
          if (/started by the test/.test(skip)) await startServer();
          t.diagnostic(`README line ${block.line}: stood in for (${skip})`);
          continue;
        }
        await startServer();
        const script = [
          'set -euo pipefail',
          '[ -f "$README_STATE" ] && source "$README_STATE"',
          block.code.replaceAll(README_ORIGIN, base),
          // Hand the shell variables and functions the block set to the next block.
          `{ declare -p | grep -E '^declare -[-aAix]* [A-Z][A-Z0-9_]*=' | grep -Ev '^declare -[-aAix]* (BASH[A-Z_]*|PIPESTATUS|GROUPS|RANDOM|SRANDOM|SECONDS|LINENO|EPOCHSECONDS|EPOCHREALTIME|HISTCMD|PPID|UID|EUID|SHELLOPTS|BASHOPTS|COLUMNS|LINES|README_STATE)=' || true; declare -f; } > "$README_STATE.next"`,
          'mv "$README_STATE.next" "$README_STATE"',
        ].join('\n');
        const r = spawnSync('bash', ['-c', script], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
        const what = `README line ${block.line}:\n${block.code}\n--- stdout:\n${r.stdout}\n--- stderr:\n${r.stderr}`;
        assert.equal(r.status, 0, `exited ${r.status}: ${what}`);
        assert.deepEqual(refusals(r.stdout), [], `the server refused a command: ${what}`);
        ran++;
        // The browser step: the block printed the authorization address; sign in, allow, and
        // hand the code to the shell as the README says (CODE=…).
        const address = /https?:\/\/\S+\/oauth2\/code\?\S+/.exec(r.stdout)?.[0];
        if (address) {
          const code = await authorize(address, base, { login: who[1], password: who[2] });
          fs.appendFileSync(env.README_STATE!, `CODE=${code}\n`);
        }
      }
      assert.ok(ran >= 6, `only ${ran} blocks ran`);
      t.diagnostic(`${ran} README blocks ran against ${base}`);
    });
  });
}
