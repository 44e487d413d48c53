/**
 * Reconnecting with GET + Last-Event-ID: a gap-free continuation of exactly the stream the
 * cursor names, or a typed refusal — one test per row of the decision table.
 */
import { describe, expect, it } from 'vitest';
import { errorOf, messages, openSession, callTool, toolCall, type Session } from '../support/mcp-http.ts';
import { ENDED, SseReader, TIMED_OUT, type ReadEvent } from '../support/sse-reader.ts';

const countdown = (from: number, interval_ms: number) => toolCall('countdown', { from, interval_ms }, { progressToken: 'p' });

/** Starts a call and returns its reader plus the stream number. */
async function start(session: Session, id: number | string, params: Record<string, unknown>) {
  const response = await session.post({ jsonrpc: '2.0', id, method: 'tools/call', params });
  expect(response.status).toBe(200);
  return { reader: new SseReader(response), stream: Number(response.headers.get('Mcp-Stream-Id')) };
}

const seqOf = (event: ReadEvent) => Number(event.id!.split('-')[2]);

describe('resuming a request stream', () => {
  it('after the server closed the connection mid-call (SEP-1699 polling), the result arrives on the resumed stream', async () => {
    const session = await openSession();
    const { reader, stream } = await start(session, 1, toolCall('test_reconnection', {}));
    const first = await reader.all();
    expect(first.map((e) => e.id)).toEqual([`${session.epoch}-${stream}-0`]);

    const resumed = await session.get(first.at(-1)!.id);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('Mcp-Stream-Id')).toBe(String(stream));
    expect(resumed.headers.get('Mcp-Stream-Resumed')).toBe('true');
    const rest = await new SseReader(resumed).all();
    expect(rest[0]).toMatchObject({ id: `${session.epoch}-${stream}-0`, data: '' }); // priming repeats the cursor
    expect(messages(rest)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Reconnection test completed successfully' }] } },
    ]);
  });

  it('after the client dropped mid-call, the tool keeps running and the resume is gap-free', async () => {
    const session = await openSession();
    const { reader } = await start(session, 2, countdown(30, 10));
    const seen = await reader.take(6); // priming + 5 progress
    await reader.cancel();

    const resumed = new SseReader(await session.get(seen.at(-1)!.id));
    const rest = await resumed.all();
    const seqs = [...seen, ...rest.slice(1)].map(seqOf);
    expect(seqs).toEqual(Array.from({ length: 32 }, (_, i) => i));
    const progress = [...messages(seen), ...messages(rest)].filter((m: any) => m.method).map((m: any) => m.params.progress);
    expect(progress).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(messages(rest).at(-1)).toMatchObject({ id: 2, result: { content: [{ text: 'liftoff after 30' }] } });
  });

  it('a newer attachment fences the older one: it ends, and later events reach only the newer', async () => {
    const session = await openSession();
    const { reader: original, stream } = await start(session, 3, countdown(20, 20));
    const seen = await original.take(3);
    const newer = new SseReader(await session.get(seen.at(-1)!.id));
    try {
      const leftover = await original.all(2_000); // throws if the fenced connection does not end
      const rest = await newer.all();
      const fencedSeqs = leftover.map(seqOf);
      const newerSeqs = rest.slice(1).map(seqOf);
      // The newer connection continues its cursor, gap-free, to the final response. The fenced
      // one may have received events stored before the switch (the client's cursor was older),
      // but it ended and never got the final response. (That nothing at all reaches a fenced
      // connection after the switch is checked against the log in the model test.)
      const last = 21;
      expect(newerSeqs).toEqual(Array.from({ length: last - seqOf(seen.at(-1)!) }, (_, i) => seqOf(seen.at(-1)!) + 1 + i));
      expect(fencedSeqs).toEqual(Array.from({ length: fencedSeqs.length }, (_, i) => seqOf(seen.at(-1)!) + 1 + i));
      expect(fencedSeqs.includes(last)).toBe(false);
      expect(rest.every((e) => e.id?.startsWith(`${session.epoch}-${stream}-`))).toBe(true);
    } finally {
      await original.cancel();
      await newer.cancel();
    }
  });

  it('a finished stream resumed before its final event replays the rest, including the result, then closes', async () => {
    const session = await openSession();
    const events = await session.call('tools/call', countdown(3, 0), 4);
    const stream = events[0]!.id!.split('-')[1];
    const resumed = await session.get(`${session.epoch}-${stream}-1`);
    expect(resumed.headers.get('Mcp-Stream-Resumed')).toBe('true');
    const replay = await new SseReader(resumed).all();
    expect(replay.map((e) => e.id)).toEqual([
      `${session.epoch}-${stream}-1`,
      `${session.epoch}-${stream}-2`,
      `${session.epoch}-${stream}-3`,
      `${session.epoch}-${stream}-4`,
    ]);
    expect(messages(replay).at(-1)).toMatchObject({ id: 4, result: {} });
  });

  it('a cursor at the final event of a finished stream replays nothing and opens a new standalone stream', async () => {
    const session = await openSession();
    const events = await session.call('tools/call', toolCall('tally', { key: 'final' }), 5);
    const last = events.at(-1)!.id!;
    const response = await session.get(last);
    expect(response.status).toBe(200);
    expect(response.headers.get('Mcp-Stream-Resumed')).toBe('false');
    const stream = Number(response.headers.get('Mcp-Stream-Id'));
    expect(stream).toBeGreaterThan(Number(last.split('-')[1]));
    const reader = new SseReader(response);
    try {
      const [priming] = await reader.take(1);
      expect(priming).toMatchObject({ id: `${session.epoch}-${stream}-0`, data: '' });
      expect(await reader.next(200)).toBe(TIMED_OUT);
    } finally {
      await reader.cancel();
    }
    const [again] = messages(await session.call('tools/call', toolCall('tally', { key: 'final' })));
    expect(again).toMatchObject({ result: { content: [{ text: '2' }] } }); // ran once per call, never replayed
  });
});

