// The workloads, each run identically against every peer through the one client (client.mjs).
// A workload returns one sample: { metrics: { key: number | null }, status?, raw }. A metric is
// null when it does not apply (a peer that cannot resume has no "lost" count) and `status` says why.
import { setTimeout as sleep } from 'node:timers/promises';
import { perOperation, perUnit } from '../billing.mjs';
import { initialize, modernListen, modernRequest, modernTaskStream, now, responseTo } from '../client.mjs';
import { median, percentile } from '../stats.mjs';
import { residentAfterIdle, streamFigures, taskEventsOf, timelineProblems } from '../task-stream.mjs';

export const SIZES = {
  full: {
    w0Sessions: 200,
    w0Warmup: 10,
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
    b1Sessions: 20,
    b1Calls: 50,
    b1ProgressN: 1_000,
    b1ProgressCalls: 5,
    b1Tasks: 20,
    b1IdleMs: 60_000,
    t4Tasks: 50,
    t4Warm: 5,
    t4Batch: 10,
    t4IdleMs: 60_000,
    /** How long a resumed stream may take to bring the result (W4, W4b, W5). */
    resumeTimeoutMs: 10_000,
  },
  quick: {
    w0Sessions: 30,
    w0Warmup: 3,
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
    b1Sessions: 5,
    b1Calls: 10,
    b1ProgressN: 1_000,
    b1ProgressCalls: 2,
    b1Tasks: 5,
    b1IdleMs: 60_000,
    t4Tasks: 10,
    t4Warm: 3,
    t4Batch: 10,
    t4IdleMs: 60_000,
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

/**
 * Runs `step(peer, i)` for i in [-warmup, count) on every peer, call by call: step i goes to
 * every peer (the first one changing with each i) before step i + 1 goes to any. A peer whose
 * step throws is left out from then on (its error is returned in `failed`).
 */
async function interleaved(peers, warmup, count, step) {
  const failed = new Map();
  for (let i = -warmup; i < count; i++) {
    for (let k = 0; k < peers.length; k++) {
      const peer = peers[(((k + i) % peers.length) + peers.length) % peers.length];
      if (failed.has(peer.name)) continue;
      try {
        await step(peer, i);
      } catch (error) {
        failed.set(peer.name, error);
      }
    }
  }
  return failed;
}

const w0 = {
  id: 'W0',
  title: 'a new session each time: initialize, notifications/initialized, the first echo call',
  metrics: [
    { key: 'echo_p50_ms', label: 'W0 first echo of a new session p50 ms', better: 'lower' },
    { key: 'echo_p99_ms', label: 'W0 first echo of a new session p99 ms', better: 'lower' },
    { key: 'sequence_p50_ms', label: 'W0 initialize → first echo answered p50 ms', better: 'lower' },
    { key: 'sequence_p99_ms', label: 'W0 initialize → first echo answered p99 ms', better: 'lower' },
  ],
  /**
   * What a client that connects, calls once and leaves waits for, peers interleaved sequence by
   * sequence as W1 interleaves calls. The session is ended (DELETE, not timed) before the next.
   */
  async runAcross({ peers, sizes }) {
    const samples = new Map(peers.map((peer) => [peer.name, { echo: [], sequence: [] }]));
    const failed = await interleaved(peers, sizes.w0Warmup, sizes.w0Sessions, async (peer, i) => {
      const t0 = now();
      const session = await initialize(peer.url);
      try {
        const call = expectResult(await session.callTool('echo', { text: `first ${i}` }, { timeoutMs: CALL_TIMEOUT_MS }), 'W0 echo');
        if (i < 0) return;
        samples.get(peer.name).echo.push(call.tResponse - call.tSent);
        samples.get(peer.name).sequence.push(call.tResponse - t0);
      } finally {
        await session.close();
      }
    });
    return Object.fromEntries(
      peers.map((peer) => {
        const error = failed.get(peer.name);
        if (error !== undefined) return [peer.name, { error }];
        const { echo, sequence } = samples.get(peer.name);
        return [
          peer.name,
          {
            metrics: {
              echo_p50_ms: percentile(echo, 50),
              echo_p99_ms: percentile(echo, 99),
              sequence_p50_ms: percentile(sequence, 50),
              sequence_p99_ms: percentile(sequence, 99),
            },
            raw: { echo_ms: echo, sequence_ms: sequence },
          },
        ];
      }),
    );
  },
};

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

/** `tools/call name` from a client that declared `capabilities` (the extension at least): the CreateTaskResult, or a throw. */
async function createTask(peer, name, args = {}, capabilities = TASKS) {
  const { status, message } = await modernRequest(
    peer.url,
    'tools/call',
    { name, arguments: args },
    { capabilities, timeoutMs: LONG_CALL_TIMEOUT_MS },
  );
  const task = message?.result;
  if (task?.resultType !== 'task' || typeof task.taskId !== 'string' || task.status !== 'working') {
    throw new Error(`tools/call ${name}: HTTP ${status} ${JSON.stringify(message)?.slice(0, 300)}`);
  }
  return task;
}

/** `tools/call work` from a client that declared the extension: the CreateTaskResult, or a throw. */
const createWorkTask = (peer) => createTask(peer, 'work');

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
      else open.push({ peer, taskId, latencies: [], ...prepare?.() });
    } catch (error) {
      results[peer.name] = { error };
    }
  }
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
    results[entry.peer.name] = error !== undefined ? { error } : finish(entry);
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
  ],
  /**
   * Task by task, peers interleaved: `tools/call work` (declared) → task id, then `tasks/get`
   * back to back until `completed`; the latency runs from sending the call to receiving the
   * completed answer. What a task writes and reads is B1's (counting is off here).
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
      finish: ({ latencies, creates, gets }) => ({
        metrics: {
          p50_ms: percentile(latencies, 50),
          p99_ms: percentile(latencies, 99),
          create_p50_ms: percentile(creates, 50),
          gets_p50: percentile(gets, 50),
        },
        raw: { latencies_ms: latencies, create_ms: creates, gets_per_task: gets, tasks: latencies.length },
      }),
      none: {
        metrics: { p50_ms: null, p99_ms: null, create_p50_ms: null, gets_p50: null },
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
  ],
  /**
   * One task per peer, created and awaited until completed (the probe), then `tasks/get` on it,
   * peers interleaved get by get. What a get writes, reads and requests is B1's.
   */
  async runAcross({ peers, sizes }) {
    return acrossTaskPeers(peers, {
      warmup: sizes.t2Warmup,
      count: sizes.t2Gets,
      async step(peer, entry, measured) {
        const t0 = now();
        if ((await getTask(peer, entry.taskId)).status !== 'completed') throw new Error('T2: a completed task read as not completed');
        if (measured) entry.latencies.push(now() - t0);
      },
      finish: ({ latencies }) => ({
        metrics: { p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) },
        raw: { latencies_ms: latencies, gets: latencies.length },
      }),
      none: {
        metrics: { p50_ms: null, p99_ms: null },
        status: NO_TASKS,
        raw: {},
      },
    });
  },
};

