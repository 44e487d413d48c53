// Races (issue 18): RACE_ATTEMPTS (1,000) concurrent attach and resume attempts on the streams of
// one session, RACE_ROUNDS (3) times, each round a new session, against `wrangler dev` on loopback
// (port RACE_PORT, 8815). Each round: a standalone GET stream, RACE_CALLS (8) running calls
// streaming progress (every 5 ms and every 250 ms, alternately) and a finished call; then the
// storm, half at once and half spread over 400 ms so events fall between attachments: resumes of
// the running calls with cursors at every point they reached, GETs without a cursor, resumes of
// the first standalone stream (or 409 stream_superseded), replays of the finished call and its
// final-event cursor. Every connection is read to its end. What must hold, seen from the client:
// - every event a connection receives continues its cursor: the priming event at the cursor, then
//   seq + 1 each, never another stream's event (else a gap) and never one again (a duplicate);
// - a connection receives no event stored after the next attachment of its stream (fencing);
// - once events followed the storm (the calls go on, five are logged to the standalone stream),
//   each open stream has exactly one live connection — its last attachment — which received
//   them, and every other connection, on any stream, has ended.
// The order of attachments, and the last event of the stream at each, comes with each answer: the
// server is the fixture server stamped by test/fixture-server/race-entry.ts (recording only). With
// RACE_PLAIN=1 it is the fixture server itself, and a connection's fence is bounded from the
// client alone: by an attachment sent after its answer arrived, and the stream's last event
// (409 cursor_ahead names it) probed after that one's answer — coarse under load, as probes
// queue behind the storm. (test/session/attach-race.test.ts is the short variant.)
// Prints one line; exits 1 unless clean. Usage: node scripts/faults/race.mjs
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEventId } from '../../src/core/event-id.ts';
import { SseParser } from '../../src/core/sse-parser.ts';
import { seededRandom } from '../../test/support/seeded-random.ts';
import { withDevServer } from '../support/dev-server.mjs';
import { openRawSession } from '../support/raw-session.mjs';

// As `npm run conformance` runs wrangler: no metrics, no banner, its config kept in the repository.
process.env.WRANGLER_SEND_METRICS ??= 'false';
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false';
process.env.WRANGLER_HIDE_BANNER ??= 'true';
process.env.XDG_CONFIG_HOME ??= '.cache/xdg';

const port = Number(process.env.RACE_PORT ?? 8815);
const ATTEMPTS = Number(process.env.RACE_ATTEMPTS ?? 1000);
const ROUNDS = Number(process.env.RACE_ROUNDS ?? 3);
const CALLS = Number(process.env.RACE_CALLS ?? 8);
const SEED = Number(process.env.RACE_SEED ?? Date.now() % 2 ** 32);
const PLAIN = process.env.RACE_PLAIN === '1';
const SPREAD_MS = 400;
/** Fast streams race live events against attachments; on slow ones a plain-mode probe can land between two events. */
const INTERVALS = [5, 250];
const SETTLE_MS = 15_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition, ms) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(25);
  }
  return true;
}

const idOf = (text) => (text === undefined ? undefined : parseEventId(text));
const seqOf = (event) => idOf(event.id)?.seq ?? Number.NaN;

/** An SSE response read to its end in the background: its events, and whether it ended. */
function track(attempt, response, sentAt) {
  const resumed = response.headers.get('mcp-stream-resumed') === 'true';
  const stamp = (name) => (response.headers.has(name) ? Number(response.headers.get(name)) : undefined);
  const conn = {
    attempt,
    sentAt,
    answeredAt: performance.now(),
    stream: Number(response.headers.get('mcp-stream-id')),
    epoch: Number(response.headers.get('mcp-session-epoch')),
    resumed,
    order: stamp('x-race-attach'),
    attachedAtSeq: stamp('x-race-last-seq'),
    afterSeq: resumed ? attempt.seq : 0,
    events: [],
    ended: false,
    error: undefined,
    reader: response.body.getReader(),
  };
  conn.lastSeq = () => (conn.events.length > 0 ? seqOf(conn.events.at(-1)) : conn.afterSeq);
  void (async () => {
    const decoder = new TextDecoder();
    const parser = new SseParser(); // a heartbeat (a comment) makes no event
    try {
      for (;;) {
        const { done, value } = await conn.reader.read();
        if (done) break;
        for (const frame of parser.push(decoder.decode(value, { stream: true })))
          conn.events.push({ id: frame.id, data: frame.data ?? '' });
      }
    } catch (error) {
      conn.error = String(error);
    }
    conn.ended = true;
  })();
  return conn;
}

