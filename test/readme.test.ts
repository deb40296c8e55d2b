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
import { COMMANDS } from '../src/cli/commands.js';

/**
 * The README's shell commands run as written, in order, on a fresh setup: every ```sh block is
 * run with bash from the project's directory against a fresh server started as `npm start` does
 * (`node dist/src/server.js`, a temporary DATA_DIR, a free PORT). Shell variables a block sets
 * (BASE, CLIENT_ID, ACCESS_TOKEN, …) carry over to the next; the README's one `BASE=` line is
 * pointed at the test's server, and no command names the server's address otherwise. The browser
 * step is driven here (login and consent forms with a cookie jar), and sets CODE as the README
 * tells its reader to. New sections are covered as they are written: only the blocks listed in
 * STAND_INS are not run.
 *
 * Every answer of every `curl` is checked on its own, whether printed or kept in a variable: a
 * shell function in front of curl records each answer's status and body, and prints a newline
 * after it (two answers never share a line). A block fails on a non-2xx status, an error or
 * failure envelope, an OAuth error, or a line that is not one JSON document where one starts.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
/** The README's one definition of the server's address, which the test points at its own server. */
const BASE_LINE = /^BASE=http:\/\/127\.0\.0\.1:8080(?=\s|$)/m;

/** The README's way to catch the code of step 3 with a loopback redirect (RFC 8252). */
const LOOPBACK = /^CODE=\$\(node -e '.*\.listen\(9000, "127\.0\.0\.1"\)'\)$/;

