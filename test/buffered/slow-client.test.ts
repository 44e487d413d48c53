/**
 * Through the Worker and the object, with an 8 KB connection buffer (vitest.config.ts): a
 * client that reads slower than its call streams gets every event once and in order, and
 * the object holds only the buffer for it — the rest is read back from the log as the client
 * reads. Reads of the log are observed at EventLog.eventsAfter, in the object's isolate.
 */
import { evictDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionTable } from '../../src/session/connection-table.ts';
import { RelayConnection } from '../../src/session/relay-connection.ts';
import { EventLog } from '../../src/session/event-log.ts';
import { messages, openSession, callTool, toolCall, type Session } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

const originalEventsAfter = EventLog.prototype.eventsAfter;
const originalRelease = ConnectionTable.prototype.release;
const originalBind = RelayConnection.prototype.bind;
afterEach(() => {
  EventLog.prototype.eventsAfter = originalEventsAfter;
  ConnectionTable.prototype.release = originalRelease;
  RelayConnection.prototype.bind = originalBind;
});

/** Records the `afterSeq` of every read of the log. */
function recordLogReads(): number[] {
  const reads: number[] = [];
  EventLog.prototype.eventsAfter = function (this: EventLog, stream, afterSeq, budgetBytes) {
    reads.push(afterSeq);
    return originalEventsAfter.call(this, stream, afterSeq, budgetBytes);
  };
  return reads;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const N = 3_000;

/** POSTs countdown {from: N} with no pause between its progress events; nothing is read. */
const startCountdown = (session: Session, id: string) =>
  session.post(callTool(id, 'countdown', { from: N, interval_ms: 0 }, { progressToken: 'p' }));

describe('a client slower than its call', () => {
  it('reads nothing while 3,000 progress events are sent, then gets each once, in order, then the result', async () => {
    const session = await openSession();
    const reads = recordLogReads();
    const response = await startCountdown(session, 'slow');
    await sleep(1_000); // the call runs to its end meanwhile; its stream is finished in storage

    const events = await new SseReader(response).all(10_000);
    const sent = messages(events);
    expect(sent).toHaveLength(N + 1);
    expect(sent.slice(0, N).map((m: any) => m.params.progress)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(sent[N]).toMatchObject({ id: 'slow', result: { content: [{ text: `liftoff after ${N}` }] } });
    expect(events.filter((e) => e.data !== '').map((e) => e.id)).toEqual(
      Array.from({ length: N + 1 }, (_, i) => session.eventId(2, i + 1)),
    );
    // The connection fell behind early (its buffer holds ~60 of these events) and read the
    // rest from the log, a page at a time, always forward.
    expect(reads.length).toBeGreaterThan(1);
    expect(reads[0]).toBeGreaterThan(0);
    expect(reads[0]).toBeLessThan(200);
    expect(reads.every((after, i) => i === 0 || after > reads[i - 1]!)).toBe(true);
  });

  it('read as fast as it comes, a stream goes on past its buffer on the bridge, before the socket', async () => {
    // The bridge has no acks: what the runtime took from it is what counts as taken. (When
    // the bridge's bytes counted until the socket's first ack, a stream that wrote its buffer
    // within BRIDGE_MS waited there for the socket, and read the log only after it.)
    const session = await openSession();
    const order: string[] = [];
    EventLog.prototype.eventsAfter = function (this: EventLog, stream, afterSeq, budgetBytes) {
      order.push('read');
      return originalEventsAfter.call(this, stream, afterSeq, budgetBytes);
    };
    RelayConnection.prototype.bind = function (this: RelayConnection, socket) {
      order.push('bind');
      return originalBind.call(this, socket);
    };
    const events = await new SseReader(await startCountdown(session, 'fast')).all(10_000);
    expect(messages(events)[N]).toMatchObject({ id: 'fast', result: { content: [{ text: `liftoff after ${N}` }] } });
    expect(events.filter((e) => e.data !== '').map((e) => e.id)).toEqual(
      Array.from({ length: N + 1 }, (_, i) => session.eventId(2, i + 1)),
    );
    const beforeBind = order.indexOf('bind') === -1 ? order : order.slice(0, order.indexOf('bind'));
    expect(beforeBind.length, `reads of the log before the socket (${order.join(' ')})`).toBeGreaterThan(1);
  });

  it('behind when its object hibernates, the connection goes on where it was once woken', async () => {
    const session = await openSession();
    const response = await startCountdown(session, 'asleep');
    const reader = new SseReader(response);
    // The client takes the first answer, then reads nothing while the call runs to its end.
    const first = await reader.take(10);
    await sleep(1_000); // the socket is bound meanwhile, at BRIDGE_MS
    // Then it takes more than the pipes between the object and it hold (~32–64 KB here), so
    // that the bridge's end is through to the Worker: the platform does not evict an object
    // while the answer it streams is in flight, and `evictDurableObject` would cut it there.
    first.push(...(await reader.take(1_000)));
    await sleep(500); // the connection waits for its client to make room
    await evictDurableObject(env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id)));
    const reads = recordLogReads();

    const events = [...first, ...(await reader.all(10_000))];
    expect(events.filter((e) => e.data !== '').map((e) => e.id)).toEqual(
      Array.from({ length: N + 1 }, (_, i) => session.eventId(2, i + 1)),
    );
    expect(messages(events)[N]).toMatchObject({ id: 'asleep', result: { content: [{ text: `liftoff after ${N}` }] } });
    // The woken object read on from the position its socket remembered, never from the start.
    expect(reads[0]).toBeGreaterThan(0);
  });

  it('a resume from the start of a long finished stream pages through the log to its result', async () => {
    const session = await openSession();
    const done = await session.call('tools/call', toolCall('countdown', { from: N, interval_ms: 0 }, { progressToken: 'p' }), 'long');
    expect(messages(done)).toHaveLength(N + 1);

    const reads = recordLogReads();
    const resumed = await new SseReader(await session.get(session.eventId(2, 0))).all(10_000);
    expect(resumed.filter((e) => e.data !== '').map((e) => e.id)).toEqual(done.filter((e) => e.data !== '').map((e) => e.id));
    expect(resumed.map((e) => e.data)).toEqual(done.map((e) => e.data));
    expect(reads[0]).toBe(0);
    expect(reads.length).toBeGreaterThan(1);
  });

  // Either signal ends it: the body's cancel, or the request's abort signal
  // (on by default from compatibility date 2026-11-17); with neither wired, the connection
  // stays (checked by mutation).
  it('a client that leaves while its connection is behind frees the connection', async () => {
    const session = await openSession();
    const released: number[] = [];
    ConnectionTable.prototype.release = function (this: ConnectionTable, stream, connection) {
      released.push(stream);
      return originalRelease.call(this, stream, connection);
    };
    const reads = recordLogReads();
    const response = await startCountdown(session, 'gone');
    await sleep(500); // the call has finished; its connection is behind, its buffer full
    expect(released).toEqual([]);
    // The runtime took what its pipes to the client hold, read from the log; no more.
    const readBefore = reads.length;
    await sleep(200);
    expect(reads).toHaveLength(readBefore);
    await response.body!.cancel();
    for (let waited = 0; released.length === 0 && waited < 5_000; waited += 50) await sleep(50);
    expect(released).toEqual([2]);
    expect(reads, 'nothing read for a client that left').toHaveLength(readBefore);
  });
});
