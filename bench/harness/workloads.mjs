// The workloads, each run identically against every peer through the one client (client.mjs).
// A workload returns one sample: { metrics: { key: number | null }, status?, raw }. A metric is
// null when it does not apply (a peer that cannot resume has no "lost" count) and `status` says why.
import { setTimeout as sleep } from 'node:timers/promises';
import { initialize, modernListen, modernRequest, now, responseTo } from './client.mjs';
import { median, percentile } from './stats.mjs';

export const SIZES = {
  full: {
    w1Calls: 300,
    w1Warmup: 10,
    w2Sessions: 16,
    w2Calls: 40,
    w3N: 5_000,
    w3Runs: 5,
    w4N: 2_000,
    w4AbortAt: 1_000,
    w4bN: 200,
    w4bWaitMs: 500,
    w5BigLog: 100_000,
    w5SmallLog: 1_000,
    w5Replay: 1_000,
    w5FillerCall: 1_000,
    w5Repeats: 3,
    w5RebuildAfterMs: 480_000,
    w6Sessions: 1_000,
    w6Batch: 50,
    w6SettleMs: 1_000,
    w7Sessions: 100,
    w7Batch: 20,
    w7IdleMs: 60_000,
    w7Listeners: 10,
    m1Calls: 300,
    m1Warmup: 10,
    m2Clients: 16,
    m2Calls: 40,
    m3Changes: 50,
    t1Tasks: 200,
    t1Warmup: 10,
    t2Gets: 300,
    t2Warmup: 10,
    /** How long a resumed stream may take to bring the result (W4, W4b, W5). */
    resumeTimeoutMs: 10_000,
  },
  quick: {
    w1Calls: 50,
    w1Warmup: 3,
    w2Sessions: 6,
    w2Calls: 8,
    w3N: 1_000,
    w3Runs: 2,
    w4N: 2_000,
    w4AbortAt: 1_000,
    w4bN: 200,
    w4bWaitMs: 500,
    w5BigLog: 4_000,
    w5SmallLog: 1_000,
    w5Replay: 1_000,
    w5FillerCall: 1_000,
    w5Repeats: 2,
    w5RebuildAfterMs: 480_000,
    w6Sessions: 50,
    w6Batch: 25,
    w6SettleMs: 300,
    w7Sessions: 10,
    w7Batch: 10,
    w7IdleMs: 60_000,
    w7Listeners: 3,
    m1Calls: 50,
    m1Warmup: 3,
    m2Clients: 6,
    m2Calls: 8,
    m3Changes: 10,
    t1Tasks: 30,
    t1Warmup: 3,
    t2Gets: 50,
    t2Warmup: 3,
    resumeTimeoutMs: 1_500,
  },
};

const CALL_TIMEOUT_MS = 30_000;
const LONG_CALL_TIMEOUT_MS = 120_000;

const isProgress = (event, token) =>
  event.message?.method === 'notifications/progress' && (token === undefined || event.message.params?.progressToken === token);
const tokenOf = (call) => `bench-${call.requestId}`;

/** Fails loudly when a call did not end in a successful tools/call result. */
function expectResult(call, what) {
  if (call.response?.result && !call.response.result.isError) return call;
  const why = call.response?.error ? JSON.stringify(call.response.error) : (call.error ?? `ended: ${call.end}, HTTP ${call.status}`);
  throw new Error(`${what}: no result (${why})`);
}

/** Runs `fn` on a fresh session and always ends the session afterwards (not timed). */
async function withSession(url, fn) {
  const session = await initialize(url);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

/** Runs `task(i)` for i in [0, count) with at most `width` at once. */
async function inBatches(count, width, task) {
  const results = [];
  for (let start = 0; start < count; start += width) {
    const batch = Array.from({ length: Math.min(width, count - start) }, (_, k) => task(start + k));
    results.push(...(await Promise.allSettled(batch)));
  }
  return results;
}

const w1 = {
  id: 'W1',
  title: `sequential tools/call echo in one session`,
  metrics: [
    { key: 'p50_ms', label: 'W1 echo p50 ms', better: 'lower' },
    { key: 'p99_ms', label: 'W1 echo p99 ms', better: 'lower' },
  ],
  /**
   * Every peer in one pass, call by call: one session each, and call i goes to every peer
   * (starting with a different one each time) before call i + 1 goes to any. Each peer's calls stay sequential, and a noisy stretch of
   * the machine lands on all of them alike; run one peer after another, the rounds of one run
   * put ours at 0.91–1.27× the durable floor. Returns a sample or an { error } per peer.
   */
  async runAcross({ peers, sizes }) {
    const open = [];
    const failed = new Map();
    for (const peer of peers) {
      try {
        open.push({ peer, session: await initialize(peer.url), latencies: [] });
      } catch (error) {
        failed.set(peer.name, error);
      }
    }
    try {
      for (let i = -sizes.w1Warmup; i < sizes.w1Calls; i++) {
        for (let k = 0; k < open.length; k++) {
          // Who goes first moves on with every call, so no peer always follows the same one.
          const { peer, session, latencies } = open[(((k + i) % open.length) + open.length) % open.length];
          if (failed.has(peer.name)) continue;
          try {
            const text = i < 0 ? `warmup ${-i}` : `hello ${i}`;
            const call = expectResult(await session.callTool('echo', { text }, { timeoutMs: CALL_TIMEOUT_MS }), 'W1 echo');
            if (i >= 0) latencies.push(call.tResponse - call.tSent);
          } catch (error) {
            failed.set(peer.name, error);
          }
        }
      }
    } finally {
      await Promise.allSettled(open.map(({ session }) => session.close()));
    }
    return Object.fromEntries(
      peers.map((peer) => {
        const error = failed.get(peer.name);
        if (error !== undefined) return [peer.name, { error }];
        const { latencies } = open.find((entry) => entry.peer === peer);
        return [
          peer.name,
          { metrics: { p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) }, raw: { latencies_ms: latencies } },
        ];
      }),
    );
  },
};