/** Every event continues the connection's cursor: a priming event at the cursor, then seq + 1 each, of its own stream. */
function continuity(conn, epoch) {
  let gaps = 0;
  let dups = 0;
  const [priming, ...rest] = conn.events;
  if (priming === undefined || priming.id !== `${epoch}-${conn.stream}-${conn.afterSeq}` || priming.data !== '') gaps++;
  let position = conn.afterSeq;
  for (const event of rest) {
    const id = idOf(event.id);
    if (id === undefined || id.epoch !== epoch || id.stream !== conn.stream || id.seq > position + 1) gaps++;
    else if (id.seq <= position) dups++;
    if (id?.stream === conn.stream) position = Math.max(position, id.seq);
  }
  return { gaps, dups };
}

async function openSession(url) {
  const raw = await openRawSession(url, 'race');
  const session = Object.assign(raw, {
    call: (id, name, args) =>
      session.post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: { progressToken: id } } }),
    /** A tool call whose own stream is not under test. */
    async fire(id, name, args) {
      const response = await session.call(id, name, args);
      await response.body?.cancel();
    },
    /** The stream's last event, from the refusal of a cursor beyond it; attaches nothing. */
    async lastSeq(epoch, stream) {
      const response = await session.get(`${epoch}-${stream}-999999999`);
      const body = await response.json();
      const match = /beyond the last event \((\d+)\)/.exec(body?.error?.message ?? '');
      if (response.status !== 409 || match === null)
        throw new Error(`probe of stream ${stream}: ${response.status} ${JSON.stringify(body)}`);
      return Number(match[1]);
    },
  });
  return session;
}

