/**
 * An SSE connection holds at most its buffer for a client that does not read: past it, the
 * connection stops taking live events and reads them from the log as the client makes room.
 * Here the log is an array and the client a reader over the connection's body, so what the
 * connection took live and what it read back is exact.
 */
import { describe, expect, it } from 'vitest';
import type { Backlog, Delivery } from '../../src/session/connection.ts';
import { RelayConnection } from '../../src/session/relay-connection.ts';
import { SessionStore } from '../../src/session/session-store.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { relayed } from '../support/relay.ts';
import { inNewObject, streamOptions } from '../support/session-fixture.ts';
import { ENDED, SseReader, TIMED_OUT } from '../support/sse-reader.ts';

const FRAME = 'x'.repeat(200);

/** A stream's log: events are appended here before they are delivered, as SessionStreams does. */
class FakeLog implements Backlog {
  readonly events: Delivery[] = [];
  /** `afterSeq` of every read, in order. */
  readonly reads: number[] = [];
  /** Events at or below this seq were pruned. */
  prunedThrough = 0;

  append(data = FRAME): Delivery {
    const seq = this.events.length + 1;
    const event = { seq, id: `1-1-${seq}`, data: `${seq}:${data}` };
    this.events.push(event);
    return event;
  }

  read(afterSeq: number, budgetBytes: number) {
    this.reads.push(afterSeq);
    const page: Delivery[] = [];
    let bytes = 0;
    for (const event of this.events.slice(Math.max(afterSeq, this.prunedThrough))) {
      if (page.length > 0 && bytes + event.data.length > budgetBytes) break;
      page.push(event);
      bytes += event.data.length;
    }
    return { events: page, lastSeq: this.events.length };
  }
}

function connect(log: FakeLog, bufferBytes: number, afterSeq = 0, { heartbeatMs = 0, onClosed = (): void => undefined } = {}) {
  const connection = new RelayConnection({
    stream: 1,
    epoch: 1,
    afterSeq,
    lastSeq: log.events.length,
    backlog: log,
    bufferBytes,
    onClosed,
  });
  connection.start();
  return { connection, reader: new SseReader(relayed(connection, { bufferBytes, heartbeatMs })) };
}