/** The peer's billing counters by object class (GET /bench/billing), or undefined where it has none. */
async function billingOf(peer) {
  try {
    const response = await fetch(new URL('/bench/billing', peer.url), { signal: AbortSignal.timeout(5_000) });
    const body = response.ok ? await response.json() : undefined;
    return body?.classes !== null && typeof body?.classes === 'object' ? body.classes : undefined;
  } catch {
    return undefined;
  }
}

/** Turns the peer's counting on or off (off by default: the latency workloads never pay for it). */
async function setBilling(peer, enabled) {
  const response = await fetch(new URL(`/bench/billing?enabled=${enabled ? 1 : 0}`, peer.url), {
    method: 'POST',
    signal: AbortSignal.timeout(5_000),
  });
  if (!response.ok) throw new Error(`POST /bench/billing: HTTP ${response.status}`);
}

/** How long after an operation its own deferred work may still run (writes after the answer). */
const B1_SETTLE_MS = 300;
/** After a DELETE: McpAgent tears a session down in an alarm 1 s later (agents' DESTROY_ALARM_DELAY_MS). */
const B1_CLEANUP_SETTLE_MS = 2_500;
/** How long the TTL instance's sessions and tasks may take to be removed (their TTL is 2 s). */
const B1_EXPIRY_DEADLINE_MS = 30_000;

/** The counts of `count` operations run by `run`: the counters before, and `settleMs` after it returned. */
async function measure(peer, count, run, settleMs = B1_SETTLE_MS) {
  const before = await billingOf(peer);
  await run();
  await sleep(settleMs);
  return perOperation(before, await billingOf(peer), count);
}

/** Resolves once `className`'s objects ran `count` more deleteAll than when called; throws at the deadline. */
async function untilDeleted(peer, className, count) {
  const deleted = async () => (await billingOf(peer))?.[className]?.deleteAll ?? 0;
  const start = await deleted();
  const deadline = now() + B1_EXPIRY_DEADLINE_MS;
  for (;;) {
    await sleep(250);
    const done = (await deleted()) - start;
    if (done >= count) return;
    if (now() > deadline) throw new Error(`${done} of ${count} ${className} objects ran deleteAll within ${B1_EXPIRY_DEADLINE_MS} ms`);
  }
}