const w2 = {
  id: 'W2',
  title: 'concurrent sessions, each calling echo sequentially',
  metrics: [{ key: 'calls_per_s', label: 'W2 echo calls/s', better: 'higher' }],
  async run({ peer, sizes }) {
    const sessions = await Promise.all(Array.from({ length: sizes.w2Sessions }, () => initialize(peer.url)));
    try {
      const start = now();
      const perSession = await Promise.all(
        sessions.map(async (session, s) => {
          for (let i = 0; i < sizes.w2Calls; i++) {
            expectResult(await session.callTool('echo', { text: `s${s} c${i}` }, { timeoutMs: CALL_TIMEOUT_MS }), 'W2 echo');
          }
          return now() - start;
        }),
      );
      const wallMs = Math.max(...perSession);
      const calls = sizes.w2Sessions * sizes.w2Calls;
      return { metrics: { calls_per_s: calls / (wallMs / 1000) }, raw: { calls, wall_ms: wallMs, per_session_ms: perSession } };
    } finally {
      await Promise.all(sessions.map((session) => session.close()));
    }
  },
};

/** One progress{n} call in a fresh session: events/s to the last progress event, first-event ms. */
async function progressRun(url, sizes) {
  return withSession(url, async (session) => {
    const call = expectResult(await session.callTool('progress', { n: sizes.w3N }, { timeoutMs: LONG_CALL_TIMEOUT_MS }), 'W3 progress');
    const progress = call.events.filter((event) => isProgress(event, tokenOf(call)));
    if (progress.length !== sizes.w3N) throw new Error(`W3: ${progress.length} of ${sizes.w3N} progress events arrived`);
    const lastMs = progress.at(-1).t - call.tSent;
    return {
      eventsPerS: progress.length / (lastMs / 1000),
      firstMs: progress[0].t - call.tSent,
      lastMs,
      resultMs: call.tResponse - call.tSent,
      streamed: call.streamed,
    };
  });
}

const w3 = {
  id: 'W3',
  title: 'one call streaming progress notifications',
  metrics: [
    { key: 'events_per_s', label: 'W3 progress events/s', better: 'higher' },
    { key: 'first_event_ms', label: 'W3 first progress ms', better: 'lower' },
  ],
  /**
   * `w3Runs` runs per peer and round, alternating peers run by run (who goes first moves on),
   * each sample the median of its peer's runs. One run per peer and round, one peer after
   * another, gave the durable floor 33k–78k events/s within one full run, and ours 0.61–1.79×
   * of it round by round.
   */
  async runAcross({ peers, sizes }) {
    const runs = new Map(peers.map((peer) => [peer.name, []]));
    const failed = new Map();
    for (let i = 0; i < sizes.w3Runs; i++) {
      for (let k = 0; k < peers.length; k++) {
        const peer = peers[(k + i) % peers.length];
        if (failed.has(peer.name)) continue;
        try {
          runs.get(peer.name).push(await progressRun(peer.url, sizes));
        } catch (error) {
          failed.set(peer.name, error);
        }
      }
    }
    return Object.fromEntries(
      peers.map((peer) => {
        const error = failed.get(peer.name);
        if (error !== undefined) return [peer.name, { error }];
        const samples = runs.get(peer.name);
        return [
          peer.name,
          {
            metrics: { events_per_s: median(samples.map((r) => r.eventsPerS)), first_event_ms: median(samples.map((r) => r.firstMs)) },
            raw: { runs: samples },
          },
        ];
      }),
    );
  },
};

/** Why a resume could not be made or was refused, for the report. */
function cannotResume(resume) {
  if (resume === undefined) return 'cannot resume: no event id received';
  if (!resume.ok)
    return `cannot resume: ${resume.status ? `HTTP ${resume.status}` : (resume.error ?? resume.end)}${resume.body ? ` ${resume.body.slice(0, 120)}` : ''}`;
  return undefined;
}

