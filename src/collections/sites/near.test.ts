import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, call, suiteWithTenants, skipUnless } from '../../../test/helpers.js';

/** An independent great-circle distance (haversine via atan2, mean Earth radius 6371.0088 km). */
function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const toRad = (d: number) => (d / 180) * Math.PI;
  const dLat = toRad(lat2 - lat1);
  const dLng = toRad(lng2 - lng1);
  const s = Math.sin(dLat / 2) ** 2 + Math.cos(toRad(lat1)) * Math.cos(toRad(lat2)) * Math.sin(dLng / 2) ** 2;
  return 2 * 6371.0088 * Math.atan2(Math.sqrt(s), Math.sqrt(Math.max(0, 1 - s)));
}

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}
const round7 = (n: number) => Math.round(n * 1e7) / 1e7;

type Located = { id: number; name: string; lat: number; lng: number };

for (const dialect of DIALECTS) {
  describe(`near=lat,lng[,radiusKm] (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const get = (url: string, token = a.token) => call(t.app, token, 'GET', url);
    const makeClients = async (points: [string, number, number][], token = a.token): Promise<Located[]> => {
      const res = await call(t.app, token, 'POST', '/clients', {
        clients: points.map(([name, lat, lng]) => ({ name, address: { location: { lat, lng } } })),
      });
      assert.equal(res.status, 200, res.raw);
      return res.body.clients.map((c: { id: number }, i: number) => ({
        id: c.id,
        name: points[i][0],
        lat: points[i][1],
        lng: points[i][2],
      }));
    };
    /** What the answer must be: located items within the radius, nearest first (ties by id), distances to 3 decimals. */
    const expected = (items: Located[], lat: number, lng: number, radius = Infinity) =>
      items
        .map((p) => ({ id: p.id, exact: haversineKm(lat, lng, p.lat, p.lng) }))
        .filter((p) => p.exact <= radius)
        .map((p) => ({ id: p.id, distance: Math.round(p.exact * 1000) / 1000 }))
        .sort((x, y) => x.distance - y.distance || x.id - y.id);
    const assertNear = (got: { id: number; distance: number }[], want: { id: number; distance: number }[]) => {
      assert.deepEqual(
        got.map((g) => g.id),
        want.map((w) => w.id),
        JSON.stringify({ got, want }),
      );
      for (let i = 0; i < got.length; i++)
        assert.ok(Math.abs(got[i].distance - want[i].distance) <= 0.0011, JSON.stringify([got[i], want[i]]));
    };

    it('answers distances as an independent haversine does, nearest first, over random points of the whole globe', async () => {
      const next = random(29);
      const points: [string, number, number][] = Array.from({ length: 60 }, (_, i) => [
        `R${i}`,
        round7(next() * 180 - 90),
        round7(next() * 360 - 180),
      ]);
      const mine = await makeClients(points);
      for (const [lat, lng] of [
        [0, 0],
        [51.5, -0.12],
        [-89.9, 45],
        [12.3456789, 179.99],
      ]) {
        const res = await get(`/clients?near=${lat},${lng}&where=name ~ "R"&recordsPerPage=1000&fields=name`);
        assert.equal(res.status, 200, res.raw);
        const mineOnly = res.body.clients.filter((c: { id: number }) => mine.some((m) => m.id === c.id));
        assertNear(mineOnly, expected(mine, lat, lng));
        for (const c of res.body.clients) assert.deepEqual(Object.keys(c).sort(), ['distance', 'id', 'name']);
        // Within a radius: exactly the ones the reference puts inside.
        const radius = 5000;
        const within = await get(`/clients?near=${lat},${lng},${radius}&where=name ~ "R"&recordsPerPage=1000`);
        const got = within.body.clients.filter((c: { id: number }) => mine.some((m) => m.id === c.id));
        assertNear(got, expected(mine, lat, lng, radius));
      }
    });

    it('finds across the antimeridian and around the poles', async () => {
      const pts = await makeClients([
        ['East edge', 0, 179.9],
        ['West edge', 0, -179.9],
        ['Far west', 0, -179],
        ['North A', 89.95, 0],
        ['North B', 89.95, 180],
        ['North C', 89.5, -90],
        ['South', -89.99, 10],
      ]);
      const names = (res: { body: { clients: { id: number }[] } }) =>
        res.body.clients.map((c) => pts.find((p) => p.id === c.id)?.name).filter(Boolean);
      let res = await get('/clients?near=0,179.9,50');
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(names(res), ['East edge', 'West edge']);
      assert.ok(Math.abs(res.body.clients[1].distance - haversineKm(0, 179.9, 0, -179.9)) < 0.0011);
      res = await get('/clients?near=0,-179.95,150');
      assert.deepEqual(names(res), ['West edge', 'East edge', 'Far west']);
      // Through the pole: points on opposite meridians are near each other.
      res = await get('/clients?near=89.95,0,20');
      assert.deepEqual(names(res), ['North A', 'North B']);
      assertNear(res.body.clients, expected(pts.slice(3, 5), 89.95, 0));
      res = await get('/clients?near=90,0,60');
      assert.deepEqual(names(res).sort(), ['North A', 'North B', 'North C']);
      res = await get('/clients?near=-90,0,2');
      assert.deepEqual(names(res), ['South']);
      // A radius past half the Earth's circumference holds everything.
      res = await get('/clients?near=0,0,30000&where=name ~ "edge"');
      assert.equal(res.body.clients.length, 2);
    });

    it('leaves out items without a location, combines with where, fields, sort and paging; recordsCount is true', async () => {
      const base = await makeClients([
        ['P0 alpha', 10, 10],
        ['P1 beta', 10.01, 10],
        ['P2 alpha', 10.02, 10],
        ['P3 alpha', 10.03, 10],
        ['P4 beta', 10.5, 10],
      ]);
      await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'P5 alpha nowhere' }] });
      const res = await get('/clients?near=10,10,10&where=name ~ "alpha"&recordsPerPage=2&page=1&fields=name');
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(
        res.body.clients.map((c: { name: string }) => c.name),
        ['P0 alpha', 'P2 alpha'],
      );
      assert.deepEqual(res.body.metadata, { page: 1, pagesCount: 2, recordsPerPage: 2, recordsCount: 3 });
      assert.equal(res.body.clients[0].distance, 0);
      const page2 = await get('/clients?near=10,10,10&where=name ~ "alpha"&recordsPerPage=2&page=2&fields=name');
      assert.deepEqual(
        page2.body.clients.map((c: { name: string }) => c.name),
        ['P3 alpha'],
      );
      // Without a where, the kept count is not used: only the located ones within the radius.
      const all = await get('/clients?near=10,10,3&recordsPerPage=1');
      assert.equal(all.body.metadata.recordsCount, 3);
      assert.ok('distance' in all.body.clients[0] && 'name' in all.body.clients[0]);
      // With a sort, the sort decides and distance is still given.
      const sorted = await get('/clients?near=10,10,100&sort=-name&where=name ~ "P"');
      assert.deepEqual(
        sorted.body.clients.map((c: { id: number }) => c.id),
        [...base].reverse().map((c) => c.id),
      );
      assert.ok(sorted.body.clients.every((c: { distance: number }) => typeof c.distance === 'number'));
      // Ties by id: the same place twice.
      const twins = await makeClients([
        ['Twin', -20, 30],
        ['Twin', -20, 30],
      ]);
      const tie = await get('/clients?near=-20.001,30,1');
      assert.deepEqual(
        tie.body.clients.map((c: { id: number }) => c.id),
        twins.map((c) => c.id),
      );
      // distance is read-only, and null without near.
      const w = await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: base[0].id, distance: 1 }] });
      assert.equal(w.status, 422);
      const plain = await get(`/clients/${base[0].id}?fields=*`);
      assert.equal(plain.body.clients[0].distance, null);
      assert.equal((await get(`/clients/${base[0].id}`)).body.clients[0].distance, undefined);
    });

    it('works on sites and jobs, within the caller’s account and scope', async () => {
      const [c] = await makeClients([['Site owner', 40, -3]]);
      const site = await call(t.app, a.token, 'POST', '/sites', {
        sites: [
          { client: { id: c.id }, name: 'Near site', address: { location: { lat: 40.001, lng: -3 } } },
          { client: { id: c.id }, name: 'Far site', address: { location: { lat: 41, lng: -3 } } },
        ],
      });
      const s = site.body.sites;
      const near = await get('/sites?near=40,-3,5');
      assert.deepEqual(
        near.body.sites.map((x: { id: number }) => x.id),
        [s[0].id],
      );
      assert.equal(near.body.sites[0].distance, Math.round(haversineKm(40, -3, 40.001, -3) * 1000) / 1000);
      const jobs = await call(t.app, a.token, 'POST', '/jobs', {
        jobs: [
          { title: 'At the near site', client: { id: c.id }, site: { id: s[0].id } },
          { title: 'At the client', client: { id: c.id } },
          { title: 'Nowhere', address: null },
        ],
      });
      const j = jobs.body.jobs;
      const nj = await get('/jobs?near=40,-3,1&fields=title');
      assert.deepEqual(
        nj.body.jobs.map((x: { id: number }) => x.id),
        [j[1].id, j[0].id],
      );
      // Another account's items at the same place never show.
      await makeClients([['B at the same place', 40, -3]], b.token);
      const mine = await get('/clients?near=40,-3,0.001');
      assert.deepEqual(
        mine.body.clients.map((x: { id: number }) => x.id),
        [c.id],
      );
      // A contractor sees only their jobs, near or not.
      const con = await addUser(t, a, 'contractor');
      await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: j[0].id },
            user: { id: con.id },
            label: 'Go',
            startTime: '2030-01-01T09:00:00Z',
            endTime: '2030-01-01T10:00:00Z',
          },
        ],
      });
      const cj = await get('/jobs?near=40,-3,1', con.token);
      assert.deepEqual(
        cj.body.jobs.map((x: { id: number }) => x.id),
        [j[0].id],
      );
      assert.equal(cj.body.metadata.recordsCount, 1);
    });

    it('a near answer asked again follows every change of the table (remembered answers stay true)', async () => {
      const [c] = await makeClients([['Mover', -40, 100]]);
      const url = '/clients?near=-40.5,100,100';
      const first = await get(url);
      assert.deepEqual(
        first.body.clients.map((x: { id: number }) => x.id),
        [c.id],
      );
      assert.equal((await get(url)).raw, first.raw);
      await call(t.app, a.token, 'PATCH', '/clients', {
        clients: [{ id: c.id, address: { location: { lat: -40.4, lng: 100 } } }],
      });
      const moved = await get(url);
      assert.ok(moved.body.clients[0].distance < first.body.clients[0].distance, moved.raw);
      const [d] = await makeClients([['Newcomer', -40.5, 100]]);
      const added = await get(url);
      assert.deepEqual(
        added.body.clients.map((x: { id: number }) => x.id),
        [d.id, c.id],
      );
      assert.equal(added.body.metadata.recordsCount, 2);
      await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: c.id, address: null }] });
      const gone = await get(url);
      assert.deepEqual(
        gone.body.clients.map((x: { id: number }) => x.id),
        [d.id],
      );
      assert.equal(gone.body.metadata.recordsCount, 1);
    });

    it('refuses a malformed near with 400 naming near', async () => {
      for (const near of [
        '91,0',
        '-90.5,0',
        '0,180.1',
        '0,-181',
        'abc',
        '1',
        '1,2,3,4',
        '1,2,-5',
        '1,,2',
        '',
        '1e1,2',
        '0x10,2',
        'NaN,1',
        '1,2,Infinity',
        '1.,2',
        '1,2,',
        '1 2,3',
        '1,2 0',
      ]) {
        const res = await get(`/clients?near=${encodeURIComponent(near)}`);
        assert.equal(res.status, 400, `${near}: ${res.raw}`);
        assert.equal(res.body.error.code, 1002);
        assert.match(res.body.error.message, /near/, near);
      }
      assert.equal((await get(`/clients?near=${encodeURIComponent(' 1 , 2 , 3 ')}`)).status, 200);
      const twice = await get('/clients?near=1,2&near=3,4');
      assert.equal(twice.status, 400);
      const users = await get('/users?near=1,2');
      assert.equal(users.status, 400);
      assert.match(users.body.error.message, /near/);
    });
  });
}
