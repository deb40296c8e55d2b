// Misuse the client's types must refuse. Each `@ts-expect-error` line is checked by tsc
// (test/types.test.ts): compiled as is, this file passes; without the directives, exactly the
// lines below them fail. The last function shows the same calls written correctly.
import { type FieldService, type WebhookEvent } from '@fieldservice/client';

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
  // @ts-expect-error: get answers { item, etag }, not the item itself
  console.log((await fsm.get('jobs', 1)).title);
  const { item } = await fsm.get('jobs', 1);
  // @ts-expect-error: updateItem takes the id; the ETag goes in { ifMatch } (an item carries none)
  await fsm.updateItem('jobs', item, { title: 'Leak' });
  // @ts-expect-error: an ETag is a string, as get() answered it
  await fsm.deleteItem('jobs', 1, { ifMatch: 5 });
  const { item: user } = await fsm.get('users', 1);
  // @ts-expect-error: login is not a default field of users: without fields=* it may be absent
  const login: string | null = user.login;
  // @ts-expect-error: a deletion answers the ids alone
  console.log(login, (await fsm.delete('jobs', [1]))[0].title);
  for await (const event of fsm.events.follow({ where: ['collection', '=', 'jobs'] })) {
    // @ts-expect-error: which collection's data an event carries depends on its type
    console.log(event.data.title);
  }
  // @ts-expect-error: events are filtered on their own fields
  fsm.events.follow({ where: ['title', '=', 'x'] });
}

export function misusedDelivery(event: WebhookEvent) {
  // @ts-expect-error: a job's data has no label (that is a visit's)
  if (event.type === 'jobs.created') console.log(event.data.data.label);
  // @ts-expect-error: a ping carries no item
  if (event.type === 'webhook.ping') console.log(event.data.item);
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
  await fsm.update('jobs', [{ id: 1, title: 'Leak' }], { idempotencyKey: 'rename-leak-1' });
  await fsm.updateItem('visits', 1, { state: 'completed' });
  await fsm.api.GET('/jobs/{id}', { params: { path: { id: 1 } } });
  // Default fields are typed as present; what `fields` names is too.
  const { item, etag } = await fsm.get('jobs', 1);
  const title: string = item.title;
  const client: { id: number } | null = item.client;
  const { item: changed, etag: next } = await fsm.updateItem(
    'jobs',
    item.id,
    { title: `${title}!` },
    { ifMatch: etag },
  );
  await fsm.deleteItem('jobs', changed.id, { ifMatch: next, idempotencyKey: 'delete-leak-1' });
  const { item: user } = await fsm.get('users', 1, { fields: ['login', 'firstName'] });
  const login: string | null = user.login;
  const firstName: string = user.firstName;
  const [created] = await fsm.create('clients', [{ name: 'Acme' }]);
  const name: string = created.name;
  console.log(client, login, firstName, name);
  for await (const event of fsm.events.follow({ after: 10, where: ['collection', '=', 'jobs'], onCursor: () => {} })) {
    if (event.type === 'jobs.updated') console.log(event.data.title, event.changes);
    else if (event.collection === 'visits') console.log(event.data.label);
  }
}

export function delivery(event: WebhookEvent) {
  if (event.type === 'jobs.created') console.log(event.data.data.title, event.data.item.id);
  else if (event.type === 'webhook.ping') console.log(event.data.webhook.id);
}