const w4 = {
  id: 'W4',
  title: 'abort mid-stream, resume with Last-Event-ID',
  metrics: [
    { key: 'total_ms', label: 'W4 abort+resume total ms', better: 'lower' },
    { key: 'lost', label: 'W4 lost events', better: 'lower' },
    { key: 'duplicated', label: 'W4 duplicated events', better: 'lower' },
  ],
  async run({ peer, sizes }) {
    return withSession(peer.url, async (session) => {
      let seen = 0;
      const call = await session.callTool(
        'progress',
        { n: sizes.w4N },
        {
          timeoutMs: LONG_CALL_TIMEOUT_MS,
          stopAfter: (event, outcome) => isProgress(event, tokenOf(outcome)) && ++seen >= sizes.w4AbortAt,
        },
      );
      if (call.end !== 'stopped')
        throw new Error(`W4: the call was not cut after ${sizes.w4AbortAt} progress events (ended: ${call.end}, ${seen} seen)`);
      const token = tokenOf(call);
      const resume = call.lastEventId
        ? await session.resume(call.lastEventId, {
            timeoutMs: sizes.resumeTimeoutMs,
            until: (event) => responseTo(event.message, call.requestId) !== undefined,
          })
        : undefined;
      const refused = cannotResume(resume);
      const raw = {
        cursor: call.lastEventId ?? null,
        before_abort: seen,
        resume_status: resume?.status ?? null,
        resumed_header: resume?.resumed ?? null,
      };
      if (refused) return { metrics: { total_ms: null, lost: null, duplicated: null }, status: refused, raw };
      const counts = new Map();
      for (const event of [...call.events, ...resume.events]) {
        if (isProgress(event, token)) counts.set(event.message.params.progress, (counts.get(event.message.params.progress) ?? 0) + 1);
      }
      let lost = 0;
      let duplicated = 0;
      for (let k = 1; k <= sizes.w4N; k++) {
        const c = counts.get(k) ?? 0;
        if (c === 0) lost++;
        else duplicated += c - 1;
      }
      const answer = resume.events.find((event) => responseTo(event.message, call.requestId));
      raw.after_resume = resume.events.filter((event) => isProgress(event, token)).length;
      return {
        metrics: { total_ms: answer ? answer.t - call.tSent : null, lost, duplicated },
        status: answer ? undefined : `result did not arrive after resume (${resume.end})`,
        raw,
      };
    });
  },
};

const w4b = {
  id: 'W4b',
  title: 'abort right after the request, resume after the call finished',
  metrics: [{ key: 'result_arrived', label: 'W4b result after resume', better: 'higher', kind: 'yesno' }],
  async run({ peer, sizes }) {
    return withSession(peer.url, async (session) => {
      // Read nothing but the first SSE event (the priming event where the peer sends one): its id
      // is the only cursor a client that dropped at once can have.
      const call = await session.callTool('progress', { n: sizes.w4bN }, { timeoutMs: CALL_TIMEOUT_MS, stopAfter: () => true });
      const first = call.events[0];
      const raw = { first_event_id: first?.id ?? null, first_event_was_priming: first ? !first.hasData || first.data === '' : null };
      if (!call.streamed)
        return { metrics: { result_arrived: null }, status: `not applicable: answered without a stream (HTTP ${call.status})`, raw };
      if (call.end === 'response')
        return { metrics: { result_arrived: null }, status: 'not applicable: the result was the first event', raw };
      await sleep(sizes.w4bWaitMs);
      const resume = call.lastEventId
        ? await session.resume(call.lastEventId, {
            timeoutMs: sizes.resumeTimeoutMs,
            until: (event) => responseTo(event.message, call.requestId) !== undefined,
          })
        : undefined;
      const refused = cannotResume(resume);
      raw.resume_status = resume?.status ?? null;
      raw.resumed_header = resume?.resumed ?? null;
      if (refused) return { metrics: { result_arrived: 0 }, status: refused, raw };
      const answer = resume.events.find((event) => responseTo(event.message, call.requestId));
      raw.progress_after_resume = resume.events.filter((event) => isProgress(event, tokenOf(call))).length;
      return { metrics: { result_arrived: answer ? 1 : 0 }, status: answer ? undefined : `resumed (${resume.end}) but no result`, raw };
    });
  },
};

/**
 * W5 log: `fillerEvents` progress events from calls of progress{n: fillerCall}, then one target
 * call progress{n: replay + 1}. The cursor is the id received with the target's progress #1, so a
 * resume replays exactly `replay` progress events plus the result, whatever the log before it.
 */
async function buildLog(url, logEvents, sizes) {
  const session = await initialize(url);
  try {
    const started = now();
    for (let left = logEvents - sizes.w5Replay; left > 0; left -= sizes.w5FillerCall) {
      const n = Math.min(left, sizes.w5FillerCall);
      expectResult(await session.callTool('progress', { n }, { timeoutMs: LONG_CALL_TIMEOUT_MS }), 'W5 filler');
    }
    const target = expectResult(
      await session.callTool('progress', { n: sizes.w5Replay + 1 }, { timeoutMs: LONG_CALL_TIMEOUT_MS }),
      'W5 target',
    );
    const first = target.events.find((event) => isProgress(event, tokenOf(target)) && event.message.params.progress === 1);
    return { session, requestId: target.requestId, token: tokenOf(target), cursor: first?.id || undefined, build_ms: now() - started };
  } catch (error) {
    await session.close();
    throw error;
  }
}