/** What B1 reports of each operation (columns) and for which operations the lifecycle columns. */
const B1_COLUMNS = {
  written: { label: 'rows written', of: (op) => op.billed.rowsWritten },
  read: { label: 'rows read', of: (op) => op.billed.rowsRead },
  requests: { label: 'DO requests', of: (op) => op.billed.requests },
  alarms_set: { label: 'setAlarm calls', of: (op) => op.alarms_set },
  alarm_runs: { label: 'alarm invocations', of: (op) => op.alarm_runs },
  delete_all: { label: 'deleteAll calls', of: (op) => op.delete_all },
  usd_per_m: { label: 'USD per million', of: (op) => op.usd_per_million },
};
const LIFECYCLE = ['alarms_set', 'alarm_runs', 'delete_all'];
const B1_OPERATIONS = [
  { key: 'session', label: 'new session (initialize + initialized)', extra: ['alarms_set'] },
  { key: 'echo', label: 'echo call' },
  { key: 'event', label: 'progress event (the call less a call of none)' },
  { key: 'task', label: 'task created → completed', extra: ['alarms_set'] },
  { key: 'task_get', label: 'tasks/get' },
  { key: 'delete', label: 'session DELETE, with what it causes later', extra: LIFECYCLE },
  { key: 'idle', label: 'idle session-minute, no stream', extra: ['alarm_runs'] },
  { key: 'idle_get', label: 'idle session-minute, GET stream held', extra: ['alarm_runs'] },
  { key: 'expiry', label: 'session expiry (ours-ttl: TTL 2 s)', extra: LIFECYCLE },
  { key: 'purge', label: 'task purge (ours-ttl: TTL 2 s)', extra: LIFECYCLE },
];
const columnsOf = (op) => ['written', 'read', 'requests', ...(op.extra ?? []), 'usd_per_m'];

/** The sample of one peer: a metric per operation and column, null where the operation was not measured. */
function b1Sample({ ops, notes, raw }) {
  const metrics = {};
  for (const op of B1_OPERATIONS) {
    for (const column of columnsOf(op)) metrics[`${op.key}_${column}`] = ops[op.key] ? B1_COLUMNS[column].of(ops[op.key]) : null;
  }
  return { metrics, status: notes.join('; ') || undefined, raw: { operations: ops, ...raw } };
}

/** New sessions, echo calls, progress events, tasks and DELETEs, one peer, each in its own window. */
async function billedOperations(peer, sizes, { ops, notes, raw }) {
  const sessions = [];
  const others = [];
  try {
    ops.session = await measure(peer, sizes.b1Sessions, async () => {
      for (let i = 0; i < sizes.b1Sessions; i++) sessions.push(await initialize(peer.url));
    });

    // A session's first call may set up what later ones reuse: the echo window starts after one.
    const echoing = await initialize(peer.url);
    others.push(echoing);
    expectResult(await echoing.callTool('echo', { text: 'first' }, { timeoutMs: CALL_TIMEOUT_MS }), 'B1 echo');
    await sleep(B1_SETTLE_MS);
    ops.echo = await measure(peer, sizes.b1Calls, async () => {
      for (let i = 0; i < sizes.b1Calls; i++) {
        expectResult(await echoing.callTool('echo', { text: `b1 ${i}` }, { timeoutMs: CALL_TIMEOUT_MS }), 'B1 echo');
      }
    });

    const progressing = await initialize(peer.url);
    others.push(progressing);
    const progressCalls = (n) => async () => {
      for (let i = 0; i < sizes.b1ProgressCalls; i++) {
        const call = expectResult(await progressing.callTool('progress', { n }, { timeoutMs: LONG_CALL_TIMEOUT_MS }), 'B1 progress');
        const events = call.events.filter((event) => isProgress(event, tokenOf(call))).length;
        if (events !== n) throw new Error(`B1: ${events} of ${n} progress events arrived`);
      }
    };
    await progressCalls(0)();
    await sleep(B1_SETTLE_MS);
    const call = await measure(peer, sizes.b1ProgressCalls, progressCalls(0));
    const withEvents = await measure(peer, sizes.b1ProgressCalls, progressCalls(sizes.b1ProgressN));
    ops.event = perUnit(withEvents, call, sizes.b1ProgressN);
    raw.progress_call_of_none = call;
    raw.progress_call_of_n = { n: sizes.b1ProgressN, ...withEvents };

    if ((await probeTasks(peer)) === undefined) notes.push('tasks: not served');
    else {
      const taskIds = [];
      ops.task = await measure(peer, sizes.b1Tasks, async () => {
        for (let i = 0; i < sizes.b1Tasks; i++) taskIds.push((await createWorkTask(peer)).taskId);
      });
      let working = 0;
      ops.task_get = await measure(peer, taskIds.length, async () => {
        for (const taskId of taskIds) if ((await getTask(peer, taskId)).status !== 'completed') working++;
      });
      if (working > 0) notes.push(`task: ${working} of ${taskIds.length} not completed at their first tasks/get`);
    }

    // The sessions of the first window, which did nothing else; McpAgent removes them in an alarm.
    const statuses = [];
    ops.delete = await measure(
      peer,
      sessions.length,
      async () => {
        while (sessions.length > 0) statuses.push(await sessions.pop().close());
      },
      B1_CLEANUP_SETTLE_MS,
    );
    const refused = statuses.filter((status) => status < 200 || status >= 300).length;
    if (refused > 0) notes.push(`delete: ${refused} of ${statuses.length} DELETEs not answered 2xx`);
  } finally {
    await Promise.allSettled([...sessions, ...others].map((session) => session.close()));
  }
}

