/**
 * Model-based property test of the stream state machine: open / emit / finish / attach with
 * any cursor / drop / new standalone / restart, run against the real SessionStreams over the
 * object's real SQLite storage, with the verdicts of decideResume applied exactly as the
 * session object applies them, and compared with a small reference model.
 *
 * After every step, every client connection is drained and checked:
 * - each connection carries exactly one stream identity (epoch and stream number);
 * - its events continue the cursor with contiguous seqs and the stored bytes;
 * - a client that reads, and was neither fenced nor left, has every event of its stream;
 * - a fenced connection receives nothing after the switch, and ends;
 * - no request id is ever accepted twice, across restarts.
 * Connection buffers range from one byte to the default, so connections fall behind and
 * catch up from the log as well as take events live.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { formatEventId, parseEventId } from '../../src/core/event-id.ts';
import { idKey } from '../../src/core/jsonrpc.ts';
import { decideResume } from '../../src/core/resume.ts';
import { createSessionSchema } from '../../src/session/schema.ts';
import { interruptOrphanedStreams } from '../../src/session/session-revival.ts';
import { SessionStore } from '../../src/session/session-store.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { relayed } from '../support/relay.ts';
import { streamOptions } from '../support/session-fixture.ts';
import { ENDED, SseReader, TIMED_OUT } from '../support/sse-reader.ts';

interface ModelStream {
  readonly n: number;
  readonly epoch: number;
  readonly kind: 'request' | 'standalone';
  readonly key?: string;
  state: 'open' | 'finished' | 'superseded';
  /** data of seq 1, 2, …; INTERRUPTED marks the error the revival appends. */
  readonly events: string[];
}

interface Client {
  readonly reader: SseReader;
  readonly stream: ModelStream;
  /** The seq the priming event names: the cursor. */
  readonly cursor: number;
  next: number;
  fenced: boolean;
  ended: boolean;
  /** The client left: it cancelled its body, or the instance died under it. */
  gone: boolean;
}

const INTERRUPTED = '<interrupted>';

class World {
  epoch = 1;
  readonly streams: ModelStream[] = [];
  standalone: ModelStream | undefined;
  readonly clients: Client[] = [];
  readonly accepted = new Map<string, number>();
  system: SessionStreams;
  readonly sessions: SessionStore;
  private counter = 0;

  constructor(
    readonly storage: DurableObjectStorage,
    readonly bufferBytes: number,
  ) {
    this.sessions = new SessionStore(storage.sql);
    this.system = this.newSystem();
  }

  newSystem(): SessionStreams {
    return new SessionStreams(this.storage, this.sessions, streamOptions({ connectionBufferBytes: this.bufferBytes }));
  }

  payload(): string {
    return JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { n: ++this.counter } });
  }

  liveClientOf(stream: ModelStream): Client | undefined {
    return this.clients.find((c) => c.stream === stream && !c.fenced && !c.ended);
  }

  /** Attaches like the session object does; the client that held the stream is fenced. */
  async attach(stream: ModelStream, afterSeq: number): Promise<void> {
    const holder = this.liveClientOf(stream);
    if (holder !== undefined) {
      await drain(holder);
      holder.fenced = true;
    }
    const record = this.system.log.stream(stream.n)!;
    const connection = this.system.attach(record, afterSeq, true);
    this.clients.push({
      reader: new SseReader(relayed(connection, { bufferBytes: this.bufferBytes })),
      stream,
      cursor: afterSeq,
      next: afterSeq + 1,
      fenced: false,
      ended: false,
      gone: false,
    });
  }

  async openStandalone(): Promise<void> {
    const previous = this.standalone;
    if (previous !== undefined) {
      const holder = this.liveClientOf(previous);
      if (holder !== undefined) await drain(holder);
      previous.state = 'superseded';
      if (holder !== undefined) holder.fenced = true;
    }
    const record = this.system.openStandalone(this.epoch, previous?.n ?? null);
    const stream: ModelStream = { n: record.stream, epoch: this.epoch, kind: 'standalone', state: 'open', events: [] };
    this.streams.push(stream);
    this.standalone = stream;
    const connection = this.system.attach(record, 0, true);
    this.clients.push({
      reader: new SseReader(relayed(connection, { bufferBytes: this.bufferBytes })),
      stream,
      cursor: 0,
      next: 1,
      fenced: false,
      ended: false,
      gone: false,
    });
  }
}

