/**
 * Races (issue 18): many attach and resume attempts at once on the streams of one session —
 * the standalone GET stream and the request streams of running calls, with cursors at every
 * valid point, GETs without a cursor, replays of a finished call and its final-event cursor —
 * end with exactly one live attachment per open stream, and no event reaches a connection after
 * a newer attachment of its stream fenced it. (The full run, 1,000 at a time against `wrangler
 * dev`: scripts/faults/race.mjs.)
 *
 * Observed from the client: the SSE bytes each connection received (every event continues its
 * cursor, no gap, no duplicate, never another stream's), the order in which the object attached
 * them and the last event stored at each attachment (stamped on each answer by
 * test/support/attach-order.ts: a connection must stop where the next attachment of its stream
 * found the log), which connections are still open once the storm is over, and that events
 * emitted after it reach the one live connection of each stream. Inside the object: its open
 * relay sockets, one per open stream (`runInDurableObject`, as hibernation.test.ts counts them).
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventId } from '../../src/core/event-id.ts';
import { ATTACH_HEADER, LAST_SEQ_HEADER, stampAttachOrder } from '../support/attach-order.ts';
import { callTool, errorOf, openSession, type Session } from '../support/mcp-http.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { ENDED, SseReader, TIMED_OUT, type ReadEvent } from '../support/sse-reader.ts';

const ATTEMPTS = 200;
const CALLS = 4;
const SEED = 0x5eed_0018;
/** Half the attempts start at once, half spread over this long, so events fall between attachments. */
const SPREAD_MS = 400;

let unstamp: () => void;
beforeAll(() => {
  unstamp = stampAttachOrder();
});
afterAll(() => unstamp());

type Kind = 'original' | 'call' | 'new' | 'resume-standalone' | 'replay-finished' | 'final-finished';

interface Attempt {
  readonly kind: Kind;
  /** The stream the cursor names, and its seq; none for a GET without a cursor. */
  readonly stream?: number;
  readonly seq?: number;
  readonly delayMs?: number;
}

/** One SSE response, read to its end in the background. */
interface Conn {
  readonly attempt: Attempt;
  readonly epoch: number;
  readonly stream: number;
  readonly resumed: boolean;
  /** Its place in the object's order of attachments, and the stream's last event then. */
  readonly order: number;
  readonly attachedAtSeq: number;
  /** Its cursor: its priming event's seq, and the one its first event follows. */
  readonly afterSeq: number;
  readonly events: ReadEvent[];
  ended: boolean;
  readonly reader: SseReader;
}

interface Answer {
  readonly attempt: Attempt;
  readonly conn?: Conn;
  readonly refused?: Awaited<ReturnType<typeof errorOf>>;
}

function track(attempt: Attempt, response: Response): Conn {
  const reader = new SseReader(response);
  const resumed = response.headers.get('Mcp-Stream-Resumed') === 'true';
  const conn: Conn = {
    attempt,
    epoch: Number(response.headers.get('Mcp-Session-Epoch')),
    stream: Number(response.headers.get('Mcp-Stream-Id')),
    resumed,
    order: Number(response.headers.get(ATTACH_HEADER) ?? Number.NaN),
    attachedAtSeq: Number(response.headers.get(LAST_SEQ_HEADER) ?? Number.NaN),
    afterSeq: resumed ? attempt.seq! : 0,
    events: [],
    ended: false,
    reader,
  };
  void (async () => {
    for (;;) {
      const event = await reader.next(30_000);
      if (event === ENDED) break;
      if (event !== TIMED_OUT) conn.events.push(event);
    }
    conn.ended = true;
  })();
  return conn;
}

const seqOf = (event: ReadEvent) => parseEventId(event.id ?? '')?.seq ?? Number.NaN;
const lastSeqOf = (conn: Conn) => (conn.events.length > 0 ? seqOf(conn.events.at(-1)!) : conn.afterSeq);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** Every event continues the connection's cursor: a priming event at the cursor, then seq + 1 each, of its own stream. */
function continuity(conn: Conn): { gaps: number; dups: number } {
  let gaps = 0;
  let dups = 0;
  const [priming, ...rest] = conn.events;
  if (priming === undefined || priming.id !== `${conn.epoch}-${conn.stream}-${conn.afterSeq}` || priming.data !== '') gaps++;
  let position = conn.afterSeq;
  for (const event of rest) {
    const id = parseEventId(event.id ?? '');
    if (id === undefined || id.epoch !== conn.epoch || id.stream !== conn.stream || id.seq > position + 1) gaps++;
    else if (id.seq <= position) dups++;
    if (id?.stream === conn.stream) position = Math.max(position, id.seq);
  }
  return { gaps, dups };
}

