import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sql } from 'kysely';
import { registry } from '../src/collections/index.js';
import { lowerText } from '../src/db/text.js';
import { SEED, runs } from './arbitraries.js';
import { DIALECTS, suiteWithTenants, call, skipUnless } from './helpers.js';

/**
 * `~` through the trigram indexes of migration 140 (issue 51) answers exactly as the scan of
 * PRODUCT §3 does: random titles and client names (accents, case variants, Greek final sigma, `İ`,
 * `ß`/`ẞ`, CJK, emoji, `%`, `_`, backslash, quotes), created, renamed and deleted, then random
 * terms, short (below three characters: no index) and long, substrings in other cases or not. Each
 * answer is compared with two scans that no index serves: the database's own (`instr`/`strpos` of
 * the lowered text, the same lowering) and the rule itself in JavaScript (lowerText, includes).
 */

/** Characters whose lowering both databases and JavaScript agree on (src/db/text.ts). */
const ALPHABET = [
  ...'abcxyzABCXYZ pump PUMP Jones',
  ...'éÉèàÀüÜöÖßẞçÇñÑ',
  ...'ΟΔΟΣοδοσς',
  ...'İıiI',
  ...'ДомдОМ',
  ...'水道管',
  '😀',
  '🔧',
  ...'%_\\"\'.-',
  'e\u0301', // e and a combining acute accent: not é (no normalization in §3)
];
const text = (min: number, max: number) =>
  fc.array(fc.constantFrom(...ALPHABET), { minLength: min, maxLength: max }).map((cs) => cs.join(''));
/** Some letters of a text in other cases: what `~` must find again. */
const recased = (s: string, flips: boolean[]) =>
  [...s].map((ch, i) => (flips[i % flips.length] ? ch.toUpperCase() : ch.toLowerCase())).join('');

const quoted = (term: string) => `"${term.replace(/["\\]/g, '\\$&')}"`;

