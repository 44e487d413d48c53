/**
 * The object's side of a relayed connection, against a socket that records what it is told:
 * what the socket remembers for a hibernation, and how a connection rebuilt from that goes on.
 */
import { describe, expect, it } from 'vitest';
import type { RelayAttachment, RelaySocket } from '../../src/core/relay.ts';
import type { Backlog, Delivery } from '../../src/session/connection.ts';
import { RelayConnection } from '../../src/session/relay-connection.ts';

class RecordingSocket implements RelaySocket {
  readonly messages: string[] = [];
  attachment: unknown;
  closed: { code?: number; reason?: string } | undefined;

  send(message: Uint8Array): void {
    if (this.closed !== undefined) throw new Error('send on a closed socket');
    this.messages.push(new TextDecoder().decode(message));
  }

  close(code?: number, reason?: string): void {
    this.closed = { code, reason };
  }

  serializeAttachment(value: unknown): void {
    this.attachment = structuredClone(value);
  }

  /** The event ids sent, in order. */
  get ids(): string[] {
    return [...this.messages.join('').matchAll(/^id: (\S+)$/gm)].map((m) => m[1]!);
  }
}

/** A stream's log, appended to before delivery as SessionStreams does. */
class Log implements Backlog {
  readonly events: Delivery[] = [];

  append(): Delivery {
    const seq = this.events.length + 1;
    const event = { seq, id: `1-4-${seq}`, data: `{"n":${seq},"pad":"${'x'.repeat(80)}"}` };
    this.events.push(event);
    return event;
  }

  read(afterSeq: number, budgetBytes: number) {
    const page: Delivery[] = [];
    let bytes = 0;
    for (const event of this.events.slice(afterSeq)) {
      if (page.length > 0 && bytes + event.data.length > budgetBytes) break;
      page.push(event);
      bytes += event.data.length;
    }
    return { events: page, lastSeq: this.events.length };
  }
}

const turnOver = () => new Promise((resolve) => setTimeout(resolve, 5));

/** A connection at the start of stream 4, through its first answer and bound to a recording socket. */
function bound(log: Log, bufferBytes = 1024 * 1024) {
  const connection = new RelayConnection({
    stream: 4,
    epoch: 1,
    afterSeq: 0,
    lastSeq: log.events.length,
    backlog: log,
    bufferBytes,
    onClosed: () => undefined,
  });
  connection.start();
  const first = connection.firstAnswer();
  const socket = new RecordingSocket();
  connection.bind(socket);
  return { connection, socket, first };
}

const revive = (log: Log, socket: RecordingSocket, bufferBytes = 1024 * 1024) =>
  RelayConnection.revive(socket, socket.attachment as RelayAttachment, log, bufferBytes, () => undefined);