async function replayMs(log, sizes) {
  if (!log.cursor) return { ms: null, status: 'cannot resume: no event id received' };
  const resume = await log.session.resume(log.cursor, {
    timeoutMs: sizes.resumeTimeoutMs,
    until: (event) => responseTo(event.message, log.requestId) !== undefined,
  });
  const refused = cannotResume(resume);
  if (refused) return { ms: null, status: refused };
  const answer = resume.events.find((event) => responseTo(event.message, log.requestId));
  const replayed = resume.events.filter((event) => isProgress(event, log.token)).length;
  if (!answer) return { ms: null, status: `replay ended (${resume.end}) without the result`, replayed };
  if (replayed !== sizes.w5Replay)
    return { ms: answer.t - resume.tSent, status: `replayed ${replayed} progress events, expected ${sizes.w5Replay}`, replayed };
  return { ms: answer.t - resume.tSent, replayed };
}

const w5 = {
  id: 'W5',
  title: 'replay cost: the last stream of a big log vs a whole small log',
  metrics: [
    { key: 'replay_big_ms', label: 'W5 replay 1k of big log ms', better: 'lower' },
    { key: 'replay_small_ms', label: 'W5 replay 1k of small log ms', better: 'lower' },
    { key: 'big_over_small', label: 'W5 big/small ratio', better: 'lower' },
  ],
  async run({ peer, sizes, state }) {
    // Logs are built once per peer (not timed) and rebuilt once older than w5RebuildAfterMs,
    // before a retention policy could prune them (ours keeps finished streams 10 min by default).
    if (!state.w5 || now() - state.w5.builtAt > sizes.w5RebuildAfterMs) {
      await w5.cleanup({ state });
      const small = await buildLog(peer.url, sizes.w5SmallLog, sizes);
      const big = await buildLog(peer.url, sizes.w5BigLog, sizes).catch(async (error) => {
        await small.session.close();
        throw error;
      });
      state.w5 = { small, big, builtAt: now() };
    }
    // Alternating replays of the same two cursors; the sample is the median of each. A failed
    // replay ends the repetitions (it would only fail again, each time after a timeout).
    const { small, big } = state.w5;
    const smallMs = [];
    const bigMs = [];
    const notes = new Set();
    let failed = false;
    for (let i = 0; i < sizes.w5Repeats && !failed; i++) {
      for (const [name, log, into] of [
        ['small', small, smallMs],
        ['big', big, bigMs],
      ]) {
        const replay = await replayMs(log, sizes);
        if (replay.status) notes.add(`${name}: ${replay.status}`);
        if (replay.ms != null) into.push(replay.ms);
        else failed = true;
      }
    }
    const bigMedian = median(bigMs) ?? null;
    const smallMedian = median(smallMs) ?? null;
    return {
      metrics: {
        replay_big_ms: bigMedian,
        replay_small_ms: smallMedian,
        big_over_small: bigMedian != null && smallMedian != null ? bigMedian / smallMedian : null,
      },
      status: [...notes].join('; ') || undefined,
      raw: {
        replay_small_ms: smallMs,
        replay_big_ms: bigMs,
        build_small_ms: small.build_ms,
        build_big_ms: big.build_ms,
        cursors: { small: small.cursor ?? null, big: big.cursor ?? null },
      },
    };
  },
  async cleanup({ state }) {
    if (!state.w5) return;
    await Promise.all([state.w5.small.session.close(), state.w5.big.session.close()]);
    state.w5 = undefined;
  },
};

const W6_DEADLINE_MS = 180_000;

const w6 = {
  id: 'W6',
  title: 'memory per idle session holding a GET SSE stream',
  // Only on a fresh peer: a process keeps (and reuses) memory freed by earlier sessions, so a
  // later round measures less than the sessions take. Peers start once, so: round 1, first.
  firstRoundOnly: true,
  metrics: [{ key: 'kb_per_session', label: 'W6 KB per session', better: 'lower' }],
  async run({ peer, sizes, memoryRss }) {
    const sessions = [];
    const streams = [];
    try {
      // One session and stream first, not counted: one-time costs (code loaded and compiled,
      // a Durable Object class set up) would otherwise be split over the sessions measured.
      const warmup = await withSession(peer.url, async (session) => {
        const stream = await session.openStream();
        stream.close();
        return stream;
      }).catch(() => undefined);
      // A definite refusal (e.g. 405: no standalone stream) would only repeat for every session.
      if (warmup && !warmup.ok && warmup.status >= 400 && warmup.status < 500) {
        return {
          metrics: { kb_per_session: null },
          status: `no stream held (GET stream: HTTP ${warmup.status})`,
          raw: { warmup_status: warmup.status },
        };
      }
      await sleep(sizes.w6SettleMs);
      const before = await memoryRss(peer);
      const deadline = now() + W6_DEADLINE_MS;
      let failed = 0;
      let firstError;
      let half;
      for (let opened = 0; opened < sizes.w6Sessions && now() < deadline; opened += sizes.w6Batch) {
        if (half === undefined && opened >= sizes.w6Sessions / 2) half = { held: streams.length, rss: await memoryRss(peer) };
        const heldBefore = streams.length;
        const results = await inBatches(Math.min(sizes.w6Batch, sizes.w6Sessions - opened), sizes.w6Batch, async () => {
          const session = await initialize(peer.url);
          sessions.push(session);
          const stream = await session.openStream();
          if (!stream.ok) throw new Error(`GET stream: HTTP ${stream.status}`);
          streams.push(stream);
        });
        for (const result of results) {
          if (result.status === 'rejected') {
            failed++;
            firstError ??= String(result.reason?.message ?? result.reason);
          }
        }
        if (streams.length === heldBefore) break; // a whole batch refused: the rest would be too
      }
      const held = streams.length;
      if (held === 0)
        return {
          metrics: { kb_per_session: null },
          status: `no stream held (${firstError})`,
          raw: { failed, first_error: firstError ?? null },
        };
      await sleep(sizes.w6SettleMs);
      const after = await memoryRss(peer);
      const raw = {
        sessions_held: held,
        failed,
        rss_before: before,
        rss_after: after,
        // The second half alone: less flattered by memory freed earlier and reused.
        kb_per_session_second_half: half && held > half.held ? (after - half.rss) / 1024 / (held - half.held) : null,
        first_error: firstError ?? null,
      };
      return {
        metrics: { kb_per_session: (after - before) / 1024 / held },
        status: held < sizes.w6Sessions ? `only ${held} of ${sizes.w6Sessions} streams held (${firstError ?? 'deadline'})` : undefined,
        raw,
      };
    } finally {
      for (const stream of streams) stream.close();
      await inBatches(sessions.length, sizes.w6Batch, (i) => sessions[i].close());
    }
  },
};