/** Reads what a client has been sent so far and checks it against the model. */
async function drain(client: Client): Promise<void> {
  while (!client.ended) {
    const event = await client.reader.next(0);
    if (event === TIMED_OUT) break;
    if (event === ENDED) {
      client.ended = true;
      break;
    }
    const id = parseEventId(event.id ?? '');
    expect(id, 'every event has an id of this server').toBeDefined();
    expect([id!.epoch, id!.stream], 'one stream identity per connection').toEqual([client.stream.epoch, client.stream.n]);
    if (event.data === '') {
      expect(id!.seq, 'the priming event names the cursor').toBe(client.cursor);
      continue;
    }
    expect(client.fenced, 'nothing reaches a fenced connection').toBe(false);
    expect(id!.seq, 'seqs continue the cursor without a gap').toBe(client.next);
    const expected = client.stream.events[id!.seq - 1];
    if (expected === INTERRUPTED) {
      expect(JSON.parse(event.data)).toMatchObject({ error: { data: { reason: 'request_interrupted' } } });
    } else {
      expect(event.data, 'the bytes that were stored').toBe(expected);
    }
    client.next++;
  }
}

async function drainAll(world: World): Promise<void> {
  for (const client of world.clients) await drain(client);
  for (const client of world.clients) {
    if (client.fenced) expect(client.ended, 'a fenced connection ends').toBe(true);
    if (!client.fenced && !client.gone) {
      expect(client.next - 1, 'a client that reads gets every event of its stream').toBe(client.stream.events.length);
    }
    if (client.stream.state !== 'open' && !client.fenced && client.next > client.stream.events.length) {
      expect(client.ended, 'a connection to a finished stream ends after its last event').toBe(true);
    }
  }
}

type Command = fc.AsyncCommand<object, World>;
const pick = <T>(items: readonly T[], index: number): T | undefined => (items.length === 0 ? undefined : items[index % items.length]);

class OpenCall implements Command {
  constructor(readonly id: number) {}
  check = () => true;
  async run(_m: object, world: World) {
    const key = idKey(this.id);
    // What the session object checks before running anything: has this id been used?
    if (world.system.log.requests.streamOf(key) !== undefined) {
      expect(world.accepted.has(key), 'only ids that were accepted are refused').toBe(true);
    } else {
      expect(world.accepted.has(key), 'an accepted id is never accepted again').toBe(false);
      world.accepted.set(key, 1);
      const record = world.system.openRequestStream(world.epoch, [key]);
      const stream: ModelStream = { n: record.stream, epoch: world.epoch, kind: 'request', key, state: 'open', events: [] };
      world.streams.push(stream);
      await world.attach(stream, 0);
    }
    await drainAll(world);
  }
  toString = () => `OpenCall(${this.id})`;
}

class Emit implements Command {
  constructor(readonly index: number) {}
  check = () => true;
  async run(_m: object, world: World) {
    const stream = pick(world.streams, this.index);
    if (stream === undefined) return;
    const data = world.payload();
    const stored = world.system.emit(stream.n, data);
    expect(stored, 'only an open stream takes events').toBe(stream.state === 'open');
    if (stored) stream.events.push(data);
    await drainAll(world);
  }
  toString = () => `Emit(${this.index})`;
}

class Finish implements Command {
  constructor(readonly index: number) {}
  check = () => true;
  async run(_m: object, world: World) {
    const stream = pick(
      world.streams.filter((s) => s.kind === 'request'),
      this.index,
    );
    if (stream === undefined) return;
    const data = JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(stream.key!), result: {} });
    const stored = world.system.emit(stream.n, data, stream.key);
    expect(stored).toBe(stream.state === 'open');
    if (stored) {
      stream.events.push(data);
      stream.state = 'finished';
    }
    await drainAll(world);
  }
  toString = () => `Finish(${this.index})`;
}

/** A reconnect: GET + Last-Event-ID with a cursor that may be valid, stale, ahead, or foreign. */
class Resume implements Command {
  constructor(
    readonly index: number,
    readonly seqShift: number,
    readonly wrongEpoch: boolean,
    readonly foreign: boolean,
  ) {}
  check = () => true;
  async run(_m: object, world: World) {
    const target = pick(world.streams, this.index);
    if (target === undefined) return;
    const streamNumber = this.foreign ? target.n + 1000 : target.n;
    const seq = Math.max(0, Math.min(target.events.length + 2, target.events.length - this.seqShift));
    const cursor = { epoch: this.wrongEpoch ? target.epoch + 1 : target.epoch, stream: streamNumber, seq };
    const verdict = decideResume(cursor, world.system.log.stream(cursor.stream));

    const last = target.events.length;
    const expected =
      this.foreign || this.wrongEpoch
        ? 'unknown_stream'
        : seq > last
          ? 'cursor_ahead'
          : target.state === 'superseded'
            ? 'stream_superseded'
            : target.state === 'open' || seq < last
              ? 'resume'
              : 'new-standalone';
    expect(verdict.kind === 'refuse' ? verdict.reason : verdict.kind, `verdict for ${formatEventId(cursor)}`).toBe(expected);

    if (verdict.kind === 'resume') await world.attach(target, verdict.afterSeq);
    if (verdict.kind === 'new-standalone') await world.openStandalone();
    await drainAll(world);
  }
  toString = () =>
    `Resume(${this.index}, shift ${this.seqShift}${this.wrongEpoch ? ', wrong epoch' : ''}${this.foreign ? ', foreign' : ''})`;
}

