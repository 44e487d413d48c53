// The soak's `tasks` client (scripts/faults/soak.mjs --clients tasks): N `chatter` tasks on the
// 2026-07-28 endpoint, each created straight at the server (no faults on creation) and followed
// with `followTask` (the package's client, dist/client) through the fault proxy, which cuts
// `rate` of its SSE answers — the `tasks/stream` responses, mid-stream for every cutting profile
// but `first` (a task of S steps streams 3S + 2 events, ~250 bytes each, beyond the proxy's
// 0–2 KiB cut), and `tasks/get` too when it is answered as SSE. Every request of a follow lacks
// a session id, so the proxy runs with `handshakes: true` (its "spare the handshake" rule would
// spare them all). Counted over what `onEvent` saw, against the timeline a chatter task has:
//   seq 0 status working; per step k: 3k-2 progress k, 3k-1 log `log k`, 3k com.example.step
//   {step: k}; 3S+1 status completed
//   lost                 follows that did not end with a completed task whose result is `chattered S steps`
//   gaps                 expected seqs never delivered to onEvent
//   duplicate events     a seq delivered twice (the follower de-duplicates: must be 0)
//   out of order         a seq delivered after a higher one
//   wrong events         an event whose type or payload is not the one its seq should carry, or beyond 3S+1
// and what the faults did: streams resumed (tasks/stream requests after a follow's first) and
// how many of those resumed mid-stream (with `after`, before the terminal event).
import { followTask } from '../../dist/client/index.js';
import { startFaultProxy } from './fault-proxy.mjs';
import { createChatter } from './task-follow-raw.mjs';

const STATUS = 'mcp-edge-sessions.status';
const PROGRESS = 'mcp-edge-sessions.progress';
const LOG = 'mcp-edge-sessions.log';
const STEP = 'com.example.step';

/** Why `event` is not the one seq `event.seq` of a chatter task of `steps` steps carries, or undefined. */
export function chatterEventProblem(event, steps) {
  const { seq, type, payload } = event;
  const last = 3 * steps + 1;
  if (!Number.isSafeInteger(seq) || seq < 0 || seq > last) return `seq ${seq} outside 0..${last}`;
  if (seq === 0) return type === STATUS && payload?.status === 'working' ? undefined : `seq 0 is ${type} ${JSON.stringify(payload)}`;
  if (seq === last)
    return type === STATUS && payload?.status === 'completed' ? undefined : `seq ${seq} is ${type} ${JSON.stringify(payload)}`;
  const step = Math.floor((seq - 1) / 3) + 1;
  const ok = [
    () => type === PROGRESS && payload?.progress === step && payload?.total === steps,
    () => type === LOG && payload?.data === `log ${step}`,
    () => type === STEP && payload?.step === step,
  ][(seq - 1) % 3]();
  return ok ? undefined : `seq ${seq} (step ${step}) is ${type} ${JSON.stringify(payload)}`;
}

/**
 * Runs the tasks client against `direct` (the server) through a fault proxy of `profile`; prints
 * its `soak:` line and returns the figures (all 0 when nothing went wrong).
 */
export async function soakTasks(direct, profile, { tasks, concurrency, steps, intervalMs, rate, seed, timeoutMs = 60_000 }) {
  const proxy = await startFaultProxy({ target: direct, profile, rate, seed, handshakes: true });
  const figures = { lost: 0, gaps: 0, duplicateEvents: 0, outOfOrder: 0, wrongEvents: 0 };
  const faults = { resumed: 0, midStream: 0 };
  const last = 3 * steps + 1;
  const expected = `chattered ${steps} steps`;
  const problems = [];
  const note = (line) => {
    if (problems.length < 5) problems.push(line);
  };
  try {
    let issued = 0;
    const worker = async () => {
      while (issued < tasks) {
        const n = issued++;
        let taskId;
        try {
          taskId = await createChatter(direct, { steps, interval_ms: intervalMs });
        } catch (error) {
          figures.lost++;
          note(`task ${n}: not created: ${String(error)}`);
          continue;
        }
        const seen = [];
        let streams = 0;
        // Counts the follower's tasks/stream requests (the proxy's faults are not visible from here).
        const countingFetch = (input, init) => {
          try {
            const { method, params } = JSON.parse(init.body);
            if (method === 'tasks/stream') {
              if (streams++ > 0) faults.resumed++;
              if (params.after !== undefined && params.after < last) faults.midStream++;
            }
          } catch {
            // not ours to judge
          }
          return fetch(input, init);
        };
        try {
          const { task, lastSeq } = await followTask({
            url: proxy.url,
            taskId,
            fetch: countingFetch,
            signal: AbortSignal.timeout(timeoutMs),
            reconnect: { initialDelayMs: 20, maxDelayMs: 200, factor: 1.5, maxAttempts: 50 },
            clientInfo: { name: 'soak-tasks', version: '1' },
            onEvent: (event) => {
              seen.push(event.seq);
              const problem = chatterEventProblem(event, steps);
              if (problem !== undefined) {
                figures.wrongEvents++;
                note(`task ${taskId}: ${problem}`);
              }
            },
          });
          const text = task.result?.content?.[0]?.text;
          if (task.status !== 'completed' || text !== expected || lastSeq !== last) {
            figures.lost++;
            // task_interrupted with no kill: its object was reset — under `wrangler dev`, a reload for an edited source file.
            const why = task.status === 'failed' ? ` (${task.error?.data?.reason ?? task.error?.message})` : '';
            note(`task ${taskId}: ${task.status}${why}, ${JSON.stringify(text)}, lastSeq ${lastSeq}`);
          }
        } catch (error) {
          figures.lost++;
          note(`task ${taskId}: ${error?.name}: ${error?.message}`);
        }
        const unique = new Set(seen);
        figures.duplicateEvents += seen.length - unique.size;
        for (let i = 1; i < seen.length; i++) if (seen[i] < seen[i - 1]) figures.outOfOrder++;
        for (let seq = 0; seq <= last; seq++) if (!unique.has(seq)) figures.gaps++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    proxy.closeAll();
  } finally {
    await proxy.close();
  }
  for (const line of problems) console.error(`  ${line}`);
  console.log(
    `soak: ${tasks} tasks, ${figures.lost} lost, ${figures.gaps} gaps, ${figures.duplicateEvents} duplicate events, ${figures.outOfOrder} out of order, ${figures.wrongEvents} wrong events (tasks, ${profile}, ${proxy.stats.faulted} of ${proxy.stats.responses} responses faulted, ${faults.resumed} streams resumed, ${faults.midStream} mid-stream, seed ${seed})`,
  );
  return figures;
}