/**
 * One session that does nothing for b1IdleMs, with or without its GET stream held: what that
 * minute costs. Sessions ended before it (their deferred cleanup included) are given
 * B1_CLEANUP_SETTLE_MS to finish first.
 */
async function idleMinute(peer, sizes, withStream) {
  const session = await initialize(peer.url);
  let stream;
  try {
    if (withStream) {
      stream = await session.openStream();
      if (!stream.ok) throw new Error(`GET stream: HTTP ${stream.status}`);
    }
    await sleep(B1_CLEANUP_SETTLE_MS);
    return await measure(peer, 1, () => sleep(sizes.b1IdleMs), 0);
  } finally {
    stream?.close();
    await session.close();
  }
}

/**
 * Expiry, for real, on `ours-ttl` (SESSION_TTL_MS = TASK_TTL_MS = 2000): sessions (initialize and
 * one echo call) and tasks (completed) left alone until their objects have removed themselves
 * (deleteAll), counted from the moment they were left alone.
 */
async function expiryOperations(helper, sizes) {
  await setBilling(helper, true);
  const sessions = [];
  try {
    for (let i = 0; i < sizes.b1Sessions; i++) {
      const session = await initialize(helper.url);
      sessions.push(session);
      expectResult(await session.callTool('echo', { text: 'expiring' }, { timeoutMs: CALL_TIMEOUT_MS }), 'B1 expiry echo');
    }
    const expiry = await measure(helper, sessions.length, () => untilDeleted(helper, 'BenchSession', sessions.length));
    // After the window: an expired session is unknown.
    const after = await sessions[0].callTool('echo', { text: 'after expiry' }, { timeoutMs: CALL_TIMEOUT_MS });
    const taskIds = [];
    for (let i = 0; i < sizes.b1Tasks; i++) {
      const { taskId } = await createWorkTask(helper);
      await untilCompleted(helper, taskId);
      taskIds.push(taskId);
    }
    const purge = await measure(helper, taskIds.length, () => untilDeleted(helper, 'BenchTasks', taskIds.length));
    const gone = await modernRequest(helper.url, 'tasks/get', { taskId: taskIds[0] }, { capabilities: TASKS });
    return {
      expiry,
      purge,
      after_expiry_http_status: after.status,
      after_purge: gone.message?.error ?? gone.message?.result?.status ?? null,
    };
  } finally {
    await setBilling(helper, false).catch(() => undefined);
  }
}

