// Input types: each collection created and updated with its required members only, nested values
// (lines, addresses, locations, a check-in's location) with theirs; read-only members refused.
// Checked by tsc (test/types.test.ts): as is it compiles; without the `@ts-expect-error`
// directives exactly the lines below them fail. Nothing here runs.
import type { FieldService, Item, NewItem, WithMeta } from '@fieldservice/client';

const ref = { id: 1 };
const at = '2030-01-01T09:00:00Z';
const until = '2030-01-01T10:00:00Z';

export async function requiredOnly(fsm: FieldService) {
  // Every collection that takes POST, with only what it requires.
  await fsm.create('users', [{ firstName: 'Bob', lastName: 'Builder', mobile: '+447700900123', account: ref }]);
  await fsm.create('statuses', [{ label: 'On hold' }]);
  await fsm.create('clients', [{ name: 'Acme' }]);
  await fsm.create('jobs', [{ title: 'Leak' }]);
  await fsm.create('visits', [{ job: ref, label: 'Survey', startTime: at, endTime: until }]);
  await fsm.create('workgroups', [{ name: 'North' }]);
  await fsm.create('notes', [{ job: ref, body: 'Bring a ladder' }]);
  await fsm.create('webhooks', [{ url: 'https://example.com/hook', events: ['jobs.*'] }]);
  await fsm.create('timesheets', [{ startTime: at }]);
  await fsm.create('locations', [{ lat: 51.5, lng: -0.1 }]);
  await fsm.create('unavailabilities', [{ user: ref, startTime: at, endTime: until }]);
  await fsm.create('sites', [{ client: ref, name: 'Depot' }]);
  await fsm.create('contacts', [{ client: ref, firstName: 'Ann' }]);
  await fsm.create('customFieldDefinitions', [{ collection: 'jobs', key: 'po', label: 'PO', type: 'text' }]);
  await fsm.create('taxRates', [{ name: 'VAT', percent: 20 }]);
  await fsm.create('products', [{ name: 'Call-out', kind: 'service', unitPrice: 45 }]);
  await fsm.create('charges', [{ job: ref, quantity: 1 }]);
  await fsm.create('invoices', [{}]);
  await fsm.create('payments', [{ invoice: ref, amount: 45 }]);
  await fsm.create('quotes', [{ job: ref }]);

  // Nested values with their required members only.
  const invoice: WithMeta<Item<'invoices'>> = await fsm.createOne('invoices', {
    client: ref,
    lines: [{ description: 'Call-out', quantity: 1, unitPrice: 45 }],
  });
  await fsm.createOne('quotes', { job: ref, lines: [{ description: 'Boiler', quantity: 1, unitPrice: 900 }] });
  await fsm.createOne('clients', { name: 'Acme', address: { city: 'Leeds' } });
  await fsm.createOne('sites', { client: ref, name: 'Depot', address: { location: { lat: 53.8, lng: -1.5 } } });
  await fsm.visits.checkIn(1, { location: { lat: 53.8, lng: -1.5 } });
  await fsm.visits.checkIn(1);
  // A view: its query as the server asks for it, its answer typed.
  const { slots } = await fsm.jobs.slots(1, { from: '2031-03-03T00:00:00Z', to: '2031-03-04T00:00:00Z', duration: 90 });
  await fsm.jobs.book(1, {
    arrivalWindowStart: slots[0].arrivalWindowStart,
    arrivalWindowEnd: at,
    user: slots[0].user,
  });
  const line: NonNullable<NewItem<'invoices'>['lines']>[number] = { description: 'Parts', quantity: 2, unitPrice: 5 };

  // Every collection that takes PATCH: a batch names the id alone, an item's URL change nothing.
  for (const c of [
    'users',
    'statuses',
    'clients',
    'jobs',
    'visits',
    'workgroups',
    'files',
    'notes',
    'webhooks',
    'timesheets',
    'unavailabilities',
    'sites',
    'contacts',
    'customFieldDefinitions',
    'taxRates',
    'products',
    'charges',
    'invoices',
    'payments',
    'quotes',
  ] as const) {
    await fsm.update(c, [{ id: 1 }]);
    await fsm.updateOne(c, 1, {});
  }
  await fsm.updateOne('invoices', invoice, { lines: [line, { description: 'Labour', quantity: 1.5, unitPrice: 60 }] });
  const issued: Item<'invoices'> = await fsm.invoices.issue(invoice);
  return issued.state;
}

export async function refused(fsm: FieldService) {
  await fsm.create('invoices', [
    // @ts-expect-error: a line's taxPercent is read-only (the tax rate's, at the time)
    { lines: [{ description: 'Call-out', quantity: 1, unitPrice: 45, taxPercent: 20 }] },
  ]);
  // @ts-expect-error: a line's total is computed
  await fsm.createOne('quotes', { job: ref, lines: [{ description: 'x', quantity: 1, unitPrice: 1, total: 1 }] });
  // @ts-expect-error: a line needs its unitPrice
  await fsm.createOne('invoices', { lines: [{ description: 'Call-out', quantity: 1 }] });
  // @ts-expect-error: an invoice's state changes by its actions only
  await fsm.updateOne('invoices', 1, { state: 'paid' });
  // @ts-expect-error: a payment needs its amount
  await fsm.create('payments', [{ invoice: ref }]);
  // @ts-expect-error: a product needs its kind
  await fsm.createOne('products', { name: 'Call-out', unitPrice: 45 });
  // @ts-expect-error: a location needs both lat and lng
  await fsm.createOne('clients', { name: 'Acme', address: { location: { lat: 53.8 } } });
  // @ts-expect-error: a batch update names each item's id
  await fsm.update('quotes', [{ notes: 'x' }]);
  // @ts-expect-error: invoices have no action `send` (quotes do)
  await fsm.invoices.send(1);
  // @ts-expect-error: issue takes no input
  await fsm.invoices.issue(1, { date: at });
  // @ts-expect-error: a check-in's location is {lat, lng}
  await fsm.visits.checkIn(1, { location: { latitude: 1, longitude: 2 } });
  // @ts-expect-error: slots need `to` as well as `from`
  await fsm.jobs.slots(1, { from: at });
  // @ts-expect-error: visits have no view `slots` (jobs do)
  await fsm.visits.slots(1, { from: at, to: at });
  // @ts-expect-error: pdf answers the file, not the invoice
  const state: string = (await fsm.invoices.pdf(1)).state;
  // @ts-expect-error: meta is read-only
  (await fsm.createOne('jobs', { title: 'x' })).meta = { status: 200, replayed: false, etag: '', idempotencyKey: '' };
  return state;
}