describe('refusals', () => {
  it.each([
    ['a stream that does not exist', (e: number, s: number) => `${e}-${s + 100}-0`, 409, 'unknown_stream'],
    ['a stream named with the wrong epoch', (e: number, s: number) => `${e + 1}-${s}-0`, 409, 'unknown_stream'],
    ['an event beyond the last one', (e: number, s: number) => `${e}-${s}-99`, 409, 'cursor_ahead'],
  ] as const)('a cursor naming %s is refused', async (_name, cursor, status, reason) => {
    const session = await openSession();
    const events = await session.call('tools/call', countdown(2, 0));
    const stream = Number(events[0]!.id!.split('-')[1]);
    expect(await errorOf(await session.get(cursor(session.epoch, stream)))).toMatchObject({ status, code: -32000, reason });
  });

  it('a cursor carried from another session names no stream of this one: refused unknown_stream, never resumed', async () => {
    const [a, b] = await Promise.all([openSession(), openSession()]);
    expect(a.epoch).not.toBe(b.epoch); // drawn at random (core/event-id.ts firstEpoch)
    const fromA = await a.call('tools/call', countdown(3, 0));
    const fromB = await b.call('tools/call', countdown(3, 0)); // b's stream 2 too, with the same seqs
    expect(fromB.map((e) => e.id!.split('-').slice(1))).toEqual(fromA.map((e) => e.id!.split('-').slice(1)));
    for (const event of fromA) {
      expect(await errorOf(await b.get(event.id!))).toMatchObject({ status: 409, code: -32000, reason: 'unknown_stream' });
    }
  });

  it('a new standalone stream supersedes the old one: its connection ends and resuming it is refused', async () => {
    const session = await openSession();
    const firstResponse = await session.get();
    const first = new SseReader(firstResponse);
    const firstStream = firstResponse.headers.get('Mcp-Stream-Id');
    try {
      const [priming] = await first.take(1);
      const second = await session.get();
      expect(second.headers.get('Mcp-Stream-Resumed')).toBe('false');
      expect(second.headers.get('Mcp-Stream-Id')).not.toBe(firstStream);
      await second.body?.cancel();
      expect(await first.next(2_000)).toBe(ENDED);
      expect(await errorOf(await session.get(priming!.id))).toMatchObject({ status: 409, reason: 'stream_superseded' });
    } finally {
      await first.cancel();
    }
  });

  it('a reconnect is never locked out: resuming the live standalone stream takes it over', async () => {
    const session = await openSession();
    const response = await session.get();
    const first = new SseReader(response);
    try {
      const [priming] = await first.take(1);
      const again = await session.get(priming!.id);
      expect(again.status).toBe(200);
      expect(again.headers.get('Mcp-Stream-Resumed')).toBe('true');
      expect(again.headers.get('Mcp-Stream-Id')).toBe(response.headers.get('Mcp-Stream-Id'));
      await again.body?.cancel();
      expect(await first.next(2_000)).toBe(ENDED);
    } finally {
      await first.cancel();
    }
  });
});