const countdown = (id: string) => callTool(id, 'countdown', { from: 10_000, interval_ms: 2 }, { progressToken: id });
const broadcast = (id: string, count: number, interval_ms: number) => callTool(id, 'broadcast', { count, interval_ms });
const stubOf = (session: Session) => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));

describe(`${ATTEMPTS} concurrent attach and resume attempts on one session's streams`, () => {
  it('leave exactly one live attachment per open stream, and no event reaches a connection after it was fenced', async () => {
    const session = await openSession();
    const conns: Conn[] = [];
    try {
      // The standalone stream, with events at seqs 1..3 to resume from.
      const standalone = track({ kind: 'original' }, await session.get());
      await (await session.post(broadcast('b0', 3, 0))).body?.cancel();
      // A finished call: seqs 0..6, its result last.
      const finished = track(
        { kind: 'original' },
        await session.post(callTool('done', 'countdown', { from: 5, interval_ms: 0 }, { progressToken: 'done' })),
      );
      // Running calls, streaming progress every 2 ms.
      const calls: Conn[] = [];
      for (let i = 0; i < CALLS; i++) calls.push(track({ kind: 'original' }, await session.post(countdown(`call-${i}`))));
      conns.push(standalone, finished, ...calls);
      const ready = () => standalone.events.length >= 4 && finished.ended && calls.every((c) => c.events.length >= 8);
      expect(await until(ready, 10_000)).toBe(true);
      const finalSeq = 6;
      expect(lastSeqOf(finished)).toBe(finalSeq);
      // A background task logging on whichever standalone stream is current while the storm runs.
      await (await session.post(broadcast('b1', 100, 5))).body?.cancel();

      const next = seededRandom(SEED);
      const pick = (n: number) => Math.floor(next() * n);
      const storm = Array.from({ length: ATTEMPTS }, (): Attempt => {
        const delayMs = next() < 0.5 ? 0 : Math.floor(next() * SPREAD_MS);
        const r = next();
        if (r < 0.6) {
          const call = calls[pick(CALLS)]!;
          return { kind: 'call', stream: call.stream, seq: pick(lastSeqOf(call) + 1), delayMs };
        }
        if (r < 0.75) return { kind: 'new', delayMs };
        if (r < 0.85) return { kind: 'resume-standalone', stream: standalone.stream, seq: pick(4), delayMs };
        if (r < 0.95) return { kind: 'replay-finished', stream: finished.stream, seq: pick(finalSeq), delayMs };
        return { kind: 'final-finished', stream: finished.stream, seq: finalSeq, delayMs };
      });
      const started = Date.now();
      const answers = await Promise.all(
        storm.map(async (attempt, i): Promise<Answer> => {
          if (attempt.delayMs) await sleep(attempt.delayMs);
          // Many clients of the one (anonymous) principal, each from its own address: one alone
          // would meet its share of the isolate's streams (MAX_STREAMS_PER_PRINCIPAL, 100).
          const client = { 'CF-Connecting-IP': `198.51.100.${i % 200}` };
          const cursor = attempt.stream === undefined ? undefined : session.eventId(attempt.stream, attempt.seq!);
          const response = await session.get(cursor, client);
          if (response.status !== 200) return { attempt, refused: await errorOf(response) };
          const conn = track(attempt, response);
          conns.push(conn);
          return { attempt, conn };
        }),
      );
      const stormMs = Date.now() - started;

      // Every cursor was valid: only a superseded standalone stream may refuse.
      const unexpected = answers.flatMap(({ attempt, conn, refused }): unknown[] => {
        if (refused !== undefined) {
          return attempt.kind === 'resume-standalone' && refused.reason === 'stream_superseded' ? [] : [{ attempt, refused }];
        }
        const resumed = attempt.kind === 'call' || attempt.kind === 'resume-standalone' || attempt.kind === 'replay-finished';
        const rightStream = resumed ? conn!.stream === attempt.stream : conn!.stream > finished.stream;
        return conn!.resumed === resumed && rightStream ? [] : [{ attempt, got: { stream: conn!.stream, resumed: conn!.resumed } }];
      });
      expect(unexpected).toEqual([]);

      // Each stream's connections in the order the object attached them.
      const byStream = new Map<number, Conn[]>();
      for (const conn of [...conns].sort((a, b) => a.order - b.order))
        byStream.set(conn.stream, [...(byStream.get(conn.stream) ?? []), conn]);
      const current = Math.max(...[...byStream.keys()].filter((s) => s !== finished.stream && !calls.some((c) => c.stream === s)));
      const open = [...calls.map((c) => c.stream), current];
      const survivors = new Set(open.map((stream) => byStream.get(stream)!.at(-1)!));

      // After the storm: the calls go on, and five events are logged to the standalone stream.
      // They reach each open stream's last attachment, and every other connection has ended.
      await (await session.post(broadcast('b2', 5, 0))).body?.cancel();
      const settled = await until(
        () =>
          conns.every((c) => c.ended !== survivors.has(c)) &&
          [...survivors].every((c) => lastSeqOf(c) >= c.attachedAtSeq + (c.stream === current ? 5 : 1)),
        5_000,
      );
      const live = new Map<number, number>();
      for (const conn of conns) if (!conn.ended) live.set(conn.stream, (live.get(conn.stream) ?? 0) + 1);
      // Inside the object: one open relay socket per open stream, none for any other.
      let sockets = new Map<string, number>();
      const expectedSockets = Object.fromEntries(open.map((s) => [`stream:${s}`, 1]));
      for (let tries = 0; tries < 50; tries++) {
        sockets = await runInDurableObject(stubOf(session), (_instance, state) => {
          const counts = new Map<string, number>();
          for (const socket of state.getWebSockets()) for (const tag of state.getTags(socket)) counts.set(tag, (counts.get(tag) ?? 0) + 1);
          return counts;
        });
        if (
          JSON.stringify(Object.fromEntries([...sockets].sort())) ===
          JSON.stringify(Object.fromEntries(Object.entries(expectedSockets).sort()))
        )
          break;
        await sleep(50);
      }

      // The session ends, and every connection with it.
      expect((await session.delete()).status).toBe(204);
      await until(() => conns.every((c) => c.ended), 5_000);
      const openAfterDelete = conns.filter((c) => !c.ended).length;

      let fenced = 0;
      let tookLive = 0;
      let gaps = 0;
      let dups = 0;
      for (const [, attached] of byStream) {
        for (const [i, conn] of attached.entries()) {
          const continued = continuity(conn);
          gaps += continued.gaps;
          dups += continued.dups;
          // Fenced by the next attachment of its stream: nothing stored after that moment reaches it.
          const fencedBy = attached[i + 1];
          if (fencedBy === undefined) continue;
          fenced += conn.events.filter((e) => seqOf(e) > fencedBy.attachedAtSeq).length;
          if (conn.attempt.kind !== 'original' && lastSeqOf(conn) > conn.attachedAtSeq) tookLive++;
        }
      }
      // A replay of the finished call is all of it after the cursor, then the end.
      const shortReplays = conns.filter((c) => c.attempt.kind === 'replay-finished' && lastSeqOf(c) !== finalSeq).length;

      expect({
        settled,
        openAfterDelete,
        streams: open.length,
        live: open.filter((s) => live.get(s) === 1).length,
        liveElsewhere: [...live.keys()].filter((s) => !open.includes(s)),
        sockets: Object.fromEntries(sockets),
        fenced,
        gaps,
        dups,
        shortReplays,
        stamped: conns.every((c) => Number.isSafeInteger(c.order) && Number.isSafeInteger(c.attachedAtSeq)),
      }).toEqual({
        settled: true,
        openAfterDelete: 0,
        streams: CALLS + 1,
        live: CALLS + 1,
        liveElsewhere: [],
        sockets: expectedSockets,
        fenced: 0,
        gaps: 0,
        dups: 0,
        shortReplays: 0,
        stamped: true,
      });
      // The race was real: most attempts resumed running calls, and some of the storm's
      // connections were fenced after taking live events.
      expect(conns.filter((c) => c.attempt.kind === 'call').length).toBeGreaterThan(ATTEMPTS / 2);
      expect(tookLive).toBeGreaterThanOrEqual(10);
      console.log(
        `attach race: ${ATTEMPTS} attempts answered in ${stormMs} ms, ${answers.filter((a) => a.refused).length} refused ` +
          `stream_superseded; ${conns.length} connections, ${tookLive} fenced after taking live events`,
      );
    } finally {
      await Promise.all(conns.map((c) => c.reader.cancel()));
    }
  }, 60_000);
});
