// The W family's resumption (2025-11-25, `GET` with `Last-Event-ID`): W4 a stream cut mid-way
// and resumed (events lost and duplicated), W4b a resume after the call finished (does the
// result arrive), W5 the cost of a replay from a big log against a small one. With the helpers
// only they use: why a resume was refused (`cannotResume`), W5's logs and replays.
import { setTimeout as sleep } from 'node:timers/promises';
import { initialize, now, responseTo } from '../client.mjs';
import { median } from '../stats.mjs';
import { CALL_TIMEOUT_MS, LONG_CALL_TIMEOUT_MS, interleaved, isProgress, tokenOf, expectResult, withSession } from './shared.mjs';

/** Why a resume could not be made or was refused, for the report. */
function cannotResume(resume) {
  if (resume === undefined) return 'cannot resume: no event id received';
  if (!resume.ok)
    return `cannot resume: ${resume.status ? `HTTP ${resume.status}` : (resume.error ?? resume.end)}${resume.body ? ` ${resume.body.slice(0, 120)}` : ''}`;
  return undefined;
}

/** `call`'s stream resumed from the last id it received, read until its answer; undefined without an id. */
function resumeToAnswer(session, call, sizes) {
  if (!call.lastEventId) return Promise.resolve(undefined);
  return session.resume(call.lastEventId, {
    timeoutMs: sizes.resumeTimeoutMs,
    until: (event) => responseTo(event.message, call.requestId) !== undefined,
  });
}

/**
 * One W4 run: `progress {n: w4N}` cut after its w4AbortAt-th progress event and resumed from the
 * last id received. { metrics: { total_ms, lost, duplicated }, status?, raw }; a refused resume
 * is a status (`cannot resume`), not 0 lost.
 */
async function cutAndResume(peer, sizes) {
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
    const resume = await resumeToAnswer(session, call, sizes);
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
}

export const w4 = {
  id: 'W4',
  title: 'abort mid-stream, resume with Last-Event-ID',
  metrics: [
    { key: 'total_ms', label: 'W4 abort+resume total ms', better: 'lower' },
    { key: 'lost', label: 'W4 lost events', better: 'lower' },
    { key: 'duplicated', label: 'W4 duplicated events', better: 'lower' },
  ],
  /**
   * Every peer in one pass, run by run as W5 interleaves replays: run i goes to every peer, in an
   * order drawn afresh for each i, before run i + 1 goes to any; w4Runs a round. The sample: the
   * median total, and the worst run's lost and duplicated counts. Run one peer after another,
   * once a round, ours' total came out 0.73–1.34× the durable floor's round by round (2026-12-08).
   * A peer whose resume is refused is not run again (it would only be refused again).
   */
  async runAcross({ peers, sizes }) {
    const runs = new Map(peers.map((peer) => [peer.name, []]));
    const refusedBefore = (name) => runs.get(name).at(-1)?.metrics.lost === null;
    const failed = await interleaved(peers, 0, sizes.w4Runs, async (peer) => {
      if (!refusedBefore(peer.name)) runs.get(peer.name).push(await cutAndResume(peer, sizes));
    });
    return Object.fromEntries(
      peers.map(({ name }) => {
        const error = failed.get(name);
        if (error !== undefined) return [name, { error }];
        const done = runs.get(name);
        const refused = done.find((run) => run.metrics.lost === null);
        if (refused !== undefined) return [name, refused];
        const totals = done.map((run) => run.metrics.total_ms).filter((ms) => ms !== null);
        const status = [...new Set(done.map((run) => run.status).filter(Boolean))].join('; ') || undefined;
        return [
          name,
          {
            metrics: {
              total_ms: totals.length === 0 ? null : median(totals),
              lost: Math.max(...done.map((run) => run.metrics.lost)),
              duplicated: Math.max(...done.map((run) => run.metrics.duplicated)),
            },
            status,
            raw: { runs: done.map(({ metrics, raw }) => ({ ...metrics, ...raw })) },
          },
        ];
      }),
    );
  },
};

export const w4b = {
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
      const resume = await resumeToAnswer(session, call, sizes);
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

export const w5 = {
  id: 'W5',
  title: 'replay cost: the last stream of a big log vs a whole small log',
  metrics: [
    { key: 'replay_big_ms', label: 'W5 replay 1k of big log ms', better: 'lower' },
    { key: 'replay_small_ms', label: 'W5 replay 1k of small log ms', better: 'lower' },
    { key: 'big_over_small', label: 'W5 big/small ratio', better: 'lower' },
  ],
  /**
   * Every peer in one pass, replay by replay as W1 interleaves calls: replay i (its small log's,
   * then its big log's) goes to every peer, in an order drawn afresh for each i, before replay
   * i + 1 goes to any. Run one peer after another, three replays each, ours' replay of the small
   * log came out 1.15–1.82× the durable floor's from run to run (2026-12-08) where the same
   * replays interleaved (pair.mjs, 60 each, both orders) gave 1.04× and 1.06×.
   * `state` (per peer, across rounds) keeps the logs: built once per peer, untimed, and rebuilt
   * once older than w5RebuildAfterMs, before a retention policy could prune them (ours keeps
   * finished streams 10 min by default).
   */
  async runAcross({ peers, sizes, state }) {
    const results = {};
    const ready = [];
    for (const peer of peers) {
      const own = state[peer.name];
      try {
        if (!own.w5 || now() - own.w5.builtAt > sizes.w5RebuildAfterMs) {
          await w5.cleanup({ state: own });
          const small = await buildLog(peer.url, sizes.w5SmallLog, sizes);
          const big = await buildLog(peer.url, sizes.w5BigLog, sizes).catch(async (error) => {
            await small.session.close();
            throw error;
          });
          own.w5 = { small, big, builtAt: now() };
        }
        ready.push(peer);
      } catch (error) {
        results[peer.name] = { error };
      }
    }
    const replays = new Map(ready.map((peer) => [peer.name, { small: [], big: [], notes: new Set(), failed: false }]));
    // A failed replay ends that peer's repetitions (it would only fail again, each time after a timeout).
    const failed = await interleaved(ready, 0, sizes.w5Repeats, async (peer) => {
      const own = replays.get(peer.name);
      for (const name of ['small', 'big']) {
        if (own.failed) return;
        const replay = await replayMs(state[peer.name].w5[name], sizes);
        if (replay.status) own.notes.add(`${name}: ${replay.status}`);
        if (replay.ms != null) own[name].push(replay.ms);
        else own.failed = true;
      }
    });
    for (const peer of ready) {
      const error = failed.get(peer.name);
      if (error !== undefined) {
        results[peer.name] = { error };
        continue;
      }
      const { small, big } = state[peer.name].w5;
      const { notes, ...ms } = replays.get(peer.name);
      const bigMedian = median(ms.big) ?? null;
      const smallMedian = median(ms.small) ?? null;
      results[peer.name] = {
        metrics: {
          replay_big_ms: bigMedian,
          replay_small_ms: smallMedian,
          big_over_small: bigMedian != null && smallMedian != null ? bigMedian / smallMedian : null,
        },
        status: [...notes].join('; ') || undefined,
        raw: {
          replay_small_ms: ms.small,
          replay_big_ms: ms.big,
          build_small_ms: small.build_ms,
          build_big_ms: big.build_ms,
          cursors: { small: small.cursor ?? null, big: big.cursor ?? null },
        },
      };
    }
    return results;
  },
  async cleanup({ state }) {
    if (!state.w5) return;
    await Promise.all([state.w5.small.session.close(), state.w5.big.session.close()]);
    state.w5 = undefined;
  },
};
