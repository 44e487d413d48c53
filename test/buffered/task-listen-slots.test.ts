/**
 * Listens naming tasks are bounded per isolate like the SDK's own (MAX_LISTEN_STREAMS=8 here,
 * vitest.config.ts): each holds a socket per task it watches, so without the bound one client
 * could make an isolate hold any number of them. Past it a listen is refused as the SDK refuses
 * one (-32603 "Subscription limit reached"), and a slot is free again once a listen ends.
 */
import { describe, expect, it } from 'vitest';
import type { TaskDirectory } from '../../src/tasks/task-directory.ts';
import { serveTaskListen, TaskListenSlots } from '../../src/tasks/task-listen.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { message, SseReader } from '../support/sse-reader.ts';
import { createTask, TASK_CLIENT, waitForStatus } from '../support/task-http.ts';

const MAX = 8;
const listen = (taskIds: string[]) => modernRequest('subscriptions/listen', { notifications: { taskIds } }, TASK_CLIENT);

describe('listens naming tasks, per isolate', () => {
  it(`at most MAX_LISTEN_STREAMS (${MAX}) at once: the next is refused as the SDK refuses one, and is served once one has ended`, async () => {
    const asking = await createTask('confirm_delete', { filename: 'slots.txt' });
    await waitForStatus(asking, 'input_required');
    const readers: SseReader[] = [];
    try {
      for (let i = 0; i < MAX; i++) {
        const reader = new SseReader(await listen([asking]));
        readers.push(reader);
        expect((message((await reader.take(1))[0]!) as { method: string }).method).toBe('notifications/subscriptions/acknowledged');
      }
      const refused = await listen([asking]);
      expect(refused.status).toBe(200);
      expect(await answerOf(refused)).toEqual({
        jsonrpc: '2.0',
        id: expect.any(Number),
        error: { code: -32603, message: 'Subscription limit reached' },
      });
      // The SDK's listens are counted apart: one is still served.
      const listsReader = new SseReader(await modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } }));
      readers.push(listsReader);
      expect((message((await listsReader.take(1))[0]!) as { method: string }).method).toBe('notifications/subscriptions/acknowledged');

      // One leaves: its slot is given back once its cancel reaches the Worker.
      await readers.shift()!.cancel();
      let again: Response | undefined;
      for (let attempt = 0; attempt < 100 && again === undefined; attempt++) {
        const response = await listen([asking]);
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

  it('a client that left while its tasks were being watched gets nothing, and its slot and sockets are given back', async () => {
    const slots = new TaskListenSlots(1);
    const { directory, sockets, open } = slowDirectory();
    const leaving = new AbortController();
    const served = serveTaskListen(message, directory, slots, { signal: leaving.signal, heartbeatMs: 0 });
    expect(slots.open).toBe(1);
    leaving.abort(); // before the watch is open: the signal will not fire again
    open();
    const response = await served;
    expect(response.body).toBeNull();
    expect(slots.open).toBe(0);
    expect(sockets).toEqual([{ accepted: true, closed: true, accept: expect.any(Function), close: expect.any(Function) }]);
  });

  it('a client that stays is served, holding its slot until it leaves', async () => {
    const slots = new TaskListenSlots(1);
    const { directory, sockets, open } = slowDirectory();
    const leaving = new AbortController();
    open();
    const response = await serveTaskListen(message, directory, slots, { signal: leaving.signal, heartbeatMs: 0 });
    expect(response.headers.get('Content-Type')).toContain('text/event-stream');
    expect(slots.open).toBe(1);
    leaving.abort();
    expect(slots.open).toBe(0);
    expect(sockets[0]!.closed).toBe(true);
  });
});

describe('TaskListenSlots', () => {
  it('gives out at most its bound, and each release frees one slot once, however often it is called', () => {
    const slots = new TaskListenSlots(2);
    const first = slots.take();
    const second = slots.take();
    expect(first).toBeTypeOf('function');
    expect(second).toBeTypeOf('function');
    expect(slots.take()).toBeUndefined();
    first!();
    first!();
    expect(slots.open).toBe(1);
    const third = slots.take();
    expect(third).toBeTypeOf('function');
    expect(slots.take()).toBeUndefined();
    second!();
    third!();
    expect(slots.open).toBe(0);
  });
});
