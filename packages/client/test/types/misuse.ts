// Misuse the client's types must refuse. Each `@ts-expect-error` line is checked by tsc
// (test/types.test.ts): compiled as is, this file passes; without the directives, exactly the
// lines below them fail. The last function shows the same calls written correctly.
import { type FieldService } from '@fieldservice/client';

export async function misuse(fsm: FieldService) {
  // @ts-expect-error: no collection `job` (it is `jobs`)
  fsm.list('job');
  // @ts-expect-error: jobs have no field `titel` to select
  fsm.list('jobs', { fields: ['titel'] });
  // @ts-expect-error: nor to filter on
  fsm.list('jobs', { where: ['titel', '~', 'pipe'] });
  // @ts-expect-error: nor to sort by
  fsm.list('jobs', { sort: ['-titel'] });
  // @ts-expect-error: `==` is not an operator (`=` compares)
  fsm.list('jobs', { where: ['title', '==', 'x'] });
  // @ts-expect-error: `asap` is not a priority
  await fsm.create('jobs', [{ title: 'Leak', priority: 'asap' }]);
  // @ts-expect-error: a visit needs its endTime
  await fsm.create('visits', [{ job: { id: 1 }, label: 'Survey', startTime: '2030-01-01T09:00:00Z' }]);
  // @ts-expect-error: createdBy is read-only
  await fsm.create('jobs', [{ title: 'Leak', createdBy: { id: 1 } }]);
  // @ts-expect-error: events are written by the server only
  await fsm.create('events', [{}]);
  // @ts-expect-error: a batch update names each item's id
  await fsm.update('jobs', [{ title: 'Leak' }]);
  // @ts-expect-error: a visit's state is one of its states
  await fsm.updateItem('visits', 1, { state: 'done' });
  for await (const job of fsm.list('jobs', { fields: ['title'] })) {
    // @ts-expect-error: only the fields asked for (and id) are there
    console.log(job.priority);
  }
  // @ts-expect-error: the raw client knows the path parameters too
  await fsm.api.GET('/jobs/{id}', {});
}

export async function use(fsm: FieldService) {
  fsm.list('jobs');
  for await (const job of fsm.list('jobs', {
    fields: ['title', 'priority'],
    where: {
      and: [
        ['title', '~', 'pipe'],
        ['status.id', '=', 1],
      ],
    },
    sort: ['-title'],
  }))
    console.log(job.id, job.title, job.priority);
  await fsm.create('jobs', [{ title: 'Leak', priority: 'urgent' }]);
  await fsm.create('visits', [
    { job: { id: 1 }, label: 'Survey', startTime: '2030-01-01T09:00:00Z', endTime: '2030-01-01T10:00:00Z' },
  ]);
  await fsm.update('jobs', [{ id: 1, title: 'Leak' }]);
  await fsm.updateItem('visits', 1, { state: 'completed' });
  await fsm.api.GET('/jobs/{id}', { params: { path: { id: 1 } } });
}