const seqs = (events: readonly { id?: string }[]) => events.map((e) => Number(e.id!.split('-')[2]));
const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('a connection whose client does not keep up', () => {
  it('takes about its buffer live, then reads the rest from the log, each event once and in order', async () => {
    const log = new FakeLog();
    const { connection, reader } = connect(log, 4_096);
    for (let i = 0; i < 1_000; i++) connection.deliver(log.append());
    connection.finish();
    expect(log.reads, 'nothing read from the log while the client reads nothing').toEqual([]);

    const events = await reader.all();
    expect(seqs(events)).toEqual(oneTo(1_000));
    // It fell behind once its buffer (4 KB, ~20 frames of ~210 bytes) was full.
    expect(log.reads[0]).toBeGreaterThan(0);
    expect(log.reads[0]).toBeLessThanOrEqual(Math.ceil(4_096 / 210) + 1);
  });

  it('with room for everything, it never reads the log', async () => {
    const log = new FakeLog();
    const { connection, reader } = connect(log, 1024 * 1024);
    for (let i = 0; i < 1_000; i++) connection.deliver(log.append());
    connection.finish();
    expect(seqs(await reader.all())).toEqual(oneTo(1_000));
    expect(log.reads).toEqual([]);
  });

  it('attached behind a long log, it starts from the cursor and pages through to the live end', async () => {
    const log = new FakeLog();
    for (let i = 0; i < 2_000; i++) log.append();
    const { connection, reader } = connect(log, 8_192, 500);
    expect(log.reads, 'only a buffer’s worth read at attach').toEqual([500]);
    const first = await reader.take(1_000);
    // Live events while it is behind are left to the log, then taken live once caught up.
    for (let i = 0; i < 100; i++) connection.deliver(log.append());
    const rest = await reader.take(600);
    expect(seqs([...first, ...rest])).toEqual(oneTo(1_600).map((n) => n + 500));
    connection.deliver(log.append());
    expect(seqs(await reader.take(1))).toEqual([2_101]);
    expect(
      log.reads.every((after, i) => i === 0 || after > log.reads[i - 1]!),
      'reads move forward',
    ).toBe(true);
    connection.close();
    expect(await reader.next(100)).toBe(ENDED);
  });

  it('ends where the log no longer has what the client is owed (pruned), without a gap', async () => {
    const log = new FakeLog();
    const { connection, reader } = connect(log, 2_048);
    for (let i = 0; i < 100; i++) connection.deliver(log.append());
    log.prunedThrough = 50;
    const events = await reader.all();
    const received = seqs(events);
    expect(received).toEqual(oneTo(received.length));
    expect(received.length).toBeLessThan(50);
  });

  it('closed while behind (fenced), it ends at once and reads nothing more', async () => {
    const log = new FakeLog();
    const { connection, reader } = connect(log, 2_048);
    for (let i = 0; i < 100; i++) connection.deliver(log.append());
    connection.close();
    const events = await reader.all();
    expect(seqs(events)).toEqual(oneTo(events.length));
    expect(events.length).toBeLessThan(100);
    expect(log.reads).toEqual([]);
  });

  it('counts its buffer in UTF-8 bytes, not UTF-16 units', async () => {
    const log = new FakeLog();
    const { connection, reader } = connect(log, 4_096);
    // ~110 characters but ~210 bytes a frame: 4 KB holds ~20 of them, not ~37.
    for (let i = 0; i < 100; i++) connection.deliver(log.append('é'.repeat(100)));
    connection.finish();
    expect(seqs(await reader.all())).toEqual(oneTo(100));
    expect(log.reads[0]).toBeLessThanOrEqual(Math.ceil(4_096 / 210) + 1);
  });

  it('sends no heartbeats while its buffer is full', async () => {
    const log = new FakeLog();
    const { connection, reader } = connect(log, 2_048, 0, { heartbeatMs: 10 });
    for (let i = 0; i < 100; i++) connection.deliver(log.append());
    await reader.take(1); // the relay socket is open: the rest of the buffer waits, unread
    await new Promise((resolve) => setTimeout(resolve, 100));
    connection.close();
    await reader.all();
    expect(reader.raw.slice(reader.raw.indexOf('id: '))).not.toContain('keepalive');
  });

  it('reports its end once, however it ends', async () => {
    const log = new FakeLog();
    let closed = 0;
    const { connection, reader } = connect(log, 1024 * 1024, 0, { onClosed: () => void closed++ });
    connection.deliver(log.append()); // enqueued at once: the stream calls pull()
    connection.deliver(log.append()); // held for the end of the turn
    // Microtasks only: the pull() is over, the turn is not. Ending now flushes the held frame,
    // and that enqueue calls pull() again, synchronously, from inside the end.
    for (let i = 0; i < 10; i++) await Promise.resolve();
    connection.finish();
    connection.close();
    expect(seqs(await reader.all())).toEqual([1, 2]);
    expect(closed).toBe(1);
  });

  it('delivered out of order, it still writes each event once, in order', async () => {
    const log = new FakeLog();
    const { connection, reader } = connect(log, 1024 * 1024);
    const [e1, e2, e3] = [log.append(), log.append(), log.append()];
    connection.deliver(e1!);
    connection.deliver(e1!); // again
    connection.deliver(e3!); // e2 skipped: read from the log instead
    connection.deliver(e2!);
    expect(seqs(await reader.take(3))).toEqual([1, 2, 3]);
    connection.deliver(log.append());
    expect(seqs(await reader.take(1))).toEqual([4]);
    expect(await reader.next(50)).toBe(TIMED_OUT);
    connection.close();
  });
});

/** SessionStreams over a new object's real storage, with a small connection buffer. */
function withStreams<T>(bufferBytes: number, body: (streams: SessionStreams) => Promise<T> | T): Promise<T> {
  return inNewObject(async (storage) => {
    const streams = new SessionStreams(storage, new SessionStore(storage.sql), streamOptions({ connectionBufferBytes: bufferBytes }));
    try {
      return await body(streams);
    } finally {
      streams.closeAll();
    }
  });
}

const tiny = (n: number) => JSON.stringify({ n });

describe('a connection over the real log', () => {
  it('counts the SSE framing against its buffer, not only the messages', async () => {
    const first = await withStreams(8_192, async (streams) => {
      const stream = streams.openRequestStream(1, ['"r"']);
      for (let n = 1; n <= 3_000; n++) streams.emit(stream.stream, tiny(n));
      // The first answer (a bridge: the stream goes on) starts with what fitted in the buffer.
      const bridge = streams.attach(stream, 0, false).firstAnswer() as ReadableStream<Uint8Array>;
      const reader = bridge.getReader();
      const chunk = await reader.read();
      await reader.cancel();
      return chunk.value!.byteLength;
    });
    // Frames of ~25 bytes around 9-14 byte messages: counting messages only would send ~3x.
    expect(first).toBeGreaterThan(8_192 - 40);
    expect(first).toBeLessThanOrEqual(8_192 + 40);
  });

  it('a superseded standalone stream ends at once, even with events it has not sent yet', async () => {
    const sent = await withStreams(1_024, async (streams) => {
      const old = streams.openStandalone(1, null);
      const reader = new SseReader(relayed(streams.attach(old, 0, false), { bufferBytes: 1_024 }));
      for (let n = 1; n <= 60; n++) streams.emit(old.stream, tiny(n));
      streams.openStandalone(1, old.stream);
      return reader.all();
    });
    // Only what the buffer held when it was superseded: nothing sent late on a stream whose
    // server→client requests were already failed back.
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.length).toBeLessThan(60);
    expect(seqs(sent)).toEqual(oneTo(sent.length));
  });
});