async function round(url, seed) {
  const session = await openSession(url);
  const conns = [];
  const problems = [];
  const timed = async (attempt, send) => {
    const sentAt = performance.now();
    return track(attempt, await send(), sentAt);
  };
  try {
    // The standalone stream with events at seqs 1..3, a finished call (seqs 0..6, its result
    // last), and the running calls.
    const standalone = await timed({ kind: 'original' }, () => session.get());
    const epoch = standalone.epoch;
    await session.fire('b0', 'broadcast', { count: 3, interval_ms: 0 });
    const finished = await timed({ kind: 'original' }, () => session.call('done', 'countdown', { from: 5, interval_ms: 0 }));
    const calls = [];
    for (let i = 0; i < CALLS; i++) {
      const interval_ms = INTERVALS[i % INTERVALS.length];
      calls.push(await timed({ kind: 'original' }, () => session.call(`call-${i}`, 'countdown', { from: 10_000, interval_ms })));
    }
    conns.push(standalone, finished, ...calls);
    const ready = await until(() => standalone.events.length >= 4 && finished.ended && calls.every((c) => c.events.length >= 6), 20_000);
    const finalSeq = 6;
    if (!ready || finished.lastSeq() !== finalSeq) throw new Error('the session did not get ready');
    // Logging on whichever standalone stream is current while the storm runs.
    await session.fire('b1', 'broadcast', { count: 200, interval_ms: 5 });

    const next = seededRandom(seed);
    const pick = (n) => Math.floor(next() * n);
    const storm = Array.from({ length: ATTEMPTS }, () => {
      const delayMs = next() < 0.5 ? 0 : Math.floor(next() * SPREAD_MS);
      const r = next();
      if (r < 0.6) {
        const call = calls[pick(CALLS)];
        return { kind: 'call', stream: call.stream, seq: pick(call.lastSeq() + 1), delayMs };
      }
      if (r < 0.75) return { kind: 'new', delayMs };
      if (r < 0.85) return { kind: 'resume-standalone', stream: standalone.stream, seq: pick(4), delayMs };
      if (r < 0.95) return { kind: 'replay-finished', stream: finished.stream, seq: pick(finalSeq), delayMs };
      return { kind: 'final-finished', stream: finished.stream, seq: finalSeq, delayMs };
    });

    // Plain mode: each resumed stream's last event, probed over and over while the storm runs.
    const probed = [...calls.map((c) => c.stream), standalone.stream];
    const probes = new Map(probed.map((stream) => [stream, []]));
    let probing = PLAIN;
    const probers = probed.map(async (stream) => {
      while (probing) {
        const sentAt = performance.now();
        probes.get(stream).push({ sentAt, seq: await session.lastSeq(epoch, stream) });
      }
    });

    const started = Date.now();
    await Promise.all(
      storm.map(async (attempt) => {
        if (attempt.delayMs > 0) await sleep(attempt.delayMs);
        const sentAt = performance.now();
        let response;
        try {
          response = await session.get(attempt.stream === undefined ? undefined : `${epoch}-${attempt.stream}-${attempt.seq}`);
        } catch (error) {
          problems.push(`${attempt.kind}: ${error}`);
          return;
        }
        if (response.status !== 200) {
          const body = await response.json().catch(() => undefined);
          const reason = body?.error?.data?.reason;
          if (!(attempt.kind === 'resume-standalone' && response.status === 409 && reason === 'stream_superseded'))
            problems.push(`${attempt.kind} ${attempt.seq ?? ''}: ${response.status} ${reason ?? JSON.stringify(body)}`);
          return;
        }
        const conn = track(attempt, response, sentAt);
        conns.push(conn);
        const resumed = attempt.kind === 'call' || attempt.kind === 'resume-standalone' || attempt.kind === 'replay-finished';
        const rightStream = resumed ? conn.stream === attempt.stream : conn.stream > finished.stream;
        if (conn.resumed !== resumed || !rightStream)
          problems.push(`${attempt.kind} ${attempt.seq ?? ''}: stream ${conn.stream}, resumed ${conn.resumed}`);
      }),
    );
    const stormMs = Date.now() - started;
    probing = false;
    await Promise.all(probers);

    // Each stream's connections, in the order the object attached them (plain: the order answered).
    const byStream = new Map();
    const key = (c) => (PLAIN ? c.answeredAt : c.order);
    for (const conn of [...conns].sort((a, b) => key(a) - key(b))) byStream.set(conn.stream, [...(byStream.get(conn.stream) ?? []), conn]);
    const isCall = (stream) => calls.some((c) => c.stream === stream);
    const current = Math.max(...[...byStream.keys()].filter((s) => s !== finished.stream && !isCall(s)));
    const open = [...calls.map((c) => c.stream), current];
    // Every attachment was made before its answer, so before this probe (plain mode's fence for all but the live one).
    const lastBefore = new Map(PLAIN ? await Promise.all(open.map(async (stream) => [stream, await session.lastSeq(epoch, stream)])) : []);

    // After the storm: the calls go on, and five events are logged to the standalone stream.
    await session.fire('b2', 'broadcast', { count: 5, interval_ms: 0 });
    const expectedLive = (stream) => (PLAIN ? undefined : byStream.get(stream).at(-1));
    const owed = (conn) => (PLAIN ? lastBefore.get(conn.stream) : conn.attachedAtSeq) + (conn.stream === current ? 5 : 1);
    const liveOn = (stream) => {
      const still = byStream.get(stream).filter((c) => !c.ended);
      const only = still.length === 1 ? still[0] : undefined;
      const expected = expectedLive(stream);
      return only !== undefined && (expected === undefined || only === expected) && only.lastSeq() >= owed(only) ? only : undefined;
    };
    const settled = await until(
      () => open.every((stream) => liveOn(stream) !== undefined) && conns.every((c) => c.ended || open.includes(c.stream)),
      SETTLE_MS,
    );
    const live = open.filter((stream) => liveOn(stream) !== undefined).length;
    if (!settled) problems.push(`not settled within ${SETTLE_MS} ms`);
    const elsewhere = conns.filter((c) => !c.ended && !open.includes(c.stream));
    if (elsewhere.length > 0) problems.push(`${elsewhere.length} connections still open on ended streams`);

    // Where each connection must have stopped: the last event its stream had when the next
    // attachment fenced it. Plain mode: an attachment D sent after C's answer arrived was made
    // after C's, so C had stopped by the first probe sent after D's answer arrived; and every
    // connection but the live one had stopped by the probe after the storm.
    const stopAt = new Map();
    for (const [stream, attached] of byStream) {
      for (const [i, conn] of attached.entries()) {
        if (!PLAIN) {
          if (i + 1 < attached.length) stopAt.set(conn, attached[i + 1].attachedAtSeq);
          continue;
        }
        const later = attached.filter((d) => d.sentAt > conn.answeredAt).map((d) => d.answeredAt);
        const probe = later.length > 0 ? probes.get(stream)?.find((p) => p.sentAt > Math.min(...later)) : undefined;
        const bounds = [probe?.seq, open.includes(stream) && conn !== liveOn(stream) ? lastBefore.get(stream) : undefined];
        const bound = Math.min(...bounds.filter((b) => b !== undefined));
        if (bound < Number.POSITIVE_INFINITY) stopAt.set(conn, bound);
      }
    }

    // The session ends, and every connection with it.
    await (await session.delete()).body?.cancel();
    if (!(await until(() => conns.every((c) => c.ended), SETTLE_MS)))
      problems.push(`${conns.filter((c) => !c.ended).length} connections still open after DELETE`);
    let fenced = 0;
    for (const [conn, seq] of stopAt) fenced += conn.events.filter((e) => seqOf(e) > seq).length;
    let gaps = 0;
    let dups = 0;
    for (const conn of conns) {
      const continued = continuity(conn, epoch);
      gaps += continued.gaps;
      dups += continued.dups;
      if (conn.error !== undefined) problems.push(`${conn.attempt.kind} on stream ${conn.stream}: ${conn.error}`);
      if (!PLAIN && !(Number.isSafeInteger(conn.order) && Number.isSafeInteger(conn.attachedAtSeq)))
        problems.push(`an answer on stream ${conn.stream} without its attachment stamp`);
    }
    const short = conns.filter((c) => c.attempt.kind === 'replay-finished' && c.lastSeq() !== finalSeq);
    if (short.length > 0) problems.push(`${short.length} replays of the finished call stopped short`);
    return { streams: open.length, live, fenced, gaps, dups, problems, stormMs, connections: conns.length, stopped: stopAt.size };
  } finally {
    await Promise.all(conns.map((c) => c.reader.cancel().catch(() => undefined)));
  }
}

