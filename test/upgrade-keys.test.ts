import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { operator } from '../src/accounts/service.js';
import { hashPassword, hashToken, randomToken } from '../src/auth/secrets.js';
import { ALL_PERMISSIONS, registry } from '../src/collections/index.js';
import { present } from '../src/collections/machinery/present.js';
import { connect, type Database } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { currentSession } from '../src/oauth/pages/session.js';
import { signIn } from '../src/oauth/pages/sign-in.js';
import { createServices } from '../src/services.js';
import {
  DIALECTS,
  call,
  checkResponsesAgainstOpenApi,
  createTestDb,
  errorsOf,
  newUser,
  skipUnless,
  tokenRequest,
  type TestDb,
} from './helpers.js';

/**
 * Migration 019 rebuilds every key (src/db/migrations/019_account_keys.ts) and keeps the data: a
 * database as main left it (migrated up to 017, written by SQL as that code wrote it: two accounts
 * with users, logins, workgroups, statuses, clients, jobs, visits, notes, a file with its bytes,
 * a webhook with deliveries and events, tokens, a code, a session, a kept idempotent answer) is
 * migrated, and a new process reads everything back through the API with its links; the secrets
 * issued before (no account in them) still work, and the new keys hold on the old rows.
 */
const CB = 'http://127.0.0.1/callback';