const b1 = {
  id: 'B1',
  title: 'what Cloudflare bills each operation: rows written and read, Durable Object requests, alarms, deleteAll',
  // Counts, not timings: one round is the figure (and the idle minutes take two of them).
  firstRoundOnly: true,
  timeoutMs: 600_000,
  metrics: B1_OPERATIONS.flatMap((op) =>
    columnsOf(op).map((column) => ({ key: `${op.key}_${column}`, label: `B1 ${op.label}: ${B1_COLUMNS[column].label}`, better: 'lower' })),
  ),
  /**
   * The peers with counters (GET /bench/billing: ours, durable-floor, mcpagent), counting on for
   * the workload only: each operation in a window of its own, one peer after another (counts do
   * not depend on timing), then the two idle minutes for all peers at once, while `ours-ttl`
   * (started through `startHelper` when `ours` runs) counts expiry and purge.
   */
  async runAcross({ peers, sizes, startHelper }) {
    const results = {};
    const entries = new Map();
    for (const peer of peers) {
      if ((await billingOf(peer)) === undefined) {
        results[peer.name] = {
          metrics: Object.fromEntries(b1.metrics.map(({ key }) => [key, null])),
          status: 'no billing counters (GET /bench/billing: ours, durable-floor, mcpagent)',
          raw: {},
        };
      } else entries.set(peer.name, { peer, ops: {}, notes: [], raw: {} });
    }
    // Bundling and starting the TTL instance takes seconds: it starts while the others are measured.
    const helper =
      entries.has('ours') && startHelper !== undefined
        ? startHelper('ours-ttl').then(
            (peer) => ({ peer }),
            (error) => ({ error }),
          )
        : undefined;
    try {
      for (const entry of entries.values()) {
        try {
          await setBilling(entry.peer, true);
          await billedOperations(entry.peer, sizes, entry);
        } catch (error) {
          entry.error = error;
        }
      }
      const live = [...entries.values()].filter((entry) => entry.error === undefined);
      const expiry = helper?.then(({ peer, error }) => (peer ? expiryOperations(peer, sizes) : Promise.reject(error)));
      expiry?.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
      for (const [key, withStream] of [
        ['idle', false],
        ['idle_get', true],
      ]) {
        await Promise.all(
          live.map(async (entry) => {
            try {
              entry.ops[key] = await idleMinute(entry.peer, sizes, withStream);
            } catch (error) {
              entry.notes.push(`${key}: ${error.message ?? error}`);
            }
          }),
        );
      }
      for (const entry of live) {
        if (entry.peer.name !== 'ours') entry.notes.push('expiry, purge: measured for ours only (ours-ttl)');
      }
      const ours = entries.get('ours');
      if (ours !== undefined && ours.error === undefined) {
        if (expiry === undefined) ours.notes.push('expiry, purge: no helper peer to start');
        else {
          try {
            const { expiry: expired, purge, ...checks } = await expiry;
            Object.assign(ours.ops, { expiry: expired, purge });
            ours.raw.ttl_instance = checks;
            if (checks.after_expiry_http_status !== 404)
              ours.notes.push(`expiry: an expired session answered HTTP ${checks.after_expiry_http_status}, not 404`);
          } catch (error) {
            ours.notes.push(`expiry, purge: ${error.message ?? error}`);
          }
        }
      }
    } finally {
      for (const entry of entries.values()) await setBilling(entry.peer, false).catch(() => undefined);
      const started = await helper;
      await started?.peer?.stop();
    }
    for (const [name, entry] of entries) results[name] = entry.error !== undefined ? { error: entry.error } : b1Sample(entry);
    return results;
  },
};

/** What T4's client declares: the extension, and form elicitation for the task's question. */
const TASK_CLIENT = { ...TASKS, elicitation: { form: {} } };
const NO_TASK_STREAMS = 'does not serve task streams (tools/call progress_task, declared, then tasks/stream)';
/** How long a task event may take to arrive (T4's events after tasks/update; a stream's result). */
const TASK_EVENT_TIMEOUT_MS = 15_000;
const isTaskEvent = (event) => event.message?.method === 'notifications/tasks/event' && !('id' in event.message);

/**
 * One `progress_task {n}` created and streamed from its first event (no `after`) to its result:
 * the task's id, the times of the call and the stream, its task events. Throws when the stream
 * is refused, ends without its result or the timeline is not the task's whole one (timelineProblems).
 */
async function streamedTask(peer, n) {
  const tCall = now();
  const { taskId } = await createTask(peer, 'progress_task', { n });
  const tCreated = now();
  const stream = await modernTaskStream(peer.url, taskId, { capabilities: TASKS, timeoutMs: CALL_TIMEOUT_MS, maxMs: LONG_CALL_TIMEOUT_MS });
  try {
    const end = await stream.done;
    if (stream.response?.result?.resultType !== 'complete') {
      const answer = stream.response ?? stream.events.at(-1)?.message;
      throw new Error(`tasks/stream: HTTP ${stream.status}, ended (${end}) without its result: ${JSON.stringify(answer)?.slice(0, 300)}`);
    }
    const taskEvents = taskEventsOf(stream.events);
    const problems = timelineProblems(taskEvents, { taskId, progress: n, terminal: 'completed' });
    if (problems.length > 0) throw new Error(`tasks/stream of progress_task {n: ${n}}: ${problems.join('; ')}`);
    return { taskId, tCall, tCreated, stream, taskEvents };
  } finally {
    stream.close();
  }
}

/** One T3 run: `streamedTask(peer, n)`'s figures (task-stream.mjs `streamFigures`) and the CreateTaskResult's time. */
async function taskStreamRun(peer, n) {
  const { tCall, tCreated, stream, taskEvents } = await streamedTask(peer, n);
  return { ...streamFigures(taskEvents, { tCall, tStream: stream.tSent, tResponse: stream.tResponse }), createMs: tCreated - tCall };
}