/** Commands the test stands in for: it installs nothing, does not run itself, and starts the server itself. */
const STAND_INS: [RegExp, string][] = [
  [/^npm ci && npm start$/, 'the server: started by the test'],
  [/^createdb \S+(\s+#.*)?$/, 'the PostgreSQL database: the test makes its own'],
  [/^DATABASE_URL=\S+ npm start$/, 'the server on PostgreSQL: started by the test for that dialect'],
  [/^npm ci && npm test$/, 'the test suite: this is it'],
  [/^(DATABASE_URL=\S+ )?npm run bench(\s+#.*)?$/, 'the benchmark: minutes of load'],
  [LOOPBACK, 'the loopback listener: the test signs in and sets CODE itself (its own test runs it)'],
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

const refused = (v: unknown) =>
  !!v &&
  typeof v === 'object' &&
  ((v as { result?: unknown }).result === 'error' ||
    (v as { result?: unknown }).result === 'failure' ||
    typeof (v as { error?: unknown }).error === 'string');
/** An error envelope or an OAuth error in text that is not one JSON document. */
const REFUSAL_TEXT = /"result"\s*:\s*"(error|failure)"|"error"\s*:\s*"/;

/**
 * What is wrong in a block's output (its stdout, or the answers its curls received), line by line:
 * a line that starts as JSON must be one JSON document (two answers on one line, or a cut one,
 * are reported, not skipped), and no answer may be an error or failure envelope or an OAuth error.
 */
export function problems(output: string): string[] {
  const found: string[] = [];
  for (const line of output.split('\n')) {
    const text = line.trim();
    if (text.startsWith('{') || text.startsWith('[')) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        found.push(`not one JSON document: ${text.slice(0, 300)}`);
        continue;
      }
      if (refused(value)) found.push(`refused: ${text.slice(0, 300)}`);
    } else if (REFUSAL_TEXT.test(text)) found.push(`refused: ${text.slice(0, 300)}`);
  }
  return found;
}

/** Each HTTP status curl received (the last of each answer's header block) that is not 2xx. */
export function badStatuses(statuses: string): string[] {
  return statuses
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^HTTP\/[\d.]+ 2\d\d\b/.test(l));
}

/**
 * In front of curl in every block: each answer's body goes to stdout as usual and to
 * $README_ANSWERS, its status to $README_STATUSES, and a newline follows it in both.
 */
const CURL_RECORDER = `curl() {
  local headers rc
  headers=$(mktemp)
  command curl -D "$headers" "$@" | tee -a "$README_ANSWERS"
  rc=\${PIPESTATUS[0]}
  echo
  echo >> "$README_ANSWERS"
  { grep -a '^HTTP/' "$headers" | tail -n 1 || echo "no answer (curl exited $rc)"; } >> "$README_STATUSES"
  rm -f "$headers"
  return "$rc"
}`;

interface BlockRun {
  status: number | null;
  stdout: string;
  stderr: string;
  answers: string;
  statuses: string;
}

/** One block with bash, the shell state of the blocks before it, and curl recorded; its state is kept for the next. */
function runBlock(code: string, env: NodeJS.ProcessEnv): BlockRun {
  fs.writeFileSync(env.README_ANSWERS!, '');
  fs.writeFileSync(env.README_STATUSES!, '');
  const script = [
    'set -euo pipefail',
    '[ -f "$README_STATE" ] && source "$README_STATE"',
    CURL_RECORDER,
    code,
    // Hand the shell variables and functions the block set to the next block.
    `{ declare -p | grep -E '^declare -[-aAix]* [A-Z][A-Z0-9_]*=' | grep -Ev '^declare -[-aAix]* (BASH[A-Z_]*|PIPESTATUS|GROUPS|RANDOM|SRANDOM|SECONDS|LINENO|EPOCHSECONDS|EPOCHREALTIME|HISTCMD|PPID|UID|EUID|SHELLOPTS|BASHOPTS|COLUMNS|LINES|README_[A-Z]+)=' || true; declare -f; } > "$README_STATE.next"`,
    'mv "$README_STATE.next" "$README_STATE"',
  ].join('\n');
  const r = spawnSync('bash', ['-c', script], { cwd: ROOT, env, encoding: 'utf8', timeout: 300_000 });
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    answers: fs.readFileSync(env.README_ANSWERS!, 'utf8'),
    statuses: fs.readFileSync(env.README_STATUSES!, 'utf8'),
  };
}

/** Everything wrong with a block's run: its exit status, what it printed, and every answer curl received. */
function failuresOf(r: BlockRun): string[] {
  return [
    ...(r.status === 0 ? [] : [`exited ${r.status}`]),
    ...problems(r.stdout).map((p) => `stdout: ${p}`),
    ...problems(r.answers).map((p) => `an answer: ${p}`),
    ...badStatuses(r.statuses).map((s) => `status: ${s}`),
  ];
}

describe("the README runner's checks", () => {
  const clean = [
    '{"account":{"id":1},"user":{"id":1,"login":"ada"}}',
    'http://127.0.0.1:8080/oauth2/code?response_type=code&client_id=abc&state=xyz',
    '{"result":"success","users":[{"id":1,"lastError":"none"}],"metadata":{}}',
    '{"active":false}',
    '{}',
    '',
  ].join('\n');
  it('pass what a good block prints', () => {
    assert.deepEqual(problems(clean), []);
    assert.deepEqual(badStatuses('HTTP/1.1 200 OK\nHTTP/2 201\n'), []);
  });
  it('fail an error envelope, a failure envelope and an OAuth error', () => {
    for (const bad of [
      '{"result":"error","error":{"type":"client","code":1010,"message":"unauthorized"}}',
      '{"result":"failure","failures":[],"metadata":{"receivedItemsCount":1,"validItems":[],"invalidItems":[0]}}',
      '{"error":"invalid_grant","error_description":"the code was used"}',
      '{"error":"invalid_client"}',
    ]) {
      assert.equal(problems(`${clean}\n${bad}\n`).length, 1, bad);
    }
  });
  it('fail two answers on one line, a cut answer, and an error after text on a line', () => {
    assert.equal(problems('{"active":true}{"error":"invalid_client"}').length, 1);
    assert.equal(problems('{"users":[]}{"users":[]}').length, 1, 'two good answers on one line are not read as fine');
    assert.equal(problems('{"users":[{"id":1}').length, 1);
    assert.equal(problems('done: {"error":"invalid_client"}').length, 1);
  });
  it('fail a status other than 2xx, and a request that got no answer', () => {
    assert.deepEqual(badStatuses('HTTP/1.1 200 OK\nHTTP/1.1 401 Unauthorized\nno answer (curl exited 7)\n'), [
      'HTTP/1.1 401 Unauthorized',
      'no answer (curl exited 7)',
    ]);
  });
});

it('the README has sh blocks, and each is either run or stood in for', () => {
  const blocks = shBlocks(README);
  assert.ok(blocks.length >= 8, `only ${blocks.length} sh blocks found`);
  assert.ok(
    blocks.some((b) => b.code.includes('/oauth2/code?')),
    'the browser step prints its address',
  );
});

/** The README's words that a program can check against the project (issue 50, point 7). */
describe('the README says what is true', () => {
  const blocks = shBlocks(README);
  it('the layout lists each folder once, and every one exists', () => {
    const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(README)?.[1];
    assert.ok(layout, 'a Layout section with a code block');
    const paths = layout.split('\n').flatMap((l) => /^(\S+)\s/.exec(l)?.[1] ?? []);
    assert.ok(paths.length >= 8, paths.join(' '));
    assert.deepEqual(
      paths.filter((p, i) => paths.indexOf(p) !== i),
      [],
      'listed twice',
    );
    assert.deepEqual(
      paths.filter((p) => !fs.existsSync(path.join(ROOT, p))),
      [],
      'listed but missing',
    );
    const top = fs.readdirSync(path.join(ROOT, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory());
    assert.deepEqual(
      top.map((e) => `src/${e.name}/`).filter((p) => !paths.includes(p)),
      [],
      'folders of src/ the layout leaves out',
    );
  });
  it("step 1's list of commands names every command of the CLI", () => {
    const sentence = /lists every command \(([^)]*)\)/.exec(README)?.[1] ?? '';
    const words = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]))];
    assert.deepEqual(
      words.filter((w) => !sentence.includes(`\`${w}\``)),
      [],
      `the README's command list: ${sentence}`,
    );
  });
  it('no date in a command is outside the calendar feed (365 days either way)', () => {
    const far = blocks.flatMap((b) =>
      [...b.code.matchAll(/\b(\d{4}-\d{2}-\d{2})T/g)]
        .map((m) => m[1])
        .filter((d) => Math.abs(Date.parse(d) - Date.now()) > 365 * 864e5),
    );
    assert.deepEqual(far, [], 'a visit there would never show in the calendar feed');
  });
  it('every webhook the README makes, it deletes (an unreachable one would be retried for a day)', () => {
    const text = blocks.map((b) => b.code).join('\n');
    const made = (text.match(/-X POST "\$BASE\/webhooks"/g) ?? []).length;
    assert.ok(made >= 1);
    assert.equal((text.match(/-X DELETE "\$BASE\/webhooks\/\$[A-Z_]+"/g) ?? []).length, made);
  });
  it('says what a source build of better-sqlite3 needs', () => {
    const run = /## Run it([\s\S]*?)## /.exec(README)?.[1] ?? '';
    for (const tool of ['python3', 'make', 'g++']) assert.ok(run.includes(tool), tool);
  });
  it('the SDK README says events.follow streams, as it does', () => {
    const sdk = fs.readFileSync(path.join(ROOT, 'packages/client/README.md'), 'utf8');
    const events = fs.readFileSync(path.join(ROOT, 'packages/client/src/client.ts'), 'utf8');
    assert.match(events, /streamEvents/);
    assert.match(sdk, /`events\.follow` \(it streams/);
  });
  it('the loopback listener of step 3 catches the code of a redirect and sets CODE', async () => {
    const line = blocks.flatMap((b) => commands(b.code)).find((c) => LOOPBACK.test(c));
    assert.ok(line, 'step 3 shows the loopback way');
    const sh = spawn('bash', ['-c', `${line}\necho "CODE=$CODE"`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    sh.stdout.on('data', (d) => (out += d));
    const exited = new Promise((resolve) => sh.once('exit', resolve));
    try {
      // The browser's redirect, once the listener is up.
      let answer: Response | undefined;
      for (const deadline = Date.now() + 60_000; !answer && Date.now() < deadline;) {
        answer = await fetch('http://127.0.0.1:9000/callback?code=abc123&state=xyz').catch(async () => {
          await new Promise((r) => setTimeout(r, 100));
          return undefined;
        });
      }
      assert.ok(answer, 'the listener answered');
      assert.match(await answer.text(), /back to the shell/);
      await exited;
      assert.equal(out.trim(), 'CODE=abc123');
    } finally {
      sh.kill();
    }
  });
});

it('the README names the server address once, as BASE in the first block that runs, and uses $BASE after', () => {
  const run = shBlocks(README).filter((b) => !standIn(b.code));
  assert.match(run[0].code, BASE_LINE);
  const named = run.flatMap((b) =>
    commands(b.code)
      .filter((c) => /127\.0\.0\.1:8080|localhost:8080/.test(c) && !BASE_LINE.test(c))
      .map((c) => `line ${b.line}: ${c}`),
  );
  assert.deepEqual(named, [], 'commands that name the address instead of $BASE');
  assert.equal(run.filter((b) => BASE_LINE.test(b.code)).length, 1);
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
        README_ANSWERS: path.join(dataDir, 'answers.txt'),
        README_STATUSES: path.join(dataDir, 'statuses.txt'),
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
        // Readiness is the server's own "listening on" line, and an exit fails at once; the cap only
        // stops a hang (a loaded machine once needed more than the 30 s this used to allow).
        const timer = setTimeout(() => reject(new Error(`the server did not start: ${output}`)), 300_000);
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
      let last = '';
      for (const block of shBlocks(README)) {
        const skip = standIn(block.code);
        if (skip) {
          if (/started by the test/.test(skip)) await startServer();
          t.diagnostic(`README line ${block.line}: stood in for (${skip})`);
          continue;
        }
        await startServer();
        const r = runBlock(block.code.replace(BASE_LINE, `BASE=${base}`), env);
        const what = `README line ${block.line}:\n${block.code}\n--- stdout:\n${r.stdout}\n--- stderr:\n${r.stderr}`;
        assert.deepEqual(failuresOf(r), [], what);
        ran++;
        last = r.stdout;
        // The browser step: the block printed the authorization address; sign in, allow, and
        // hand the code to the shell as the README says (CODE=…).
        const address = /https?:\/\/\S+\/oauth2\/code\?\S+/.exec(r.stdout)?.[0];
        if (address) {
          const code = await authorize(address, base, { login: who[1], password: who[2] });
          fs.appendFileSync(env.README_STATE!, `CODE=${code}\n`);
        }
      }
      assert.ok(ran >= 6, `only ${ran} blocks ran`);
      // The page ends signed out: its last command finds the access token revoked with the grant.
      assert.equal(last.trim().split('\n').at(-1), '{"active":false}', last);
      t.diagnostic(`${ran} README blocks ran against ${base}`);
    });

    it('a refused command fails its block, printed or kept in a variable', async () => {
      await startServer();
      // The README's old step 7: placeholders where the shell variables belong.
      const placeholders = runBlock(
        `curl -s -X POST "${base}/oauth2/introspect" -u CLIENT_ID:CLIENT_SECRET -d token=ACCESS_TOKEN\n` +
          `curl -s -X POST "${base}/oauth2/revoke" -u CLIENT_ID:CLIENT_SECRET -d token=REFRESH_TOKEN`,
        env,
      );
      assert.equal(placeholders.status, 0, placeholders.stderr);
      const found = failuresOf(placeholders);
      assert.ok(
        found.some((f) => f.startsWith('stdout: refused') && f.includes('invalid_client')),
        found.join('\n'),
      );
      assert.equal(found.filter((f) => f.startsWith('status: HTTP/1.1 401')).length, 2, found.join('\n'));
      // An answer never printed: the API's 401 envelope kept in a variable.
      const kept = runBlock(`USERS=$(curl -s "${base}/users" -H "X-Version: 1.0")`, env);
      assert.equal(kept.stdout, '');
      assert.deepEqual(
        failuresOf(kept).map((f) => f.split(':')[0]),
        ['an answer', 'status'],
      );
    });
  });
}