/** Every table's columns, keys, indexes and triggers, as the catalogue says them: one line each. */
async function schemaOf(database: Database): Promise<string[]> {
  const db = database.db;
  if (database.dialect.name === 'postgres') {
    const { rows } = await sql<{ line: string }>`
      select format('%s.%s %s%s%s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
        case when a.attnotnull then ' not null' else '' end,
        coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')) as line
      from pg_class c join pg_attribute a on a.attrelid = c.oid left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
      where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
      union all select format('%s %s: %s', conrelid::regclass, conname, pg_get_constraintdef(oid)) from pg_constraint
        where connamespace = current_schema()::regnamespace
      union all select indexdef from pg_indexes where schemaname = current_schema()
      union all select pg_get_triggerdef(oid) from pg_trigger where not tgisinternal
      union all select format('function %s: %s', proname, md5(prosrc)) from pg_proc where pronamespace = current_schema()::regnamespace`.execute(
      db,
    );
    return rows.map((r) => r.line.replace(/_seq'::regclass/g, "_seq'")).sort();
  }
  const { rows } = await sql<{ line: string }>`
    select m.name || '.' || c.name || ' ' || c.type || case when c."notnull" then ' not null' else '' end
      || coalesce(' default ' || c.dflt_value, '') || case when c.pk then ' pk' || c.pk else '' end as line
    from sqlite_master m join pragma_table_info(m.name) c where m.type = 'table'
    union all select m.name || ' key ' || k.id || ': (' || group_concat(k."from") || ') -> ' || k."table"
      || ' (' || group_concat(k."to") || ') on delete ' || k.on_delete
    from sqlite_master m join pragma_foreign_key_list(m.name) k where m.type = 'table' group by m.name, k.id
    union all select 'index ' || i.name || case when i."unique" then ' unique' else '' end || ' on ' || m.name || ' ('
      || (select group_concat(name) from pragma_index_info(i.name)) || ')'
    from sqlite_master m join pragma_index_list(m.name) i where m.type = 'table'
    union all select 'trigger ' || name || ' on ' || tbl_name || ': ' || replace(replace(sql, char(10), ' '), '  ', ' ')
    from sqlite_master where type = 'trigger'`.execute(db);
  return rows.map((r) => r.line.replace(/\s+/g, ' ')).sort();
}
const PASSWORD = 'correct horse battery';

for (const dialect of DIALECTS) {
  describe(`the keys migration keeps the data (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    let app: FastifyInstance;
    const now = Date.now();
    const times = { created: now - 60_000, modified: now - 60_000 };
    const old = {} as Record<string, number>;
    const secrets = { access: randomToken(), refresh: randomToken(), code: randomToken(), session: randomToken() };
    const bytes = crypto.randomBytes(70_000);
    let client: { clientId: string; clientSecret: string };
    let kept: { body: string; key: string; request: object };

    before(async () => {
      t = await createTestDb(dialect, { upTo: '017_webhook_cursors' });
      const db = t.database.db;
      const id = async (q: { executeTakeFirstOrThrow(): Promise<{ id: number }> }) =>
        (await q.executeTakeFirstOrThrow()).id;
      const passwordHash = await hashPassword(PASSWORD);
      // The client as the old schema holds it (today's registerClient writes columns added later).
      client = { clientId: `fsm_mig_${dialect}`, clientSecret: randomToken() };
      await db
        .insertInto('oauth_clients')
        .values({
          client_id: client.clientId,
          secret_hash: hashToken(client.clientSecret),
          name: 'Old client',
          redirect_uris: JSON.stringify(['http://127.0.0.1/callback']),
          permissions: JSON.stringify(ALL_PERMISSIONS),
          allow_permission_choice: 0,
          certified: 1,
          revoked: 0,
          created: now,
        } as never)
        .execute();
      for (const side of ['a', 'b']) {
        const account = await id(
          db
            .insertInto('accounts')
            .values({ company_name: `Old ${side}`, ...times })
            .returning('id'),
        );
        old[`${side}.account`] = account;
        for (const kind of ['administrator', 'employee', 'contractor'] as const)
          old[`${side}.${kind}Role`] = await id(
            db.insertInto('roles').values({ account_id: account, name: kind, kind }).returning('id'),
          );
        const user = (name: string, role: string, login: string | null, extra = {}) =>
          id(
            db
              .insertInto('users')
              .values({
                account_id: account,
                role_id: old[`${side}.${role}Role`],
                first_name: name,
                last_name: side.toUpperCase(),
                mobile: '+447700900001',
                login,
                password_hash: login && passwordHash,
                ...times,
                ...extra,
              })
              .returning('id'),
          );
        old[`${side}.admin`] = await user('Ada', 'administrator', `mig-admin-${side}-${dialect}`);
        old[`${side}.employee`] = await user('Eve', 'employee', `mig-eve-${side}-${dialect}`);
        old[`${side}.contractor`] = await user('Con', 'contractor', null);
        old[`${side}.gone`] = await user('Gus', 'employee', `mig-gus-${side}-${dialect}`, { deleted: 1, active: 0 });
        old[`${side}.crew`] = await id(
          db
            .insertInto('workgroups')
            .values({ account_id: account, name: 'Crew', ...times })
            .returning('id'),
        );
        for (const u of ['admin', 'employee'])
          await db
            .insertInto('workgroup_members')
            .values({ account_id: account, workgroup_id: old[`${side}.crew`], user_id: old[`${side}.${u}`] })
            .execute();
        old[`${side}.new`] = await id(
          db
            .insertInto('statuses')
            .values({ account_id: account, label: 'New', status_group: 'new', is_default: 1, ...times })
            .returning('id'),
        );
        old[`${side}.done`] = await id(
          db
            .insertInto('statuses')
            .values({ account_id: account, label: 'Done', status_group: 'completed', ...times })
            .returning('id'),
        );
        old[`${side}.client`] = await id(
          db
            .insertInto('clients')
            .values({ account_id: account, name: `Client ${side}`, address_city: 'Leeds', ...times })
            .returning('id'),
        );
        const job = (reference: string, clientId: number | null) =>
          id(
            db
              .insertInto('jobs')
              .values({
                account_id: account,
                reference,
                title: `Boiler ${reference}`,
                client_id: clientId,
                status_id: old[`${side}.new`],
                created_by: old[`${side}.admin`],
                ...times,
              })
              .returning('id'),
          );
        old[`${side}.job`] = await job('J-000001', old[`${side}.client`]);
        old[`${side}.loose`] = await job('J-000002', null);
        // Deleted before the migration: its id is never given again.
        old[`${side}.deleted`] = await job('J-000003', null);
        await db.deleteFrom('jobs').where('id', '=', old[`${side}.deleted`]).execute();
        for (const u of ['employee', 'contractor'])
          old[`${side}.visit.${u}`] = await id(
            db
              .insertInto('visits')
              .values({
                account_id: account,
                job_id: old[`${side}.job`],
                user_id: old[`${side}.${u}`],
                label: `Visit by ${u}`,
                start_time: now,
                end_time: now + 3_600_000,
                ...times,
              })
              .returning('id'),
          );
        old[`${side}.note`] = await id(
          db
            .insertInto('notes')
            .values({
              account_id: account,
              job_id: old[`${side}.job`],
              author_id: old[`${side}.employee`],
              body: 'Pump replaced',
              ...times,
            })
            .returning('id'),
        );
        const staged = await t.services.blobs.stage(Readable.from([bytes]), 1e9);
        await staged.commit();
        old[`${side}.file`] = await id(
          db
            .insertInto('files')
            .values({
              account_id: account,
              name: 'photo.bin',
              mime_type: 'application/octet-stream',
              size: staged.size,
              sha256: staged.sha256,
              job_id: old[`${side}.job`],
              user_id: old[`${side}.employee`],
              ...times,
            })
            .returning('id'),
        );
        const event = (collection: string, itemId: number) =>
          id(
            db
              .insertInto('events')
              .values({
                account_id: account,
                type: `${collection}.created`,
                collection,
                item_id: itemId,
                data: JSON.stringify({ id: itemId }),
                actor_id: old[`${side}.admin`],
                client_id: client.clientId,
                occurred: times.created,
              })
              .returning('id'),
          );
        old[`${side}.event.job`] = await event('jobs', old[`${side}.job`]);
        old[`${side}.event.client`] = await event('clients', old[`${side}.client`]);
        old[`${side}.webhook`] = await id(
          db
            .insertInto('webhooks')
            .values({
              account_id: account,
              url: 'https://hooks.example.com/fsm',
              events: '["*"]',
              secret: `whsec_${crypto.randomBytes(32).toString('base64')}`,
              events_after: 0,
              ...times,
            })
            .returning('id'),
        );
        await db
          .insertInto('webhook_cursors')
          .values({
            account_id: account,
            webhook_id: old[`${side}.webhook`],
            event_id: old[`${side}.event.client`],
            live: 1,
          })
          .execute();
        for (const [name, state] of [
          ['job', 'succeeded'],
          ['client', 'pending'],
        ] as const)
          old[`${side}.delivery.${name}`] = await id(
            db
              .insertInto('deliveries')
              .values({
                account_id: account,
                webhook_id: old[`${side}.webhook`],
                event_id: old[`${side}.event.${name}`],
                type: `${name === 'job' ? 'jobs' : 'clients'}.created`,
                msg_id: `msg_${crypto.randomBytes(16).toString('base64url')}`,
                state,
                attempts: state === 'succeeded' ? 1 : 0,
                next_attempt_at: now + 86_400_000,
                ...times,
              })
              .returning('id'),
          );
      }
      // Account a's secrets, issued the old way: 256 random bits, no account in them.
      const a = old['a.account'];
      const admin = old['a.admin'];
      const grant = {
        client_id: client.clientId,
        user_id: admin,
        account_id: a,
        permissions: JSON.stringify(ALL_PERMISSIONS),
        created: now,
      };
      await db
        .insertInto('oauth_tokens')
        .values([
          { ...grant, token_hash: hashToken(secrets.access), kind: 'access', expires_at: now + 3_600_000 },
          { ...grant, token_hash: hashToken(secrets.refresh), kind: 'refresh', expires_at: now + 86_400_000 },
        ])
        .execute();
      await db
        .insertInto('oauth_codes')
        .values({ ...grant, code_hash: hashToken(secrets.code), redirect_uri: CB, expires_at: now + 3_600_000 })
        .execute();
      await db
        .insertInto('auth_sessions')
        .values({
          session_hash: hashToken(secrets.session),
          user_id: admin,
          account_id: a,
          csrf_token: randomToken(),
          expires_at: now + 3_600_000,
          created: now,
        })
        .execute();
      // An answer kept for an Idempotency-Key (POST /clients), as the old server kept it.
      const clients = registry.get('clients')!;
      const row = await db.selectFrom('clients').selectAll().where('id', '=', old['a.client']).execute();
      const [item] = await present(
        db,
        clients,
        { ...operator(a, now), publicUrl: '' },
        {
          fields: clients.defaultFields,
          expand: new Map(),
        },
        // Members added since (clients' emailOptOut, migration 130) as the migration gives the old
        // rows them: the answer conforms to the document the upgraded server serves.
        row.map((r) => ({ ...r, email_opt_out: (r as { email_opt_out?: number }).email_opt_out ?? 0 })),
      );
      const request = { clients: [{ name: 'Client a' }] };
      kept = {
        key: 'upgrade-key-1',
        request,
        body: JSON.stringify({
          result: 'success',
          clients: [item],
          metadata: { receivedItemsCount: 1, validItems: [0], invalidItems: [] },
        }),
      };
      const digest = crypto.createHash('sha256').update(JSON.stringify(request)).digest('hex');
      await db
        .insertInto('idempotency_keys')
        .values({
          account_id: a,
          client_id: client.clientId,
          user_id: admin,
          key: kept.key,
          fingerprint: crypto.createHash('sha256').update(`POST /clients\n${digest}`).digest('hex'),
          state: 'done',
          lease: '',
          status: 200,
          headers: '{}',
          body: kept.body,
          created: now,
        })
        .execute();

      await migrateToLatest(t.database);
      // A new process on the migrated storage: nothing it knows comes from before.
      await t.database.close();
      t.database = await connect({
        databaseUrl: t.config.databaseUrl,
        sqliteFile: path.join(t.dataDir, 'fsm.sqlite'),
        poolSize: 5,
      });
      t.services = createServices(t.config, t.database);
      app = await buildApp({ config: t.config, database: t.database, clock: () => now });
      await app.ready();
      await checkResponsesAgainstOpenApi(app);
    });
    after(async () => {
      await app?.close();
      await t?.close();
    });

    const get = async (url: string) => {
      const res = await call(app, secrets.access, 'GET', url);
      assert.equal(res.status, 200, `${url}: ${res.raw}`);
      return res.body;
    };

    test('the migrated schema is the one a new database gets', async () => {
      const fresh = await createTestDb(dialect);
      try {
        const [upgraded, made] = [await schemaOf(t.database), await schemaOf(fresh.database)];
        assert.ok(made.length > 100, 'the catalogue was read');
        assert.deepEqual(
          upgraded.filter((l) => !made.includes(l)),
          made.filter((l) => !upgraded.includes(l)),
        );
        assert.deepEqual(upgraded, made);
      } finally {
        await fresh.close();
      }
    });

    test('an access token issued before authenticates, and reads every item with its links', async () => {
      const users = (await get('/users?fields=*,[*]&sort=id')).users;
      assert.deepEqual(
        users.map((u: { id: number; login: string | null; deleted: boolean }) => [u.id, u.login, u.deleted]),
        [
          [old['a.admin'], `mig-admin-a-${dialect}`, false],
          [old['a.employee'], `mig-eve-a-${dialect}`, false],
          [old['a.contractor'], null, false],
          [old['a.gone'], `mig-gus-a-${dialect}`, true],
        ],
      );
      assert.deepEqual(users[1].workgroups, [{ id: old['a.crew'], name: 'Crew' }]);
      assert.deepEqual(users[1].role, { id: old['a.employeeRole'], name: 'employee' });
      const [crew] = (await get(`/workgroups/${old['a.crew']}?fields=*,[*]`)).workgroups;
      assert.deepEqual(
        crew.users.map((u: { id: number }) => u.id),
        [old['a.admin'], old['a.employee']],
      );
      const jobs = (await get('/jobs?fields=*,[*]&sort=id')).jobs;
      assert.deepEqual(
        jobs.map((j: { id: number; client: unknown; status: { id: number } }) => [j.id, j.client, j.status.id]),
        [
          [old['a.job'], { id: old['a.client'], name: 'Client a' }, old['a.new']],
          [old['a.loose'], null, old['a.new']],
        ],
      );
      const visits = (await get('/visits?sort=id')).visits;
      assert.deepEqual(
        visits.map((v: { id: number; job: { id: number }; user: { id: number } }) => [v.id, v.job.id, v.user.id]),
        [
          [old['a.visit.employee'], old['a.job'], old['a.employee']],
          [old['a.visit.contractor'], old['a.job'], old['a.contractor']],
        ],
      );
      const [note] = (await get('/notes')).notes;
      assert.deepEqual([note.id, note.job.id, note.author.id], [old['a.note'], old['a.job'], old['a.employee']]);
      const statuses = (await get('/statuses?sort=id')).statuses;
      assert.deepEqual(
        statuses.map((s: { id: number; isDefault: boolean }) => [s.id, s.isDefault]),
        [
          [old['a.new'], true],
          [old['a.done'], false],
        ],
      );
      // Counted by migration 018 from the rows already there.
      assert.equal((await get('/jobs')).metadata.recordsCount, 2);
      assert.equal((await get('/users')).metadata.recordsCount, 4);
    });

    test("a file's bytes download through its link", async () => {
      const [file] = (await get(`/files/${old['a.file']}`)).files;
      assert.deepEqual([file.job.id, file.user.id, file.size], [old['a.job'], old['a.employee'], bytes.length]);
      const url = new URL(file.downloadUrl);
      const res = await app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
      assert.equal(res.statusCode, 200);
      assert.ok(res.rawPayload.equals(bytes));
    });

    test('webhooks, their deliveries and the events stay linked', async () => {
      const [hook] = (await get(`/webhooks/${old['a.webhook']}`)).webhooks;
      assert.equal(hook.url, 'https://hooks.example.com/fsm');
      const deliveries = (await get('/deliveries?sort=id')).deliveries;
      assert.deepEqual(
        deliveries.map((d: { id: number; webhook: { id: number }; event: { id: number }; state: string }) => [
          d.id,
          d.webhook.id,
          d.event.id,
          d.state,
        ]),
        [
          [old['a.delivery.job'], old['a.webhook'], old['a.event.job'], 'succeeded'],
          [old['a.delivery.client'], old['a.webhook'], old['a.event.client'], 'pending'],
        ],
      );
      // Old rows as stored (their data is whatever the old code wrote): read without the default fields.
      const events = (await get('/events?sort=id&fields=type,item')).events;
      const ids = events.map((e: { id: number }) => e.id);
      assert.deepEqual(ids.slice(0, 2), [old['a.event.job'], old['a.event.client']]);
    });

    test('a refresh token, a code and a session issued before still work', async () => {
      const form = { client_id: client.clientId, client_secret: client.clientSecret };
      const refreshed = await tokenRequest(app, {
        ...form,
        grant_type: 'refresh_token',
        refresh_token: secrets.refresh,
      });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      // A token issued now names its account.
      assert.match(refreshed.body.access_token, new RegExp(`^${old['a.account']}\\.`));
      assert.equal((await call(app, refreshed.body.access_token, 'GET', '/jobs')).status, 200);
      const redeemed = await tokenRequest(app, {
        ...form,
        grant_type: 'authorization_code',
        code: secrets.code,
        redirect_uri: CB,
      });
      assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
      assert.equal((await call(app, redeemed.body.access_token, 'GET', '/users')).status, 200);
      assert.deepEqual(await currentSession(t.database.db, secrets.session, now), {
        userId: old['a.admin'],
        accountId: old['a.account'],
        csrf: (await t.database.db.selectFrom('auth_sessions').select('csrf_token').executeTakeFirstOrThrow())
          .csrf_token,
      });
      // Secrets of the account-free form cannot be forged into another account's.
      assert.equal((await call(app, `${old['b.account']}.${secrets.access}`, 'GET', '/jobs')).status, 401);
    });

    test('an answer kept before is replayed', async () => {
      const res = await call(app, secrets.access, 'POST', '/clients', kept.request, { 'idempotency-key': kept.key });
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.headers['idempotency-replayed'], 'true');
      assert.equal(res.raw, kept.body);
    });

    test('logins: sign-in finds the account; a login taken in another account is refused', async () => {
      const signed = await signIn(t.database.db, `mig-admin-b-${dialect}`, PASSWORD, now);
      assert.deepEqual(signed, { ok: true, userId: old['b.admin'], accountId: old['b.account'] });
      assert.deepEqual(await signIn(t.database.db, `mig-gus-a-${dialect}`, PASSWORD, now), {
        ok: false,
        reason: 'invalid',
      });
      const taken = await call(app, secrets.access, 'POST', '/users', {
        users: [
          newUser(old['a.account'], {
            login: `mig-eve-b-${dialect}`,
            newPassword: PASSWORD,
            newPasswordConfirm: PASSWORD,
          }),
        ],
      });
      assert.equal(taken.status, 422, taken.raw);
      assert.deepEqual(errorsOf(taken), ['1046:login']);
    });

    test('the keys hold on the old rows: no link into another account; SET NULL nulls the link alone', async () => {
      const db = t.database.db;
      await assert.rejects(
        db
          .updateTable('visits')
          .set({ user_id: old['b.employee'] })
          .where('id', '=', old['a.visit.employee'])
          .execute(),
        (e: { code?: string }) => e.code === '23503' || e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY',
      );
      const gone = await call(app, secrets.access, 'DELETE', `/users/${old['a.employee']}`);
      assert.equal(gone.status, 200, gone.raw);
      const [visit] = (await get(`/visits/${old['a.visit.employee']}`)).visits;
      assert.equal(visit.user, null);
      const [note] = (await get(`/notes/${old['a.note']}`)).notes;
      assert.equal(note.author, null);
      const row = await db
        .selectFrom('files')
        .select(['account_id', 'user_id', 'job_id'])
        .where('id', '=', old['a.file'])
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { account_id: old['a.account'], user_id: null, job_id: old['a.job'] });
      assert.deepEqual(
        await db.selectFrom('logins').select('login').where('user_id', '=', old['a.employee']).execute(),
        [],
      );
      // Ids go on from the highest ever given, past the job deleted before the migration.
      const made = await call(app, secrets.access, 'POST', '/jobs', { jobs: [{ title: 'After' }] });
      assert.equal(made.status, 200, made.raw);
      assert.ok(made.body.jobs[0].id > old['b.deleted'], `${made.body.jobs[0].id} > ${old['b.deleted']}`);
      // Account b is untouched by all of it.
      assert.equal(
        (
          await sql<{
            n: number;
          }>`select count(*) as n from visits where account_id = ${old['b.account']} and user_id is not null`.execute(
            db,
          )
        ).rows[0].n,
        2,
      );
    });
  });
}
