/**
 * What one principal may hold of an isolate's streams (the auth project: MAX_LISTEN_STREAMS=8,
 * MAX_LISTENS_PER_PRINCIPAL=3, MAX_STREAMS_PER_PRINCIPAL=3; vitest.config.ts). Past its share a
 * principal is refused `429` with `data.reason` and `data.limit`, before anything is opened,
 * and another principal is served; a stream that ends gives its slot back. Issue 42 finding 2:
 * one user held all 1,024 listen slots of an isolate, and every other principal's listen got
 * `-32603 Subscription limit reached` until hers closed.
 */
import { describe, expect, it } from 'vitest';
import { HeldStreams, servedAgain, type Outcome, type Refusal } from '../support/held-streams.ts';
import { openSession, type Session } from '../support/mcp-http.ts';
import { modernRequest } from '../support/modern-http.ts';
import { createTask, TASK_CLIENT, waitForStatus } from '../support/task-http.ts';
import { bearer } from '../support/tokens.ts';

const ISOLATE_LISTENS = 8;
const LISTEN_SHARE = 3;
const STREAM_SHARE = 3;

const tooMany = (reason: 'too_many_listens' | 'too_many_streams', limit: number): Refusal => ({
  status: 429,
  code: -32000,
  message: expect.stringContaining(`${limit}`) as unknown as string,
  reason,
  limit,
});
const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);

const listen = (auth: Record<string, string>) =>
  modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } }, {}, auth);
const listenTask = (auth: Record<string, string>, taskId: string) =>
  modernRequest('subscriptions/listen', { notifications: { taskIds: [taskId] } }, TASK_CLIENT, auth);
const streamTask = (auth: Record<string, string>, taskId: string) => modernRequest('tasks/stream', { taskId }, TASK_CLIENT, auth);

/** A task of `auth`'s principal that waits for an answer: its streams and listens stay open. */
async function waitingTask(auth: Record<string, string>): Promise<string> {
  const taskId = await createTask('confirm_delete', { filename: 'held.txt' }, auth);
  await waitForStatus(taskId, 'input_required', 10_000, auth);
  return taskId;
}

describe('listen streams per principal', () => {
  it(`one principal gets its share (${LISTEN_SHARE}) of the isolate's ${ISOLATE_LISTENS}: the rest 429 too_many_listens, and another principal is served`, async () => {
    const alice = await bearer('share-listen-alice');
    const bob = await bearer('share-listen-bob');
    const held = new HeldStreams();
    try {
      // As many as the isolate holds, as the attack did: before the share, the last of them took
      // the isolate's last slot, and every other principal was refused.
      const a = await held.outcomes(ISOLATE_LISTENS, () => listen(alice));
      const b = await held.outcome(await listen(bob));
      expect({ a, b }).toEqual({
        a: [...times<Outcome>(LISTEN_SHARE, 'served'), ...times(ISOLATE_LISTENS - LISTEN_SHARE, tooMany('too_many_listens', LISTEN_SHARE))],
        b: 'served',
      });
    } finally {
      await held.close();
    }
  });

  it('listens naming tasks count in the same share, and a listen that ends gives its slot back', async () => {
    const alice = await bearer('share-task-listen-alice');
    const taskId = await waitingTask(alice);
    const held = new HeldStreams();
    try {
      const opened = await held.outcomes(LISTEN_SHARE, () => listenTask(alice, taskId));
      const refused = { naming: await held.outcome(await listenTask(alice, taskId)), lists: await held.outcome(await listen(alice)) };
      expect({ opened, refused }).toEqual({
        opened: times(LISTEN_SHARE, 'served'),
        refused: { naming: tooMany('too_many_listens', LISTEN_SHARE), lists: tooMany('too_many_listens', LISTEN_SHARE) },
      });
      await held.leave(0);
      expect(await servedAgain(held, () => listen(alice))).toBe('served');
    } finally {
      await held.close();
    }
  });
});

describe('task streams per principal', () => {
  it(`one principal holds at most ${STREAM_SHARE} tasks/stream streams: the next is 429 too_many_streams, another principal's is served, and one that ends gives its slot back`, async () => {
    const alice = await bearer('share-stream-alice');
    const bob = await bearer('share-stream-bob');
    const [aliceTask, bobTask] = [await waitingTask(alice), await waitingTask(bob)];
    const held = new HeldStreams();
    try {
      const a = await held.outcomes(STREAM_SHARE + 1, () => streamTask(alice, aliceTask));
      const b = await held.outcome(await streamTask(bob, bobTask));
      expect({ a, b }).toEqual({
        a: [...times<Outcome>(STREAM_SHARE, 'served'), tooMany('too_many_streams', STREAM_SHARE)],
        b: 'served',
      });
      await held.leave(0);
      expect(await servedAgain(held, () => streamTask(alice, aliceTask))).toBe('served');
    } finally {
      await held.close();
    }
  });
});

describe("a session's streams per principal", () => {
  it(`GET streams and POST responses the Worker holds count in the same share (${STREAM_SHARE}): past it GET and requests are 429, notifications still pass, another principal is served`, async () => {
    const alice = await bearer('share-session-alice');
    const bob = await bearer('share-session-bob');
    const sessions: Session[] = [];
    for (let i = 0; i <= STREAM_SHARE; i++) sessions.push(await openSession('2025-11-25', {}, alice));
    const taskId = await waitingTask(alice);
    const held = new HeldStreams();
    try {
      const gets = [];
      for (const session of sessions) gets.push(await held.outcome(await session.get()));
      const call = await sessions[0]!.post({
        jsonrpc: '2.0',
        id: 'call-1',
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x' } },
      });
      const callId = await call
        .clone()
        .json()
        .then(
          (body) => (body as { id?: unknown }).id,
          () => 'not JSON',
        );
      const atBound = {
        call: await held.outcome(call),
        callId,
        notification: (await sessions[0]!.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'none' } }))
          .status,
        taskStream: await held.outcome(await streamTask(alice, taskId)),
      };
      const bobGet = await held.outcome(await (await openSession('2025-11-25', {}, bob)).get());
      expect({ gets, atBound, bobGet }).toEqual({
        gets: [...times<Outcome>(STREAM_SHARE, 'served'), tooMany('too_many_streams', STREAM_SHARE)],
        atBound: {
          call: tooMany('too_many_streams', STREAM_SHARE),
          callId: 'call-1',
          // A response or notification opens no stream: a client at its bound can still answer
          // what its calls wait on, or cancel them.
          notification: 202,
          taskStream: tooMany('too_many_streams', STREAM_SHARE),
        },
        bobGet: 'served',
      });
      await held.leave(0);
      expect(await servedAgain(held, () => sessions[STREAM_SHARE]!.get())).toBe('served');
    } finally {
      await held.close();
    }
  });
});