const W7_WARM_SAMPLES = 10;
const W7_EVENT_TIMEOUT_MS = 15_000;

/** A peer's counts of constructed session and bus objects (`ours` only: bench/peers/ours), or undefined. */
async function countsOf(peer) {
  try {
    const response = await fetch(new URL('/bench/instances', peer.url), { signal: AbortSignal.timeout(5_000) });
    return response.ok ? await response.json() : undefined;
  } catch {
    return undefined;
  }
}

const instancesOf = async (peer) => (await countsOf(peer))?.constructed;

/**
 * One session holding its standalone stream, and a way to time an event on it: `deliver`
 * POSTs the `notify` tool and resolves with the ms from the POST to the event's arrival.
 */
async function listeningSession(url) {
  const session = await initialize(url);
  const waiting = new Map();
  const stream = await session.openStream({
    onEvent: (event) => {
      const arrived = waiting.get(event.message?.params?.data);
      if (arrived !== undefined) arrived(event.t);
    },
  });
  const deliver = async (text) => {
    let timer;
    const arrival = new Promise((resolve, reject) => {
      waiting.set(text, resolve);
      timer = setTimeout(
        () => reject(new Error(`W7: the event "${text}" did not arrive within ${W7_EVENT_TIMEOUT_MS} ms`)),
        W7_EVENT_TIMEOUT_MS,
      );
    });
    const t0 = now();
    try {
      expectResult(await session.callTool('notify', { text }), 'W7 notify');
      return (await arrival) - t0;
    } finally {
      clearTimeout(timer);
      waiting.delete(text);
    }
  };
  return { session, stream, deliver };
}

