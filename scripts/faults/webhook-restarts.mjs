// restarts.mjs's webhook part (--webhook-kills K, default 2): a subscription with a TTL and one
// with no expiry deliver demo.note occurrences to a receiver on 127.0.0.1 (webhook-soak-receiver.mjs)
// that answers 503, so deliveries are pending — retrying from failing rows, or held behind the
// breaker — when the server is SIGKILLed and started again on the same state. Nothing is
// refreshed or re-subscribed after the restart: the subscriptions, their pending deliveries and
// their alarms must survive in storage, and once the receiver answers again every note must be
// processed once by each subscription (the receiver deduplicates by webhook-id), with valid
// signatures. Odd kills come during retries (a few notes, each attempted), even ones during a
// backlog (more notes than the breaker lets through). Its own server (AUTH=jwt) on RESTARTS_PORT + 2.
import { setTimeout as sleep } from 'node:timers/promises';
import { newWebhookSecret } from '../../dist/client/index.js';
import { webhookServer } from './webhook-server.mjs';
import { startSoakReceiver } from './webhook-soak-receiver.mjs';

/** The default policy's retries after a restart: the first within 10 s, the next within 40 s: three minutes covers a probe and the backlog behind it. */
const DRAIN_MS = 180_000;

export async function killDuringWebhooks(kills, { port, receiverPort }) {
  const secret = newWebhookSecret();
  const receiver = await startSoakReceiver({ port: receiverPort, secrets: [secret] });
  const server = await webhookServer({ port, receiverOrigin: receiver.origin });
  const figures = { lost: 0, duplicates: 0, signatureFailures: 0, failures: 0 };
  const lines = [];
  try {
    await server.start();
    for (let kill = 1; kill <= kills; kill++) {
      const tag = `webhook-restart-${kill}-${Date.now()}`;
      const subscriptions = [];
      for (const [path, ttlMs] of [
        [`/hook/ttl-${kill}`, 3_600_000],
        [`/hook/forever-${kill}`, null],
      ]) {
        subscriptions.push((await server.subscribe({ tag, path, secret, ttlMs })).id);
      }
      await receiver.set('5xx');
      const during = kill % 2 === 1 ? 'retries' : 'a backlog';
      const notes = kill % 2 === 1 ? 5 : 40;
      const ids = [];
      for (let i = 0; i < notes; i++) ids.push(await server.postNote(tag, i));
      // Each subscription has met the 503s (an attempt reached the receiver) before the kill.
      const attempted = () =>
        subscriptions.every((id) => [...receiver.record.attempts.values()].some((list) => list.some((a) => a.subscription === id)));
      for (let waited = 0; waited < 30_000 && !attempted(); waited += 250) await sleep(250);
      await server.kill();
      await server.start();
      await receiver.set('up');
      const processed = (subscription, id) => receiver.record.processed.get(`${subscription} ${id}`) ?? 0;
      const done = () => subscriptions.every((subscription) => ids.every((id) => processed(subscription, id) > 0));
      for (let waited = 0; waited < DRAIN_MS && !done(); waited += 500) await sleep(500);
      let lost = 0;
      let duplicates = 0;
      for (const subscription of subscriptions) {
        for (const id of ids) {
          const times = processed(subscription, id);
          if (times === 0) lost++;
          if (times > 1) duplicates += times - 1;
        }
      }
      figures.lost += lost;
      figures.duplicates += duplicates;
      lines.push(
        `webhook kill ${kill} during ${during}: ${notes} notes × 2 subscriptions (one with no expiry), ${lost} lost, ${duplicates} processed twice`,
      );
    }
  } catch (error) {
    figures.failures++;
    lines.push(`webhook kills failed: ${String(error?.stack ?? error)}`);
  } finally {
    await server.close();
    await receiver.close();
  }
  figures.signatureFailures = receiver.record.signatureFailures;
  return { figures, lines };
}