for (const dialect of DIALECTS) {
  describe(`where ~ through trigram indexes answers as the scan (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect, { env: { RATE_LIMIT_API: '0' } });
    const ids = (res: { body: Record<string, { id: number }[]> }, key: string) =>
      res.body[key].map((x) => x.id).sort((x, y) => x - y);

    /** The account's jobs as stored, with their client's name: the model's input. */
    async function stored(accountId: number) {
      const rows = await sql<{ id: number; title: string; name: string | null }>`
        select jobs.id, jobs.title, clients.name from jobs left join clients on clients.id = jobs.client_id
        where jobs.account_id = ${accountId} order by jobs.id`.execute(t.database.db);
      return rows.rows.map((r) => ({ ...r, id: Number(r.id) }));
    }
    /** The database's scan: the lowered text holding the lowered term, by position (no index). */
    async function scanned(accountId: number, column: 'jobs.title' | 'clients.name', term: string) {
      const d = t.database.dialect;
      const held =
        d.name === 'postgres'
          ? sql`strpos(${d.lower(sql.ref(column))}, ${lowerText(term)}) > 0`
          : sql`instr(${d.lower(sql.ref(column))}, ${lowerText(term)}) > 0`;
      const rows = await sql<{ id: number }>`
        select jobs.id from jobs left join clients on clients.id = jobs.client_id and clients.account_id = jobs.account_id
        where jobs.account_id = ${accountId} and ${held} order by jobs.id`.execute(t.database.db);
      return rows.rows.map((r) => Number(r.id));
    }

    it('answers every term as the scans do, through creates, renames and deletes', async () => {
      // Two clients per account to start with; account B's mirror A's texts, never in A's answers.
      let clients: number[] = [];
      const otherAccount = await call(t.app, b.token, 'POST', '/clients', { clients: [{ name: 'pump Jones' }] });
      await call(t.app, b.token, 'POST', '/jobs', {
        jobs: [{ title: 'pump pump Jones', client: { id: otherAccount.body.clients[0].id } }],
      });
      let checked = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            newClients: fc.array(text(1, 12), { minLength: 0, maxLength: 2 }),
            newJobs: fc.array(fc.record({ title: text(1, 24), client: fc.nat() }), { minLength: 1, maxLength: 4 }),
            rename: fc.option(fc.record({ at: fc.nat(), title: text(1, 24) })),
            renameClient: fc.option(fc.record({ at: fc.nat(), name: text(1, 12) })),
            drop: fc.option(fc.nat()),
            terms: fc.array(
              fc.oneof(
                text(1, 6),
                fc.record({
                  at: fc.nat(),
                  from: fc.nat(),
                  len: fc.integer({ min: 1, max: 8 }),
                  flips: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
                }),
              ),
              { minLength: 3, maxLength: 6 },
            ),
          }),
          async (run) => {
            if (run.newClients.length) {
              const made = await call(t.app, a.token, 'POST', '/clients', {
                clients: run.newClients.map((name) => ({ name })),
              });
              assert.equal(made.status, 200, made.raw);
              clients = [...clients, ...made.body.clients.map((c: { id: number }) => c.id)];
            }
            const made = await call(t.app, a.token, 'POST', '/jobs', {
              jobs: run.newJobs.map((j) => ({
                title: j.title,
                ...(clients.length && j.client % 3 ? { client: { id: clients[j.client % clients.length] } } : {}),
              })),
            });
            assert.equal(made.status, 200, made.raw);
            let jobs = await stored(a.accountId);
            if (run.rename) {
              const job = jobs[run.rename.at % jobs.length];
              const res = await call(t.app, a.token, 'PATCH', '/jobs', {
                jobs: [{ id: job.id, title: run.rename.title }],
              });
              assert.equal(res.status, 200, res.raw);
            }
            if (run.renameClient && clients.length) {
              const id = clients[run.renameClient.at % clients.length];
              const res = await call(t.app, a.token, 'PATCH', '/clients', {
                clients: [{ id, name: run.renameClient.name }],
              });
              assert.equal(res.status, 200, res.raw);
            }
            if (run.drop !== null && jobs.length > 3) {
              const res = await call(t.app, a.token, 'DELETE', `/jobs/${jobs[run.drop % jobs.length].id}`);
              assert.ok(res.status === 200 || res.status === 204, res.raw);
            }
            jobs = await stored(a.accountId);
            for (const spec of run.terms) {
              // A term drawn at random, or a piece of a stored title in other cases.
              let term: string;
              if (typeof spec === 'string') term = spec;
              else {
                const source = [...jobs[spec.at % jobs.length].title];
                const from = spec.from % source.length;
                term = recased(source.slice(from, from + spec.len).join(''), spec.flips);
              }
              for (const [member, column, of] of [
                ['title', 'jobs.title', (j: (typeof jobs)[number]) => j.title],
                ['client.name', 'clients.name', (j: (typeof jobs)[number]) => j.name],
              ] as const) {
                const res = await call(
                  t.app,
                  a.token,
                  'GET',
                  `/jobs?recordsPerPage=1000&where=${encodeURIComponent(`${member} ~ ${quoted(term)}`)}`,
                );
                assert.equal(res.status, 200, res.raw);
                const answer = ids(res, 'jobs');
                const model = jobs
                  .filter((j) => of(j) !== null && lowerText(of(j)!).includes(lowerText(term)))
                  .map((j) => j.id);
                const why = `${member} ~ ${JSON.stringify(term)} on ${JSON.stringify(jobs.map(of))}`;
                assert.deepEqual(answer, model, `model: ${why}`);
                assert.deepEqual(answer, await scanned(a.accountId, column, term), `scan: ${why}`);
                // One item a page, newest first: a common term's page walks the items (read.ts),
                // a rare one's goes through the index; both count through the index.
                const k = 1 + ((spec instanceof Object ? spec.at : term.length) % Math.max(1, model.length));
                const page = await call(
                  t.app,
                  a.token,
                  'GET',
                  `/jobs?recordsPerPage=1&page=${k}&sort=-id&where=${encodeURIComponent(`${member} ~ ${quoted(term)}`)}`,
                );
                assert.equal(page.status, 200, page.raw);
                assert.deepEqual(
                  ids(page, 'jobs'),
                  model.length ? [[...model].reverse()[k - 1]] : [],
                  `page ${k}: ${why}`,
                );
                assert.equal(page.body.metadata.recordsCount, model.length, `count: ${why}`);
                checked++;
              }
            }
          },
        ),
        { seed: SEED, numRuns: runs(40) },
      );
      console.log(`# seed ${SEED}; ${checked} terms compared (${dialect})`);
      assert.ok(checked > 100);
    });

    it('every member declared contains has its trigram index in the migrated schema', async () => {
      const declared = registry.list.flatMap((col) =>
        [...col.columns.values()].flatMap((f) => (f.contains ? [f.contains] : [])),
      );
      assert.ok(declared.includes('jobs_title_contains') && declared.includes('clients_name_contains'));
      const names =
        t.database.dialect.name === 'postgres'
          ? sql<{
              name: string;
            }>`select indexname as name from pg_indexes where indexdef like '%gin_trgm_ops%' and indexname like '%\\_contains' escape '\\'`
          : sql<{
              name: string;
            }>`select name from sqlite_master where type = 'table' and sql like '%trigram%' and name like '%\\_contains' escape '\\'`;
      const present = (await names.execute(t.database.db)).rows.map((r) => r.name);
      assert.deepEqual([...declared].sort(), [...present].sort());
    });

    it('reads the index: a term of three characters or more goes through it, a shorter one scans', async () => {
      const made = await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Zebra QUAGGA' }] });
      const id: number = made.body.jobs[0].id;
      const found = async (term: string) =>
        ids(await call(t.app, a.token, 'GET', `/jobs?where=${encodeURIComponent(`title ~ ${quoted(term)}`)}`), 'jobs');
      assert.deepEqual(await found('quagga'), [id]);
      const d = t.database.dialect;
      if (d.name === 'sqlite') {
        // The index row taken away behind the server's back: what goes through the index no longer
        // finds the job; a two-letter term, which scans, still does.
        await sql`delete from jobs_title_contains where rowid = ${id}`.execute(t.database.db);
        assert.deepEqual(await found('quagga'), []);
        assert.deepEqual(await found('ZEB'), []);
        assert.deepEqual(await found('qu'), [id]);
        await sql`insert into jobs_title_contains (rowid, t) values (${id}, 'zebra quagga')`.execute(t.database.db);
        assert.deepEqual(await found('ZEB'), [id]);
      } else {
        // The GIN index is of the very expression `~` compares: the planner can answer with it.
        const plan = await t.database.db.transaction().execute(async (tx) => {
          await sql`set local enable_seqscan = off`.execute(tx);
          const rows = await sql<{ 'QUERY PLAN': string }>`explain select jobs.id from jobs
            where ${d.lower(sql.ref('jobs.title'))} like ${'%quagga%'} escape '\'`.execute(tx);
          return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
        });
        assert.match(plan, /jobs_title_contains/, plan);
      }
    });
  });
}