/**
 * Whether the peer streams tasks: a `progress_task {n: 1}` created and streamed whole. A call
 * not answered with a task, or a stream refused with -32601 (no task streams), is "no"; any
 * other answer that is not the task's whole timeline and its result is an error, not "unserved".
 */
async function probeTaskStreams(peer) {
  let taskId;
  try {
    ({ taskId } = await createTask(peer, 'progress_task', { n: 1 }));
  } catch {
    return false;
  }
  const stream = await modernTaskStream(peer.url, taskId, { capabilities: TASKS, timeoutMs: CALL_TIMEOUT_MS });
  try {
    const end = await stream.done;
    if (stream.response?.error?.code === -32601) return false;
    if (stream.response?.result?.resultType !== 'complete') {
      throw new Error(`tasks/stream: HTTP ${stream.status}, ended (${end}): ${JSON.stringify(stream.response)?.slice(0, 300)}`);
    }
    const problems = timelineProblems(taskEventsOf(stream.events), { taskId, progress: 1, terminal: 'completed' });
    if (problems.length > 0) throw new Error(`tasks/stream of progress_task {n: 1}: ${problems.join('; ')}`);
    return true;
  } finally {
    stream.close();
  }
}

/**
 * What one task of `n` progress events bills, streamed as T3 streams it, and what each progress
 * event adds: (the task of n − the task of none) ÷ n, as B1's progress event. Counting is on for
 * these two tasks only; undefined where the peer has no counters.
 */
async function taskStreamBilling(peer, n) {
  if ((await billingOf(peer)) === undefined) return undefined;
  await setBilling(peer, true);
  try {
    const none = await measure(peer, 1, () => streamedTask(peer, 0));
    const whole = await measure(peer, 1, () => streamedTask(peer, n));
    return { none, whole, perEvent: perUnit(whole, none, n) };
  } finally {
    await setBilling(peer, false).catch(() => undefined);
  }
}

const t3 = {
  id: 'T3',
  title: 'a task streaming progress on tasks/stream (2026-07-28, SEP-2694), beside W3',
  metrics: [
    { key: 'events_per_s', label: 'T3 task progress events/s (call sent → last progress event)', better: 'higher' },
    { key: 'over_w3', label: 'T3 events/s ÷ W3 events/s, interleaved', better: 'higher' },
    { key: 'first_event_ms', label: 'T3 tasks/stream sent → first task event ms', better: 'lower' },
    { key: 'first_is_seq0', label: 'T3 first task event is seq 0', better: 'higher', kind: 'yesno' },
    { key: 'create_ms', label: 'T3 tools/call → CreateTaskResult ms', better: 'lower' },
    { key: 'stream_events_per_s', label: 'T3 progress events/s from tasks/stream sent', better: 'higher' },
    { key: 'longest_gap_ms', label: 'T3 longest wait between two task events ms', better: 'lower' },
    { key: 'rows_written_per_event', label: 'T3 rows written per progress event', better: 'lower' },
    { key: 'rows_read_per_event', label: 'T3 rows read per progress event', better: 'lower' },
    { key: 'rows_written_task', label: 'T3 rows written, the whole task (n progress events)', better: 'lower' },
    { key: 'requests_task', label: 'T3 DO requests, the whole task', better: 'lower' },
  ],
  /**
   * Peers that stream tasks (a probe: `progress_task {n: 1}`, declared, then `tasks/stream`):
   * `w3Runs` runs per peer and round of `progress_task {n: w3N}` created and streamed at once
   * (no `after`) to its result, each beside a W3 run (`progress {n: w3N}` in a fresh session),
   * the two alternating which goes first, peers interleaved run by run; the figures on W3's
   * definitions (task-stream.mjs `streamFigures`), `over_w3` the ratio of the medians of this
   * workload's own runs. Then, counting on, one task of none and one of w3N, streamed alike:
   * rows per progress event (B1's way: their difference ÷ w3N) and the whole task's.
   */
  async runAcross({ peers, sizes }) {
    const results = {};
    const open = [];
    for (const peer of peers) {
      try {
        if (await probeTaskStreams(peer)) open.push({ peer, t3: [], w3: [] });
        else
          results[peer.name] = { metrics: Object.fromEntries(t3.metrics.map(({ key }) => [key, null])), status: NO_TASK_STREAMS, raw: {} };
      } catch (error) {
        results[peer.name] = { error };
      }
    }
    const failed = new Map();
    for (let i = 0; i < sizes.w3Runs; i++) {
      for (let k = 0; k < open.length; k++) {
        const entry = open[(k + i) % open.length];
        if (failed.has(entry.peer.name)) continue;
        try {
          const pair = [
            async () => entry.t3.push(await taskStreamRun(entry.peer, sizes.w3N)),
            async () => entry.w3.push(await progressRun(entry.peer.url, sizes)),
          ];
          if (i % 2 === 1) pair.reverse();
          for (const run of pair) await run();
        } catch (error) {
          failed.set(entry.peer.name, error);
        }
      }
    }
    for (const entry of open) {
      const error = failed.get(entry.peer.name);
      if (error !== undefined) {
        results[entry.peer.name] = { error };
        continue;
      }
      const notes = [];
      let billed;
      try {
        billed = await taskStreamBilling(entry.peer, sizes.w3N);
        if (billed === undefined) notes.push('no billing counters: rows not counted');
      } catch (error) {
        notes.push(`billing: ${error.message ?? error}`);
      }
      const of = (key) => median(entry.t3.map((run) => run[key]));
      const w3 = median(entry.w3.map((run) => run.eventsPerS));
      results[entry.peer.name] = {
        metrics: {
          events_per_s: of('eventsPerS'),
          over_w3: of('eventsPerS') / w3,
          first_event_ms: of('firstMs'),
          first_is_seq0: entry.t3.every((run) => run.firstSeq === 0) ? 1 : 0,
          create_ms: of('createMs'),
          stream_events_per_s: of('streamEventsPerS'),
          longest_gap_ms: of('longestGapMs'),
          rows_written_per_event: billed?.perEvent.billed.rowsWritten ?? null,
          rows_read_per_event: billed?.perEvent.billed.rowsRead ?? null,
          rows_written_task: billed?.whole.billed.rowsWritten ?? null,
          requests_task: billed?.whole.billed.requests ?? null,
        },
        status: notes.join('; ') || undefined,
        raw: {
          n: sizes.w3N,
          runs: entry.t3,
          w3_runs: entry.w3,
          w3_events_per_s: w3,
          w3_first_event_ms: median(entry.w3.map((run) => run.firstMs)),
          billing: billed ?? null,
        },
      };
    }
    return results;
  },
};

