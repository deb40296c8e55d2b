import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type FieldService, verifyWebhook } from '@fieldservice/client';
import { DIALECTS, serve, signedInClient, skipUnless, startReceiver, until, type Served } from './fixture.js';

for (const dialect of DIALECTS) {
  describe(`client package: verifyWebhook on a real delivery (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let s: Served;
    let fsm: FieldService;
    let rx: Awaited<ReturnType<typeof startReceiver>>;

    before(async () => {
      s = await serve(dialect);
      fsm = await signedInClient(s);
      rx = await startReceiver();
    });
    after(async () => {
      await rx?.close();
      await s?.close();
    });

    test('a delivery from the server verifies and types its event; a tampered body or another secret is refused', async () => {
      const [hook] = await fsm.create('webhooks', [{ url: rx.url, events: ['jobs.created'] }]);
      const secret = hook.secret!;
      assert.match(secret, /^whsec_/);
      const [job] = await fsm.create('jobs', [{ title: 'Announced' }]);
      await until(() => rx.received.length > 0, 20_000, 'the delivery');
      const delivery = rx.received[0];

      const event = await verifyWebhook({ headers: delivery.headers, body: delivery.body }, secret);
      assert.equal(event.id, delivery.headers['webhook-id']);
      // The union by type: a jobs event's data is a job, its default fields typed as present.
      if (event.type !== 'jobs.created') return assert.fail(`a ${event.type} delivery`);
      assert.deepEqual(event.data.item, { id: job.id });
      const title: string = event.data.data.title;
      assert.equal(title, 'Announced');
      assert.equal(event.data.data.priority, 'normal');
      assert.equal(event.data.collection, 'jobs');

      // The same delivery as a fetch Request verifies the same way.
      const asRequest = new Request(rx.url, {
        method: 'POST',
        headers: delivery.headers as Record<string, string>,
        body: delivery.body,
      });
      assert.deepEqual(await verifyWebhook(asRequest, secret), event);

      const tampered = delivery.body.replace('Announced', 'Announcee');
      await assert.rejects(verifyWebhook({ headers: delivery.headers, body: tampered }, secret));
      await assert.rejects(
        verifyWebhook(
          { headers: delivery.headers, body: delivery.body },
          `whsec_${Buffer.from('another secret of 32 bytes long!').toString('base64')}`,
        ),
      );
      await assert.rejects(
        verifyWebhook(
          { headers: { ...delivery.headers, 'webhook-signature': undefined }, body: delivery.body },
          secret,
        ),
      );
    });
  });
}