const w7 = {
  id: 'W7',
  title: 'idle sessions holding a GET stream: objects resident after a minute, then one event each',
  // A minute of idleness per run: round 1 only, like W6.
  firstRoundOnly: true,
  metrics: [
    { key: 'resident_after_idle', label: 'W7 objects resident after 1 min idle', better: 'lower' },
    { key: 'event_after_idle_p50_ms', label: 'W7 event after idle p50 ms', better: 'lower' },
    { key: 'event_warm_p50_ms', label: 'W7 event warm p50 ms', better: 'lower' },
    { key: 'bus_resident_after_idle', label: 'W7 bus object resident after idle (listeners)', better: 'lower' },
    { key: 'listen_after_idle_ms', label: 'W7 listen notification after idle ms', better: 'lower' },
  ],
  async run({ peer, sizes, memoryRss }) {
    const none = (status) => ({
      metrics: {
        resident_after_idle: null,
        event_after_idle_p50_ms: null,
        event_warm_p50_ms: null,
        bus_resident_after_idle: null,
        listen_after_idle_ms: null,
      },
      status,
      raw: {},
    });
    if ((await instancesOf(peer)) === undefined) return none('no instance count and no notify tool (ours only)');
    const listeners = [];
    const listenStreams = [];
    try {
      // 2026-07-28 listen streams, idle through the same minute: does the bus object sleep too?
      const heard = [];
      for (let i = 0; i < sizes.w7Listeners; i++) {
        listenStreams.push(
          await modernListen(peer.url, (event) => {
            if (event.message?.method === 'notifications/tools/list_changed') heard.push(event.t);
          }),
        );
      }
      const rssBefore = await memoryRss(peer);
      const opened = await inBatches(sizes.w7Sessions, sizes.w7Batch, async () => {
        const listener = await listeningSession(peer.url);
        listeners.push(listener);
        if (!listener.stream.ok) throw new Error(`GET stream: HTTP ${listener.stream.status}`);
      });
      const refused = opened.find((result) => result.status === 'rejected');
      if (refused !== undefined) throw refused.reason;
      const warm = [];
      for (const listener of listeners.slice(0, W7_WARM_SAMPLES)) warm.push(await listener.deliver(`warm-${warm.length}`));
      const beforeIdle = await instancesOf(peer);
      await sleep(sizes.w7IdleMs);
      const rssIdle = await memoryRss(peer);
      const { constructed: afterIdle, busConstructed: busAfterIdle } = await countsOf(peer);
      // One change for every listener: the bus object, if it slept, is constructed anew.
      const t0 = now();
      await modernRequest(peer.url, 'tools/call', { name: 'changed', arguments: {} });
      for (let waited = 0; heard.length < listenStreams.length && waited < 5_000; waited += 10) await sleep(10);
      if (heard.length < listenStreams.length) throw new Error(`W7: ${heard.length} of ${listenStreams.length} listeners heard the change`);
      const listenAfterIdle = Math.max(...heard) - t0;
      const busWoken = (await countsOf(peer)).busConstructed - busAfterIdle;
      // One at a time, as the warm ones: concurrent calls on this 2-core machine would time the
      // queue, not the wake-up.
      const afterIdleEvents = [];
      for (const [i, listener] of listeners.entries()) afterIdleEvents.push(await listener.deliver(`idle-${i}`));
      // An object that hibernated during the minute is constructed again by the event's call.
      const woken = (await instancesOf(peer)) - afterIdle;
      return {
        metrics: {
          resident_after_idle: listeners.length - woken,
          event_after_idle_p50_ms: median(afterIdleEvents),
          event_warm_p50_ms: median(warm),
          bus_resident_after_idle: busWoken > 0 ? 0 : 1,
          listen_after_idle_ms: listenAfterIdle,
        },
        raw: {
          sessions: listeners.length,
          idle_ms: sizes.w7IdleMs,
          constructed_before_idle: beforeIdle,
          constructed_during_idle: afterIdle - beforeIdle,
          woken_by_event: woken,
          event_after_idle_ms: afterIdleEvents,
          event_warm_ms: warm,
          listeners: listenStreams.length,
          bus_constructed_by_the_change: busWoken,
          // Not a metric: a process that served other workloads keeps (and reuses) what they
          // freed, and local workerd keeps an evicted object's memory (bench/README.md, W6).
          rss_before: rssBefore,
          rss_idle: rssIdle,
        },
      };
    } finally {
      for (const listen of listenStreams) listen.close();
      for (const { stream } of listeners) stream.close();
      await inBatches(listeners.length, sizes.w7Batch, (i) => listeners[i].session.close());
    }
  },
};

/** Whether the peer serves 2026-07-28 (a `server/discover` answered with that revision). */
async function speaksModern(peer) {
  try {
    const { message } = await modernRequest(peer.url, 'server/discover');
    return message?.result?.supportedVersions?.includes('2026-07-28') === true;
  } catch {
    return false;
  }
}

async function modernEcho(peer) {
  const t0 = now();
  const { status, message } = await modernRequest(peer.url, 'tools/call', { name: 'echo', arguments: { text: 'hi' } });
  if (status !== 200 || message?.result?.content?.[0]?.text !== 'hi') throw new Error(`M echo: HTTP ${status} ${JSON.stringify(message)}`);
  return now() - t0;
}

const NOT_MODERN = 'does not serve 2026-07-28';

const m1 = {
  id: 'M1',
  title: 'sequential 2026-07-28 tools/call echo (no session)',
  metrics: [
    { key: 'p50_ms', label: 'M1 modern echo p50 ms', better: 'lower' },
    { key: 'p99_ms', label: 'M1 modern echo p99 ms', better: 'lower' },
  ],
  async run({ peer, sizes }) {
    if (!(await speaksModern(peer))) return { metrics: { p50_ms: null, p99_ms: null }, status: NOT_MODERN, raw: {} };
    for (let i = 0; i < sizes.m1Warmup; i++) await modernEcho(peer);
    const latencies = [];
    for (let i = 0; i < sizes.m1Calls; i++) latencies.push(await modernEcho(peer));
    return { metrics: { p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) }, raw: { latencies } };
  },
};

const m2 = {
  id: 'M2',
  title: '2026-07-28 echo calls, concurrent clients (each sequential)',
  metrics: [{ key: 'calls_per_s', label: 'M2 modern echo calls/s', better: 'higher' }],
  async run({ peer, sizes }) {
    if (!(await speaksModern(peer))) return { metrics: { calls_per_s: null }, status: NOT_MODERN, raw: {} };
    const t0 = now();
    await Promise.all(
      Array.from({ length: sizes.m2Clients }, async () => {
        for (let i = 0; i < sizes.m2Calls; i++) await modernEcho(peer);
      }),
    );
    const seconds = (now() - t0) / 1000;
    return { metrics: { calls_per_s: (sizes.m2Clients * sizes.m2Calls) / seconds }, raw: { seconds } };
  },
};

