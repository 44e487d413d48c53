/**
 * An isolate's listens are bounded in all (MAX_LISTEN_STREAMS=8 here, vitest.config.ts), the
 * SDK's and those naming tasks counted together: each holds sockets (a bus socket, or one per
 * task it watches). Past the total a listen is refused as the SDK refuses one (-32603
 * "Subscription limit reached"), whoever asks; a slot is free again once a listen ends. Each
 * client address gets at most 6 of them (MAX_LISTENS_PER_PRINCIPAL; listen-shares.test.ts), so
 * the isolate is filled here from two.
 */
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';
import { StreamShares } from '../../src/edge/stream-shares.ts';
import type { TaskDirectory } from '../../src/tasks/task-directory.ts';
import { serveTaskListen } from '../../src/tasks/task-listen.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { message, SseReader } from '../support/sse-reader.ts';
import { createTask, TASK_CLIENT, waitForStatus } from '../support/task-http.ts';

const MAX = 8;
const SHARE = 6;
const from = (address: string) => ({ 'CF-Connecting-IP': address });
const listen = (taskIds: string[], address: string) =>
  modernRequest('subscriptions/listen', { notifications: { taskIds } }, TASK_CLIENT, from(address));
const listenLists = (address: string) =>
  modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } }, {}, from(address));
const LIMIT_REACHED = { jsonrpc: '2.0', id: expect.any(Number), error: { code: -32603, message: 'Subscription limit reached' } };

describe('listens per isolate', () => {
  it(`at most MAX_LISTEN_STREAMS (${MAX}) at once, of both kinds: the next is refused as the SDK refuses one, and is served once one has ended`, async () => {
    const asking = await createTask('confirm_delete', { filename: 'slots.txt' });
    await waitForStatus(asking, 'input_required');
    const readers: SseReader[] = [];
    try {
      for (let i = 0; i < MAX; i++) {
        const reader = new SseReader(await listen([asking], i < SHARE ? '198.51.100.1' : '198.51.100.2'));
        readers.push(reader);
        expect((message((await reader.take(1))[0]!) as { method: string }).method).toBe('notifications/subscriptions/acknowledged');
      }
      // A third address, within its share: the isolate has none left, of either kind.
      const refused = await listen([asking], '198.51.100.3');
      expect(refused.status).toBe(200);
      expect(await answerOf(refused)).toEqual(LIMIT_REACHED);
      const lists = await listenLists('198.51.100.3');
      expect(lists.status).toBe(200);
      expect(await answerOf(lists)).toEqual(LIMIT_REACHED);

      // One leaves: its slot is given back once its cancel reaches the Worker.
      await readers.shift()!.cancel();
      let again: Response | undefined;
      for (let attempt = 0; attempt < 100 && again === undefined; attempt++) {
        const response = await listenLists('198.51.100.3');
        if (response.headers.get('Content-Type')?.includes('text/event-stream')) again = response;
        else await scheduler.wait(10);
      }
      expect(again).toBeDefined();
      readers.push(new SseReader(again!));
    } finally {
      await Promise.all(readers.map((reader) => reader.cancel()));
    }
  });
});

describe('listens naming tasks whose clients leave early', () => {
  /** A directory whose watches open only when `open` is called: the client can leave meanwhile. */
  function slowDirectory() {
    const sockets: { accepted: boolean; closed: boolean }[] = [];
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const directory = {
      async watch() {
        await opened;
        const socket = {
          accepted: false,
          closed: false,
          accept: () => {
            socket.accepted = true;
          },
          close: () => {
            socket.closed = true;
          },
        };
        sockets.push(socket);
        return socket as unknown as WebSocket;
      },
    } as unknown as TaskDirectory;
    return { directory, sockets, open: () => open() };
  }
  const message = {
    id: 7,
    params: {
      notifications: { taskIds: ['k3Jd9xQ2bT5nW8pL1vR4sA'] },
      _meta: { 'io.modelcontextprotocol/clientCapabilities': TASK_CLIENT },
    },
  };

  /** One listen slot, as the Worker gives them (edge/stream-shares.ts). */
  const oneSlot = () => {
    const shares = new StreamShares(readConfig({ MAX_LISTEN_STREAMS: '1' }));
    return { take: () => shares.listen('k', 7), held: () => shares.heldBy('k')[0] };
  };

  it('a client that left while its tasks were being watched gets nothing, and its slot and sockets are given back', async () => {
    const slots = oneSlot();
    const { directory, sockets, open } = slowDirectory();
    const leaving = new AbortController();
    const served = serveTaskListen(message, directory, slots.take, { signal: leaving.signal, heartbeatMs: 0 });
    expect(slots.held()).toBe(1);
    leaving.abort(); // before the watch is open: the signal will not fire again
    open();
    const response = await served;
    expect(response.body).toBeNull();
    expect(slots.held()).toBe(0);
    expect(sockets).toEqual([{ accepted: true, closed: true, accept: expect.any(Function), close: expect.any(Function) }]);
  });

  it('a client that stays is served, holding its slot until it leaves', async () => {
    const slots = oneSlot();
    const { directory, sockets, open } = slowDirectory();
    const leaving = new AbortController();
    open();
    const response = await serveTaskListen(message, directory, slots.take, { signal: leaving.signal, heartbeatMs: 0 });
    expect(response.headers.get('Content-Type')).toContain('text/event-stream');
    expect(slots.held()).toBe(1);
    leaving.abort();
    expect(slots.held()).toBe(0);
    expect(sockets[0]!.closed).toBe(true);
  });
});