/**
 * One task of `ask` (it asks to go on: input_required), its `tasks/stream` opened at once and
 * read in the background; resolves once the stream has delivered the question. `answer()`
 * sends `tasks/update` with the answer and times what the stream delivers next: the ms from
 * the update sent to the first event after the question, and to the stream's result, checking
 * the whole timeline (working, input_required, working, one progress, completed).
 */
async function waitingTask(peer, maxMs) {
  const { taskId } = await createTask(peer, 'ask', {}, TASK_CLIENT);
  const stream = await modernTaskStream(peer.url, taskId, { capabilities: TASK_CLIENT, timeoutMs: CALL_TIMEOUT_MS, maxMs });
  const entry = { taskId, stream, ended: false };
  stream.done.then(() => {
    entry.ended = true;
  });
  try {
    if (!stream.ok) throw new Error(`tasks/stream: HTTP ${stream.status} ${JSON.stringify(stream.response)?.slice(0, 300)}`);
    const asked = await stream.waitFor(
      (event) => isTaskEvent(event) && event.message.params.payload?.status === 'input_required',
      TASK_EVENT_TIMEOUT_MS,
    );
    entry.askedSeq = asked.message.params.seq;
  } catch (error) {
    stream.close();
    throw error;
  }
  entry.answer = async () => {
    const t0 = now();
    const { status, message } = await modernRequest(
      peer.url,
      'tasks/update',
      { taskId, inputResponses: { go_on: { action: 'accept', content: { confirm: true } } } },
      { capabilities: TASK_CLIENT },
    );
    if (message?.result === undefined) throw new Error(`tasks/update: HTTP ${status} ${JSON.stringify(message)?.slice(0, 300)}`);
    const updateMs = now() - t0;
    const next = await stream.waitFor((event) => isTaskEvent(event) && event.message.params.seq > entry.askedSeq, TASK_EVENT_TIMEOUT_MS);
    const isAnswer = (event) => event.message !== undefined && !('method' in event.message);
    await stream.waitFor(isAnswer, TASK_EVENT_TIMEOUT_MS);
    if (stream.response?.result?.resultType !== 'complete')
      throw new Error(`tasks/stream after the answer: ended without its result: ${JSON.stringify(stream.response)?.slice(0, 300)}`);
    const problems = timelineProblems(taskEventsOf(stream.events), { taskId, progress: 1, terminal: 'completed' });
    if (problems.length > 0) throw new Error(`tasks/stream after the answer: ${problems.join('; ')}`);
    return {
      eventMs: next.t - t0,
      resultMs: stream.tResponse - t0,
      updateMs,
      next: next.message.params.payload?.status ?? next.message.params.type,
    };
  };
  return entry;
}

/** T4's pause between opening the warm tasks' streams and answering them. */
const T4_SETTLE_MS = 1_000;

