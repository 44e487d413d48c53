/**
 * With an MCP_METRICS binding (project `metrics`: test/fixture-server/metrics-recorder.ts,
 * standing in for the Analytics Engine dataset), a scripted run — a session, calls, a cut and its resume, a refused fork, a
 * restart mid-call, a deleted session, a task — produces exactly the data points, per kind and
 * outcome, of what the script did, each with the principal's keyed index and nothing of its
 * bodies; and what a client chose (an `Mcp-Method`, a tool's name) reaches no point unless the
 * server knows it. One file: the tests share the recorder, so they run in turn.
 */
import { abortAllDurableObjects } from 'cloudflare:test';
import { expect, it } from 'vitest';
import { keyedIndex, recordedPoints, TEST_METRICS_KEY, unkeyedIndex } from '../fixture-server/metrics-recorder.ts';
import { callTool, messages, openSession, toolCall } from '../support/mcp-http.ts';
import { MODERN, postModernRaw } from '../support/modern-http.ts';
import { SseReader } from '../support/sse-reader.ts';
import { createTask, getTask } from '../support/task-http.ts';

interface Point {
  readonly indexes: string[];
  readonly blobs: string[];
  readonly doubles: number[];
}

/** The points once they stop arriving (a first point of a principal waits for its hash), at most 5 s. */
async function settledPoints(): Promise<Point[]> {
  let last = -1;
  for (let waited = 0; waited < 5_000; waited += 100) {
    if (recordedPoints.length === last) return recordedPoints as unknown as Point[];
    last = recordedPoints.length;
    await scheduler.wait(100);
  }
  throw new Error('data points still arriving after 5 s');
}

/** `kind outcome [reason]` → how many points. */
function tally(points: readonly Point[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { blobs } of points) {
    const [kind, , , , outcome, reason] = blobs;
    const key = [kind, outcome, reason].filter(Boolean).join(' ');
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

it('a scripted run: the points match what it did, per kind', async () => {
  recordedPoints.length = 0;
  let requests = 0;
  const counted = <T>(request: Promise<T>) => {
    requests++;
    return request;
  };

  const session = await openSession(); // initialize, notifications/initialized
  requests += 2;
  await counted(session.call('tools/call', toolCall('tally', { key: 'k' })));

  // A cut after the first progress event, then the resume from it: the call is answered once.
  const cut = new SseReader(
    await counted(session.post(callTool('cut', 'countdown', { from: 3, interval_ms: 50 }, { progressToken: 'c' }))),
  );
  const [, first] = await cut.take(2);
  await cut.cancel();
  const resumed = await new SseReader(await counted(session.get(first!.id))).all();
  expect(messages(resumed).at(-1)).toMatchObject({ id: 'cut', result: { content: [{ text: 'liftoff after 3' }] } });

  // A call its client cancels: never answered, counted when the cancellation comes.
  const cancelled = new SseReader(
    await counted(session.post(callTool('dropped', 'countdown', { from: 20, interval_ms: 50 }, { progressToken: 'd' }))),
  );
  await cancelled.take(2);
  const cancellation = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'dropped' } };
  expect((await counted(session.post(cancellation))).status).toBe(202);
  await cancelled.cancel();

  // A fork refused: a cursor of a stream this session never had.
  expect((await counted(session.get('1-999-0'))).status).toBe(409);

  // A restart mid-call: the resume finds it interrupted.
  const running = new SseReader(
    await counted(session.post(callTool('long', 'countdown', { from: 5, interval_ms: 500 }, { progressToken: 'l' }))),
  );
  const [, progress] = await running.take(2);
  await running.cancel();
  await abortAllDurableObjects();
  const interrupted = await new SseReader(await counted(session.get(progress!.id))).all();
  expect(messages(interrupted).at(-1)).toMatchObject({ id: 'long', error: { data: { reason: 'request_interrupted' } } });

  expect((await counted(session.delete())).status).toBe(204);
  expect((await counted(session.post(callTool('gone', 'tally', { key: 'k' })))).status).toBe(404);

  // A task, to its end.
  const taskId = await counted(createTask('slow_compute', { seconds: 0, label: 'a-label' }));
  for (let polls = 0; ; polls++) {
    if (polls > 100) throw new Error('the task did not complete');
    if ((await counted(getTask(taskId))).result?.status === 'completed') break;
    await scheduler.wait(50);
  }

  const points = await settledPoints();
  expect(tally(points)).toEqual({
    'request ok': requests - 2, // all but the refused fork and the unknown session
    'request refused': 2,
    'session created': 1,
    'session deleted': 1,
    'call ok': 2, // tally, and the countdown that was cut and resumed
    'call interrupted': 1,
    'call cancelled': 1,
    'resume resumed': 2,
    'refusal refused unknown_stream': 1,
    'refusal refused session_not_found': 1,
    'task working': 1,
    'task completed': 1,
  });
  // The resumed countdown's point counts its three progress notifications.
  expect(points.find((p) => p.blobs[0] === 'call' && p.blobs[3] === 'countdown')?.doubles[1]).toBe(3);
  // Every point is the anonymous principal's index; no point carries a body or an id.
  const anonymous = await keyedIndex(TEST_METRICS_KEY, 'anonymous');
  expect(new Set(points.map((p) => p.indexes[0]))).toEqual(new Set([anonymous]));
  const text = JSON.stringify(points);
  for (const secret of [session.id, taskId, 'liftoff', 'a-label', '"k"']) expect(text).not.toContain(secret);
});

