/**
 * An SSE connection holds at most its buffer for a client that does not read: past it, the
 * connection stops taking live events and reads them from the log as the client makes room.
 * Here the log is an array and the client a reader over the connection's body, so what the
 * connection took live and what it read back is exact.
 */
import { describe, expect, it } from 'vitest';
import { SseConnection, type Backlog, type Delivery } from '../../src/session/connection.ts';
import { ENDED, SseReader, TIMED_OUT } from '../support/sse-reader.ts';

const FRAME = 'x'.repeat(200);

/** A stream's log: events are appended here before they are delivered, as SessionStreams does. */
class FakeLog implements Backlog {
  readonly events: Delivery[] = [];
  /** `afterSeq` of every read, in order. */
  readonly reads: number[] = [];
  /** Events at or below this seq were pruned. */
  prunedThrough = 0;

  append(): Delivery {
    const seq = this.events.length + 1;
    const event = { seq, id: `1-1-${seq}`, data: `${seq}:${FRAME}` };
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

function connect(log: FakeLog, bufferBytes: number, afterSeq = 0) {
  const connection = new SseConnection({
    heartbeatMs: 0,
    afterSeq,
    lastSeq: log.events.length,
    backlog: log,
    bufferBytes,
    onClosed: () => undefined,
  });
  connection.start();
  const body = connection.body;
  return { connection, reader: new SseReader(new Response(body)) };
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
    expect(log.reads.every((after, i) => i === 0 || after > log.reads[i - 1]!), 'reads move forward').toBe(true);
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