const t4 = {
  id: 'T4',
  title: 'idle tasks waiting for input, each with a tasks/stream open: task objects resident after the idle period, then an answer each',
  // An idle minute, as W7's: round 1 only.
  firstRoundOnly: true,
  metrics: [
    { key: 'resident_after_idle', label: 'T4 task objects resident after the idle period (streams open)', better: 'lower' },
    { key: 'streams_open_after_idle', label: 'T4 streams still open after the idle period', better: 'higher' },
    { key: 'event_after_idle_p50_ms', label: 'T4 tasks/update → next task event after idle p50 ms', better: 'lower' },
    { key: 'result_after_idle_p50_ms', label: 'T4 tasks/update → stream result after idle p50 ms', better: 'lower' },
    { key: 'event_warm_p50_ms', label: 'T4 tasks/update → next task event warm p50 ms', better: 'lower' },
  ],
  /**
   * W7 for tasks (`ours` only: the peer's `ask` tool and its count of constructed task objects,
   * GET /bench/instances `tasksConstructed`): t4Warm tasks of `ask` (and one unrecorded), each
   * streamed until it asks, answered a second later (warm, resident); then t4Tasks more, each with its stream held open and idle through
   * t4IdleMs (W7's minute); then each answered with `tasks/update`, one at a time: task objects
   * resident after the idle period (tasks − objects constructed anew by the answers), and the ms
   * from the update to the stream's next event and to its result.
   */
  async run({ peer, sizes }) {
    const none = (status) => ({ metrics: Object.fromEntries(t4.metrics.map(({ key }) => [key, null])), status, raw: {} });
    const tasksConstructed = async () => (await countsOf(peer))?.tasksConstructed;
    if ((await tasksConstructed()) === undefined)
      return none('no count of task objects (GET /bench/instances tasksConstructed: ours only)');
    const maxMs = sizes.t4IdleMs + 300_000;
    const entries = [];
    const opening = async (count) => {
      const opened = await inBatches(count, sizes.t4Batch, async () => {
        const entry = await waitingTask(peer, maxMs);
        entries.push(entry);
        return entry;
      });
      const refused = opened.find((result) => result.status === 'rejected');
      if (refused !== undefined) throw refused.reason;
      return opened.map((result) => result.value);
    };
    try {
      // One more than recorded: the first answer of the process's first `ask` tasks runs cold code.
      const [coldEntry, ...warmEntries] = await opening(sizes.t4Warm + 1);
      // Past the relay's bridge (200 ms, src/core/relay.ts BRIDGE_MS): each stream on its socket, as after the idle period.
      await sleep(T4_SETTLE_MS);
      const cold = await coldEntry.answer();
      const warm = [];
      for (const entry of warmEntries) warm.push(await entry.answer());
      const idle = await opening(sizes.t4Tasks);
      const beforeIdle = await tasksConstructed();
      await sleep(sizes.t4IdleMs);
      const afterIdle = await tasksConstructed();
      const openAfterIdle = idle.filter((entry) => !entry.ended).length;
      // One at a time, as W7's: concurrent answers on 2 cores would time the queue.
      const afterIdleAnswers = [];
      for (const entry of idle) afterIdleAnswers.push(await entry.answer());
      const woken = (await tasksConstructed()) - afterIdle;
      return {
        metrics: {
          resident_after_idle: residentAfterIdle(idle.length, woken),
          streams_open_after_idle: openAfterIdle,
          event_after_idle_p50_ms: median(afterIdleAnswers.map((a) => a.eventMs)),
          result_after_idle_p50_ms: median(afterIdleAnswers.map((a) => a.resultMs)),
          event_warm_p50_ms: median(warm.map((a) => a.eventMs)),
        },
        status:
          openAfterIdle < idle.length ? `${idle.length - openAfterIdle} of ${idle.length} streams ended during the idle period` : undefined,
        raw: {
          tasks: idle.length,
          idle_ms: sizes.t4IdleMs,
          constructed_during_idle: afterIdle - beforeIdle,
          woken_by_answer: woken,
          after_idle: afterIdleAnswers,
          warm,
          warm_unrecorded: cold,
          first_after_idle: afterIdleAnswers[0] ?? null,
        },
      };
    } finally {
      for (const { stream } of entries) stream.close();
    }
  },
};

// W6 first: in round 1 it meets a fresh peer (see firstRoundOnly). B1, W7 and T4 last: their idle
// minutes should follow the load of the others, as a quiet hour follows a busy one.
export const WORKLOADS = [w6, w0, w1, w2, w3, w4, w4b, w5, m1, m2, m3, t1, t2, t3, b1, w7, t4];