const m3 = {
  id: 'M3',
  title: 'a subscriptions/listen notification, from the call that causes it to the listener',
  metrics: [{ key: 'p50_ms', label: 'M3 listen notification p50 ms', better: 'lower' }],
  async run({ peer, sizes }) {
    if (!(await speaksModern(peer))) return { metrics: { p50_ms: null }, status: NOT_MODERN, raw: {} };
    let arrived;
    const listener = await modernListen(peer.url, (event) => {
      if (event.message?.method === 'notifications/tools/list_changed') arrived?.(event.t);
    });
    const latencies = [];
    try {
      for (let i = 0; i < sizes.m3Changes; i++) {
        const notified = new Promise((resolve, reject) => {
          arrived = resolve;
          setTimeout(() => reject(new Error('M3: no notification within 5 s')), 5_000);
        });
        const t0 = now();
        const { message } = await modernRequest(peer.url, 'tools/call', { name: 'changed', arguments: {} });
        if (message?.result === undefined) throw new Error(`M3: ${JSON.stringify(message)}`);
        latencies.push((await notified) - t0);
      }
    } finally {
      listener.close();
    }
    return { metrics: { p50_ms: median(latencies) }, raw: { latencies } };
  },
};

/** What a client declares to take tasks: the Tasks extension, in the request's client capabilities. */
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
/** How long one task may take to complete (T1, T2); polling stops there. */
const TASK_DEADLINE_MS = 10_000;
const NO_TASKS = 'does not serve tasks (tools/call work, declared, not answered with a task)';

/** `tools/call work` from a client that declared the extension: the CreateTaskResult, or a throw. */
async function createWorkTask(peer) {
  const { status, message } = await modernRequest(peer.url, 'tools/call', { name: 'work', arguments: {} }, { capabilities: TASKS });
  const task = message?.result;
  if (task?.resultType !== 'task' || typeof task.taskId !== 'string' || task.status !== 'working') {
    throw new Error(`tools/call work: HTTP ${status} ${JSON.stringify(message)?.slice(0, 300)}`);
  }
  return task;
}

/** One `tasks/get`: the task, or a throw if it is not this task or it ended other than completed. */
async function getTask(peer, taskId) {
  const { status, message } = await modernRequest(peer.url, 'tasks/get', { taskId }, { capabilities: TASKS });
  const task = message?.result;
  if (task?.taskId !== taskId || !['working', 'completed'].includes(task.status)) {
    throw new Error(`tasks/get: HTTP ${status} ${JSON.stringify(message)?.slice(0, 300)}`);
  }
  if (task.status === 'completed' && task.result?.content?.[0]?.text !== 'done') {
    throw new Error(`tasks/get: completed without the result: ${JSON.stringify(task).slice(0, 300)}`);
  }
  return task;
}

/** Polls `tasks/get` back to back, no sleep, until the task is completed (at most TASK_DEADLINE_MS): the polls it took. */
async function untilCompleted(peer, taskId) {
  const deadline = now() + TASK_DEADLINE_MS;
  for (let polls = 1; ; polls++) {
    if ((await getTask(peer, taskId)).status === 'completed') return polls;
    if (now() > deadline) throw new Error(`task ${taskId} not completed within ${TASK_DEADLINE_MS} ms (${polls} polls)`);
  }
}

/** The probe: a completed task's id, or undefined where tools/call work is not answered with a task. */
async function probeTasks(peer) {
  let task;
  try {
    task = await createWorkTask(peer);
  } catch {
    return undefined;
  }
  await untilCompleted(peer, task.taskId); // a task that never completes is an error, not "unserved"
  return task.taskId;
}

/**
 * What the peer's task objects have done so far (`ours`, `durable-floor`: GET /bench/tasks):
 * `{ rowsWritten, statements, objectRequests, constructed, … }`, or undefined.
 */
async function taskCountsOf(peer) {
  try {
    const response = await fetch(new URL('/bench/tasks', peer.url), { signal: AbortSignal.timeout(5_000) });
    return response.ok ? await response.json() : undefined;
  } catch {
    return undefined;
  }
}

/** (after − before) ÷ count for one counter, or null when the peer has no counts. */
const perEach = (before, after, key, count) =>
  Number.isFinite(before?.[key]) && Number.isFinite(after?.[key]) && count > 0 ? (after[key] - before[key]) / count : null;

/**
 * Runs `step(peer, entry, measured)` for every peer serving tasks, `warmup + count` times, all
 * peers interleaved step by step (who goes first moves on with every step), as W1 does. Peers
 * that do not serve tasks get `none`, peers that fail get { error }; the rest, `finish(entry)`.
 */
async function acrossTaskPeers(peers, { warmup, count, prepare, step, finish, none }) {
  const open = [];
  const results = {};
  for (const peer of peers) {
    try {
      const taskId = await probeTasks(peer);
      if (taskId === undefined) results[peer.name] = none;
      else open.push({ peer, taskId, latencies: [], countsBefore: undefined, ...prepare?.() });
    } catch (error) {
      results[peer.name] = { error };
    }
  }
  for (const entry of open) entry.countsBefore = await taskCountsOf(entry.peer);
  const failed = new Map();
  for (let i = -warmup; i < count; i++) {
    for (let k = 0; k < open.length; k++) {
      const entry = open[(((k + i) % open.length) + open.length) % open.length];
      if (failed.has(entry.peer.name)) continue;
      try {
        await step(entry.peer, entry, i >= 0);
      } catch (error) {
        failed.set(entry.peer.name, error);
      }
    }
  }
  for (const entry of open) {
    const error = failed.get(entry.peer.name);
    results[entry.peer.name] = error !== undefined ? { error } : finish(entry, await taskCountsOf(entry.peer), warmup + count);
  }
  return results;
}