describe('request ids', () => {
  it('a re-sent request id is refused with its stream cursor, and the tool does not run again', async () => {
    const session = await openSession();
    const first = messages(await session.call('tools/call', toolCall('tally', { key: 'once' }), 'req-1'));
    expect(first).toEqual([{ jsonrpc: '2.0', id: 'req-1', result: { content: [{ type: 'text', text: '1' }] } }]);

    const refused = await errorOf(await session.post(callTool('req-1', 'tally', { key: 'once' })));
    expect(refused).toMatchObject({ status: 409, reason: 'duplicate_request_id', body: { id: 'req-1' } });
    const cursor = refused.body.error.data.cursor as string;
    expect(cursor).toMatch(new RegExp(`^${session.epoch}-\\d+-0$`));

    // The cursor recovers the original answer, executed once.
    const recovered = messages(await new SseReader(await session.get(cursor)).all());
    expect(recovered).toEqual(first);
    const [next] = messages(await session.call('tools/call', toolCall('tally', { key: 'once' })));
    expect(next).toMatchObject({ result: { content: [{ text: '2' }] } });
  });

  it('initialize’s id counts as used: refused with the cursor of stream 1, which recovers the handshake’s answer', async () => {
    const session = await openSession(); // its initialize had id 0
    const refused = await errorOf(await session.post(callTool(0, 'tally', { key: 'init-id' })));
    expect(refused).toMatchObject({
      status: 409,
      reason: 'duplicate_request_id',
      body: { id: 0, error: { data: { cursor: session.eventId(1, 0) } } },
    });
    const [answer] = messages(await new SseReader(await session.get(session.eventId(1, 0))).all());
    expect(answer).toMatchObject({ id: 0, result: { protocolVersion: '2025-11-25' } });
    // In a batch too (2025-03-26), and nothing of the batch runs.
    const batched = await openSession('2025-03-26');
    expect(
      await errorOf(await batched.post([callTool('b', 'tally', { key: 'init-id-batch' }), callTool(0, 'tally', { key: 'init-id-batch' })])),
    ).toMatchObject({ status: 409, reason: 'duplicate_request_id', body: { id: 0 } });
    const [first] = messages(await batched.call('tools/call', toolCall('tally', { key: 'init-id-batch' }), 'b'));
    expect(first).toMatchObject({ result: { content: [{ text: '1' }] } });
  });

  it('a 2025-03-26 batch reusing an earlier id is refused as a whole: none of its requests runs', async () => {
    const session = await openSession('2025-03-26');
    await session.call('tools/call', toolCall('tally', { key: 'batch' }), 'used');
    const refused = await errorOf(
      await session.post([callTool('fresh', 'tally', { key: 'batch' }), callTool('used', 'tally', { key: 'batch' })]),
    );
    expect(refused).toMatchObject({ status: 409, reason: 'duplicate_request_id', body: { id: 'used' } });
    // 'fresh' was not registered either: it can still be used, and the tally ran once before.
    const [next] = messages(await session.call('tools/call', toolCall('tally', { key: 'batch' }), 'fresh'));
    expect(next).toMatchObject({ id: 'fresh', result: { content: [{ text: '2' }] } });
  });

  it('a 2025-03-26 batch of more than 100 messages, or with an id over 256 bytes, is refused whole, and nothing runs', async () => {
    const session = await openSession('2025-03-26');
    const tally = (id: string) => callTool(id, 'tally', { key: 'big-batch' });
    const tooMany = await errorOf(await session.post(Array.from({ length: 101 }, (_, i) => tally(`${i}`))));
    expect(tooMany).toMatchObject({ status: 400, code: -32600, body: { id: null } });
    expect(tooMany.body.error.message).toBe('Invalid Request: a batch may hold at most 100 messages');
    const longId = await errorOf(await session.post([tally('short'), tally('i'.repeat(257))]));
    expect(longId).toMatchObject({ status: 400, code: -32600, body: { id: 'i'.repeat(257) } });
    const [first] = messages(await session.call('tools/call', toolCall('tally', { key: 'big-batch' }), 'short'));
    expect(first).toMatchObject({ id: 'short', result: { content: [{ text: '1' }] } });
  });

  it('a 2025-03-26 batch naming one id twice is a 400, and nothing runs', async () => {
    const session = await openSession('2025-03-26');
    const refused = await errorOf(await session.post([callTool(9, 'tally', { key: 'twice' }), callTool(9, 'tally', { key: 'twice' })]));
    expect(refused).toMatchObject({ status: 400, code: -32600 });
    expect(refused.body.error.message).toBe('Invalid Request: a batch repeats a request id');
    const [first] = messages(await session.call('tools/call', toolCall('tally', { key: 'twice' }), 9));
    expect(first).toMatchObject({ id: 9, result: { content: [{ text: '1' }] } });
  });

  it('ids 1 and "1" are different requests', async () => {
    const session = await openSession();
    await session.call('ping', {}, 1);
    expect(messages(await session.call('ping', {}, '1'))).toEqual([{ jsonrpc: '2.0', id: '1', result: {} }]);
  });
});

