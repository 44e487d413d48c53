// The webhook soak's receiver (webhook-soak.mjs): an application endpoint on 127.0.0.1 as the
// package's users write one — every POST goes through `receiveWebhook` (dist/client: signature,
// 5-minute window, the challenge, deduplication by webhook-id through a DeliveryStore) — put
// through the faults the soak names, on the script's command:
// - `up`: answered as receiveWebhook answers;
// - `down`: the port closed (connections refused) — `down()` closes the listener and every open
//   connection, `up()` listens again on the same port;
// - `5xx`: 503 before anything is read (the server must retry);
// - `slow`: processed, then answered only after `slowMs` (longer than the server's attempt
//   timeout: the server gives up on the answer and retries what was processed);
// - `ackdrop`: processed, then the connection destroyed before the status line (the
//   acknowledgement lost in flight).
// It records, per webhook-id, every attempt (time, mode, subscription), how many times the
// application processed it (onDelivery: must end at exactly 1), signature failures, control
// envelopes, and any event POST that reached it before its subscription's verification.
import { createServer } from 'node:http';
import { memoryDeliveryStore, receiveWebhook } from '../../dist/client/index.js';

export async function startSoakReceiver({ port, secrets, slowMs = 12_000 }) {
  // One store per subscription: both subscriptions deliver the same occurrences, under the same
  // webhook-id (its eventId), and each must be processed by its own (an application with one
  // store per endpoint would hand an occurrence to it once, whichever subscription brought it).
  const stores = new Map();
  const storeOf = (subscription) => {
    let store = stores.get(subscription);
    if (store === undefined) {
      store = memoryDeliveryStore(100_000);
      stores.set(subscription, store);
    }
    return store;
  };
  const record = {
    attempts: new Map(),
    processed: new Map(),
    signatureFailures: 0,
    malformed: 0,
    gaps: [],
    terminated: [],
    verifiedAt: new Map(),
    beforeVerification: 0,
    /** The last `cursor` of a processed delivery per subscription: what an application persists. */
    cursors: new Map(),
  };
  let mode = 'up';
  let server;
  const connections = new Set();

  async function handle(request, response) {
    const subscription = request.headers['x-mcp-subscription-id'];
    const webhookId = request.headers['webhook-id'];
    const isEvent = typeof webhookId === 'string' && !webhookId.startsWith('msg_');
    const at = Date.now();
    if (isEvent) {
      const attempts = record.attempts.get(webhookId) ?? [];
      attempts.push({ at, mode, subscription });
      record.attempts.set(webhookId, attempts);
      if (!record.verifiedAt.has(subscription)) record.beforeVerification++;
    }
    if (mode === '5xx') {
      response.writeHead(503).end();
      return;
    }
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const fetchRequest = new Request(`http://127.0.0.1:${port}${request.url}`, {
      method: request.method,
      headers: Object.entries(request.headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])),
      body: Buffer.concat(chunks),
    });
    const receipt = await receiveWebhook(fetchRequest, {
      secrets,
      seen: storeOf(subscription),
      onDelivery: (delivery) => {
        if (delivery.kind === 'event') {
          const key = `${delivery.subscriptionId} ${delivery.webhookId}`;
          record.processed.set(key, (record.processed.get(key) ?? 0) + 1);
          record.cursors.set(delivery.subscriptionId, delivery.body.cursor);
        } else if (delivery.kind === 'gap') record.gaps.push({ at, subscription, cursor: delivery.cursor });
        else if (delivery.kind === 'terminated') record.terminated.push({ at, subscription, error: delivery.error });
      },
    });
    if (receipt.outcome === 'challenge_answered' && !record.verifiedAt.has(subscription)) record.verifiedAt.set(subscription, at);
    if (receipt.outcome === 'refused' && receipt.status === 401) record.signatureFailures++;
    if (receipt.outcome === 'refused' && receipt.status !== 401) record.malformed++;
    const answered = mode;
    if (answered === 'ackdrop' && isEvent) {
      request.socket.destroy();
      return;
    }
    if (answered === 'slow' && isEvent) await new Promise((resolve) => setTimeout(resolve, slowMs));
    if (request.socket.destroyed) return;
    response.writeHead(receipt.response.status, Object.fromEntries(receipt.response.headers));
    response.end(Buffer.from(await receipt.response.arrayBuffer()));
  }

  async function listen() {
    server = createServer((request, response) => {
      handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    server.on('connection', (socket) => {
      connections.add(socket);
      socket.on('close', () => connections.delete(socket));
    });
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
  }

  await listen();
  return {
    origin: `http://127.0.0.1:${port}`,
    record,
    get mode() {
      return mode;
    },
    async set(next) {
      if (next === mode) return;
      if (next === 'down') {
        await new Promise((resolve) => {
          server.close(() => resolve());
          for (const socket of connections) socket.destroy();
        });
      } else if (mode === 'down') {
        await listen();
      }
      mode = next;
    },
    async close() {
      if (mode === 'down') return;
      await new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of connections) socket.destroy();
      });
      mode = 'down';
    },
  };
}