it('what a client chose reaches no point: a 5,033-character Mcp-Method, an unregistered 3,031-character tool name', async () => {
  recordedPoints.length = 0;
  const method = `tools/call${'m'.repeat(5_023)}`;
  const tool = `lookup_${'t'.repeat(3_000)}_for_someone@example.com`;
  expect([method.length, tool.length]).toEqual([5_033, 3_031]);

  // A 2026-07-28 request whose Mcp-Method names no method: refused.
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'echo',
      arguments: { text: 'hi' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
      },
    },
  });
  const refused = await postModernRaw(body, { 'Mcp-Method': method, 'Mcp-Name': 'echo' });
  expect(refused.status).toBe(400);
  await refused.text();

  // A session's call to a tool its server never registered: answered with an error.
  const session = await openSession();
  expect(messages(await session.call('tools/call', toolCall(tool, {}))).at(-1)).toHaveProperty('error');
  await session.call('tools/call', toolCall('tally', { key: 'k' }));

  const points = await settledPoints();
  const text = JSON.stringify(points);
  expect(text).not.toContain('m'.repeat(100));
  expect(text).not.toContain('t'.repeat(100));
  expect(text).not.toContain('someone@example.com');
  const request = points.find((p) => p.blobs[0] === 'request' && p.blobs[1] === 'modern');
  expect(request?.blobs[2]).toBe('other');
  expect(request?.doubles[3]).toBe(400);
  const calls = points.filter((p) => p.blobs[0] === 'call').map((p) => [p.blobs[3], p.blobs[4]]);
  expect(calls).toEqual(
    expect.arrayContaining([
      ['other', 'error'],
      ['tally', 'ok'],
    ]),
  );
  expect(calls).toHaveLength(2);
  // No blob is longer than a tool's name may be.
  for (const point of points) for (const blob of point.blobs) expect(blob.length).toBeLessThanOrEqual(128);

  // The index is the principal's under this deployment's key, not the unkeyed SHA-256 prefix anyone could compute.
  const index = await keyedIndex(TEST_METRICS_KEY, 'anonymous');
  expect(new Set(points.map((p) => p.indexes[0]))).toEqual(new Set([index]));
  expect(index).not.toBe(await unkeyedIndex('anonymous'));
});