describe('cancellation and server requests', () => {
  it('notifications/cancelled stops the tool and releases its stream', async () => {
    const session = await openSession();
    const { reader, stream } = await start(session, 7, countdown(1_000, 20));
    try {
      await reader.take(3);
      const cancel = await session.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
      expect(cancel.status).toBe(202);
      const tail = await reader.all(2_000); // throws if the cancelled stream does not close
      expect(messages(tail).some((m: any) => m.id === 7)).toBe(false);
      // The stream is finished: resuming at its last event starts something new.
      const last = tail.at(-1)?.id ?? `${session.epoch}-${stream}-2`;
      const after = await session.get(last);
      expect(after.headers.get('Mcp-Stream-Resumed')).toBe('false');
      await after.body?.cancel();
    } finally {
      await reader.cancel();
    }
  });

  it('an elicitation goes out on the calling request’s stream and the answer is routed back', async () => {
    const session = await openSession('2025-11-25', { elicitation: {} });
    const { reader } = await start(session, 8, toolCall('test_elicitation', { message: 'who?' }));
    try {
      const [, request] = await reader.take(2);
      const ask = JSON.parse(request!.data);
      expect(ask).toMatchObject({ method: 'elicitation/create', params: { message: 'who?' } });
      expect(ask.id).toMatch(/^[0-9a-f]{8}\.\d+$/); // tagged with the serving instance

      const answer = await session.post({
        jsonrpc: '2.0',
        id: ask.id,
        result: { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } },
      });
      expect(answer.status).toBe(202);
      const rest = await reader.all();
      expect(messages(rest).at(-1)).toMatchObject({ id: 8, result: { content: [{ text: expect.stringContaining('"username":"ada"') }] } });
    } finally {
      await reader.cancel();
    }
  });

  it('an answer to a server request of another instance is dropped, not misrouted', async () => {
    const session = await openSession('2025-11-25', { elicitation: {} });
    const { reader } = await start(session, 9, toolCall('test_elicitation', { message: 'who?' }));
    try {
      const [, request] = await reader.take(2);
      const ask = JSON.parse(request!.data);
      const stale = `deadbeef.${ask.id.split('.')[1]}`;
      expect((await session.post({ jsonrpc: '2.0', id: stale, result: { action: 'decline' } })).status).toBe(202);
      expect(await reader.next(300)).toBe(TIMED_OUT); // still waiting for the real answer
      await session.post({ jsonrpc: '2.0', id: ask.id, result: { action: 'decline' } });
      expect(messages(await reader.all()).at(-1)).toMatchObject({
        id: 9,
        result: { content: [{ text: expect.stringContaining('action=decline') }] },
      });
    } finally {
      await reader.cancel();
    }
  });
});