const t1 = {
  id: 'T1',
  title: 'task create → completed, trivial tool (2026-07-28, Tasks extension)',
  metrics: [
    { key: 'p50_ms', label: 'T1 task create → completed p50 ms', better: 'lower' },
    { key: 'p99_ms', label: 'T1 task create → completed p99 ms', better: 'lower' },
    { key: 'create_p50_ms', label: 'T1 tools/call → CreateTaskResult p50 ms', better: 'lower' },
    { key: 'gets_p50', label: 'T1 tasks/get per task, p50', better: 'lower' },
    { key: 'rows_written_per_task', label: 'T1 SQLite rows written per task', better: 'lower' },
  ],
  /**
   * Task by task, peers interleaved: `tools/call work` (declared) → task id, then `tasks/get`
   * back to back until `completed`; the latency runs from sending the call to receiving the
   * completed answer.
   */
  async runAcross({ peers, sizes }) {
    return acrossTaskPeers(peers, {
      warmup: sizes.t1Warmup,
      count: sizes.t1Tasks,
      prepare: () => ({ creates: [], gets: [] }),
      async step(peer, entry, measured) {
        const t0 = now();
        const { taskId } = await createWorkTask(peer);
        const created = now() - t0;
        const polls = await untilCompleted(peer, taskId);
        if (!measured) return;
        entry.latencies.push(now() - t0);
        entry.creates.push(created);
        entry.gets.push(polls);
      },
      finish: ({ latencies, creates, gets, countsBefore }, countsAfter, tasks) => ({
        metrics: {
          p50_ms: percentile(latencies, 50),
          p99_ms: percentile(latencies, 99),
          create_p50_ms: percentile(creates, 50),
          gets_p50: percentile(gets, 50),
          rows_written_per_task: perEach(countsBefore, countsAfter, 'rowsWritten', tasks),
        },
        raw: {
          latencies_ms: latencies,
          create_ms: creates,
          gets_per_task: gets,
          tasks,
          statements_per_task: perEach(countsBefore, countsAfter, 'statements', tasks),
          object_requests_per_task: perEach(countsBefore, countsAfter, 'objectRequests', tasks),
          objects_constructed_per_task: perEach(countsBefore, countsAfter, 'constructed', tasks),
          counts_before: countsBefore ?? null,
          counts_after: countsAfter ?? null,
        },
      }),
      none: {
        metrics: { p50_ms: null, p99_ms: null, create_p50_ms: null, gets_p50: null, rows_written_per_task: null },
        status: NO_TASKS,
        raw: {},
      },
    });
  },
};

const t2 = {
  id: 'T2',
  title: 'tasks/get of a completed task (2026-07-28, Tasks extension)',
  metrics: [
    { key: 'p50_ms', label: 'T2 tasks/get p50 ms', better: 'lower' },
    { key: 'p99_ms', label: 'T2 tasks/get p99 ms', better: 'lower' },
    { key: 'rows_written_per_get', label: 'T2 SQLite rows written per tasks/get', better: 'lower' },
    { key: 'object_requests_per_get', label: 'T2 task-object requests per tasks/get', better: 'lower' },
  ],
  /** One task per peer, created and awaited until completed (the probe), then `tasks/get` on it, peers interleaved get by get. */
  async runAcross({ peers, sizes }) {
    return acrossTaskPeers(peers, {
      warmup: sizes.t2Warmup,
      count: sizes.t2Gets,
      async step(peer, entry, measured) {
        const t0 = now();
        if ((await getTask(peer, entry.taskId)).status !== 'completed') throw new Error('T2: a completed task read as not completed');
        if (measured) entry.latencies.push(now() - t0);
      },
      finish: ({ latencies, countsBefore }, countsAfter, gets) => ({
        metrics: {
          p50_ms: percentile(latencies, 50),
          p99_ms: percentile(latencies, 99),
          rows_written_per_get: perEach(countsBefore, countsAfter, 'rowsWritten', gets),
          object_requests_per_get: perEach(countsBefore, countsAfter, 'objectRequests', gets),
        },
        raw: {
          latencies_ms: latencies,
          gets,
          statements_per_get: perEach(countsBefore, countsAfter, 'statements', gets),
          objects_constructed: perEach(countsBefore, countsAfter, 'constructed', 1),
          counts_before: countsBefore ?? null,
          counts_after: countsAfter ?? null,
        },
      }),
      none: {
        metrics: { p50_ms: null, p99_ms: null, rows_written_per_get: null, object_requests_per_get: null },
        status: NO_TASKS,
        raw: {},
      },
    });
  },
};

// W6 first: in round 1 it meets a fresh peer (see firstRoundOnly). W7 last: its idle minute
// should follow the load of the others, as a quiet hour follows a busy one.
export const WORKLOADS = [w6, w1, w2, w3, w4, w4b, w5, m1, m2, m3, t1, t2, w7];