/** The fixture server's config, its entry the stamped one (under .cache/, which git ignores). */
function stampedConfig() {
  const fixture = readFileSync('test/fixture-server/wrangler.toml', 'utf8');
  const entry = resolve('test/fixture-server/race-entry.ts');
  if (!/^main = "index.ts"$/m.test(fixture)) throw new Error('test/fixture-server/wrangler.toml: main is not "index.ts"');
  mkdirSync('.cache/race', { recursive: true });
  writeFileSync('.cache/race/wrangler.toml', fixture.replace(/^main = "index.ts"$/m, `main = ${JSON.stringify(entry)}`));
  return '.cache/race/wrangler.toml';
}

const started = Date.now();
const total = { attempts: 0, streams: 0, live: 0, fenced: 0, gaps: 0, dups: 0, problems: [] };
const notes = [];
await withDevServer(
  port,
  async (url) => {
    for (let r = 1; r <= ROUNDS; r++) {
      const result = await round(url, SEED + r);
      total.attempts += ATTEMPTS;
      for (const key of ['streams', 'live', 'fenced', 'gaps', 'dups']) total[key] += result[key];
      total.problems.push(...result.problems.map((p) => `round ${r}: ${p}`));
      notes.push(`round ${r}: answered in ${result.stormMs} ms, ${result.connections} connections, ${result.stopped} with a fence point`);
    }
  },
  // 1,000 attachments at once from one loopback address: no share of an isolate's streams per
  // address (MAX_STREAMS_PER_PRINCIPAL), which would refuse most of them 429.
  { ...(PLAIN ? {} : { config: stampedConfig() }), args: ['--var', 'MAX_STREAMS_PER_PRINCIPAL:0'] },
);
const clean = total.live === total.streams && total.fenced === 0 && total.gaps === 0 && total.dups === 0 && total.problems.length === 0;
console.log(
  `race: ${total.attempts} attempts on ${total.streams} streams, ${total.live} streams with one live attachment, ` +
    `${total.fenced} events after fencing, ${total.gaps} gaps, ${total.dups} duplicates`,
);
if (process.env.RACE_VERBOSE) console.log(`${PLAIN ? 'plain' : 'stamped'}; ${notes.join('; ')}; ${Date.now() - started} ms in all`);
if (!clean) {
  for (const problem of total.problems.slice(0, 20)) console.log(problem);
  console.log(`RACE_SEED=${SEED} repeats these storms`);
}
process.exit(clean ? 0 : 1);