class NewStandalone implements Command {
  check = () => true;
  async run(_m: object, world: World) {
    await world.openStandalone();
    await drainAll(world);
  }
  toString = () => 'NewStandalone';
}

class Drop implements Command {
  constructor(readonly index: number) {}
  check = () => true;
  async run(_m: object, world: World) {
    const client = pick(
      world.clients.filter((c) => !c.ended && !c.fenced),
      this.index,
    );
    if (client === undefined) return;
    await drain(client);
    await client.reader.cancel();
    client.ended = true;
    client.gone = true;
    await drainAll(world);
  }
  toString = () => `Drop(${this.index})`;
}

/** The instance dies (its connections with it); a fresh one revives the session. */
class Restart implements Command {
  check = () => true;
  async run(_m: object, world: World) {
    for (const client of world.clients) await drain(client);
    // An instance stops between turns: a turn's writes commit, and its output leaves, when it
    // ends or not at all. So what the last turn held is stored, as its end stores it.
    await new Promise((resolve) => setTimeout(resolve, 0));
    world.system.closeAll();
    for (const client of world.clients) {
      const event = await client.reader.next(0);
      expect(event === ENDED || client.ended, 'connections die with the instance').toBe(true);
      client.ended = true;
      client.gone = true;
    }
    world.system = world.newSystem();
    const before = world.sessions.load()!;
    const orphaned = world.streams.filter((s) => s.kind === 'request' && s.state === 'open');
    const { record: after, interrupted } = interruptOrphanedStreams(world.storage, world.sessions, world.system, before);
    expect(interrupted, 'one interruption per open request stream here (one request each)').toBe(orphaned.length);
    if (orphaned.length > 0) {
      world.epoch++;
      expect(after.epoch, 'the epoch advances when calls were interrupted').toBe(world.epoch);
      for (const stream of orphaned) {
        stream.events.push(INTERRUPTED);
        stream.state = 'finished';
      }
    } else {
      expect(after.epoch).toBe(world.epoch);
    }
  }
  toString = () => 'Restart';
}

/** Cursors at the last event (shift 0) are the interesting boundary: weight them up. */
const resume = () =>
  fc
    .tuple(fc.nat(20), fc.oneof(fc.constant(0), fc.integer({ min: -2, max: 4 })), fc.nat(5))
    .map(([i, shift, oddity]) => new Resume(i, shift, oddity === 4, oddity === 5));

const commands = [
  fc.integer({ min: 1, max: 6 }).map((id) => new OpenCall(id)),
  fc.nat(20).map((i) => new Emit(i)),
  fc.nat(20).map((i) => new Emit(i)),
  fc.nat(20).map((i) => new Finish(i)),
  resume(),
  resume(),
  fc.constant(new NewStandalone()),
  fc.nat(20).map((i) => new Drop(i)),
  fc.constant(new Restart()),
];

/**
 * A connection's buffer: tiny ones make connections fall behind on nearly every event and
 * catch up from the log as the client reads; the default never fills here.
 */
const bufferBytes = () => fc.oneof(fc.integer({ min: 1, max: 400 }), fc.constant(1024 * 1024));

it('every client sees exactly one stream, gap-free; fenced connections get nothing; no id runs twice', async () => {
  const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(`property-${crypto.randomUUID()}`));
  await runInDurableObject(stub, async (_instance, state) => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 50, size: 'max' }), bufferBytes(), async (cmds, buffer) => {
        await state.storage.deleteAll();
        state.storage.transactionSync(() => {
          createSessionSchema(state.storage.sql);
          new SessionStore(state.storage.sql).create('2025-11-25', {}, '"initialize"', Date.now(), 1);
        });
        const world = new World(state.storage, buffer);
        try {
          await fc.asyncModelRun(() => ({ model: {}, real: world }), cmds);
        } finally {
          world.system.closeAll();
          for (const client of world.clients) await client.reader.cancel();
        }
      }),
      { numRuns: 100 },
    );
  });
}, 120_000);