describe('a relayed connection and hibernation', () => {
  it('records on its socket, once the turn is over, where it is', async () => {
    const log = new Log();
    const { connection, socket } = bound(log);
    for (let i = 0; i < 3; i++) connection.deliver(log.append());
    await turnOver();
    expect(socket.ids).toEqual(['1-4-1', '1-4-2', '1-4-3']);
    const sent = socket.messages.join('').length; // ASCII: characters are bytes
    expect(socket.attachment).toMatchObject({ stream: 4, epoch: 1, position: 3, sent, acked: 0, behind: false, finishing: false });
  });

  it('rebuilt from that record, it takes the next live event and nothing it already sent', async () => {
    const log = new Log();
    const { connection, socket } = bound(log);
    for (let i = 0; i < 3; i++) connection.deliver(log.append());
    await turnOver();

    const woken = new RecordingSocket();
    woken.attachment = socket.attachment;
    const revived = revive(log, woken);
    revived.deliver(log.events[2]!); // already sent before the hibernation
    revived.deliver(log.append());
    await turnOver();
    expect(woken.ids).toEqual(['1-4-4']);
    expect(woken.attachment).toMatchObject({ position: 4 });
  });

  it('rebuilt while behind, it reads on from its position once the Worker acknowledges', async () => {
    const log = new Log();
    const { connection, socket } = bound(log, 1_024);
    for (let i = 0; i < 50; i++) connection.deliver(log.append());
    await turnOver();
    const state = socket.attachment as RelayAttachment;
    expect(state.behind).toBe(true);
    expect(state.position).toBeLessThan(50);

    const woken = new RecordingSocket();
    woken.attachment = state;
    const revived = revive(log, woken, 1_024);
    const expected = Array.from({ length: 50 - state.position }, (_, i) => `1-4-${state.position + i + 1}`);
    let acked = state.sent;
    while (woken.ids.length < expected.length) {
      const before = woken.ids.length;
      revived.acknowledge(acked);
      await turnOver();
      acked = (woken.attachment as RelayAttachment).sent;
      expect(woken.ids.length, 'each acknowledgement makes room for more').toBeGreaterThan(before);
    }
    expect(woken.ids).toEqual(expected);
  });

  it('records falling behind and its stream ending even when nothing was written', async () => {
    const log = new Log();
    const { connection, socket } = bound(log, 1_024);
    for (let i = 0; i < 20; i++) connection.deliver(log.append()); // the buffer fills
    await turnOver();
    const full = socket.attachment as RelayAttachment;
    // Later turns: the last events and the stream's end arrive while the client reads nothing.
    connection.deliver(log.append());
    connection.deliver(log.append());
    connection.finish();
    await turnOver();
    expect(socket.attachment).toMatchObject({ behind: true, finishing: true, position: full.position });

    // Woken by the client's ack, the rebuilt connection reads to the stream's end, then closes.
    const woken = new RecordingSocket();
    woken.attachment = socket.attachment;
    const revived = revive(log, woken, 1_024);
    let acked = full.sent;
    for (let round = 0; woken.closed === undefined && round < 50; round++) {
      revived.acknowledge(acked);
      await turnOver();
      acked = (woken.attachment as RelayAttachment | null)?.sent ?? acked;
    }
    expect(woken.ids.at(-1)).toBe(`1-4-${log.events.length}`);
    expect(woken.closed).toEqual({ code: 1000, reason: 'stream-finished' });
  });

  it('leaves nothing to rebuild on a socket it closed', () => {
    const log = new Log();
    const { connection, socket } = bound(log);
    connection.deliver(log.append());
    connection.close();
    expect(socket.attachment).toBeNull();
    expect(socket.closed).toEqual({ code: 1000, reason: 'connection-closed' });
  });

  it('bound after its stream finished, the bridge carried everything and the socket just closes', async () => {
    const log = new Log();
    const connection = new RelayConnection({
      stream: 4,
      epoch: 1,
      afterSeq: 0,
      lastSeq: 0,
      backlog: log,
      bufferBytes: 4_096,
      onClosed: () => {},
    });
    connection.start();
    const bridge = connection.firstAnswer() as ReadableStream<Uint8Array>;
    connection.deliver(log.append()); // between the first answer and the bind: on the bridge
    connection.finish();
    const socket = new RecordingSocket();
    connection.bind(socket);
    expect(await new Response(bridge).text()).toBe(`id: 1-4-1\ndata: ${log.events[0]!.data}\n\n`);
    expect(socket.messages).toEqual([]);
    expect(socket.closed).toEqual({ code: 1000, reason: 'stream-finished' });
  });
});

describe('a relayed connection counting in bytes', () => {
  // 3 characters of 2, 3 and 4 UTF-8 bytes (the last 2 UTF-16 units): a frame is longer in bytes than in characters.
  const data = (seq: number) => `{"n":${seq},"text":"ÿ€𝄞"}`;
  const frameBytes = (seq: number) => new TextEncoder().encode(`id: 1-4-${seq}\ndata: ${data(seq)}\n\n`).byteLength;

  it.each([
    ['its producer counted', (seq: number) => new TextEncoder().encode(data(seq)).byteLength],
    ['it counts itself', () => undefined],
  ])('counts each frame’s UTF-8 bytes, where %s them: full after exactly the buffer’s worth', async (_name, bytesOf) => {
    const log = { events: [] as Delivery[], read: () => ({ events: [], lastSeq: 0 }) };
    const { connection, socket } = bound(log as unknown as Log, frameBytes(1) + frameBytes(2));
    for (let seq = 1; seq <= 3; seq++) connection.deliver({ seq, id: `1-4-${seq}`, data: data(seq), bytes: bytesOf(seq) });
    expect(connection.waiting, 'the third event found the buffer full').toBe(true);
    await turnOver();
    expect(socket.ids).toEqual(['1-4-1', '1-4-2']);
  });
});
