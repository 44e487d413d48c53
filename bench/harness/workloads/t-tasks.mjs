// The T family's polled tasks (2026-07-28, the Tasks extension declared): T1 a task created
// and polled with `tasks/get` until completed, T2 `tasks/get` of a completed task. Both run on
// the peers that answer the probe with a task, interleaved step by step (`acrossTaskPeers`,
// theirs alone). The task client (create, get, poll, the probe) is in shared.mjs, as B1 bills
// the same operations; streamed tasks are t-task-streams.mjs's.
import { now } from '../client.mjs';
import { percentile } from '../stats.mjs';
import { createWorkTask, getTask, untilCompleted, probeTasks } from './shared.mjs';
import { roundOrder } from '../round-order.mjs';

const NO_TASKS = 'does not serve tasks (tools/call work, declared, not answered with a task)';

/**
 * Runs `step(peer, entry, measured)` for every peer serving tasks, `warmup + count` times, all
 * peers interleaved step by step (each step's order drawn afresh: round-order.mjs), as W1 does. Peers
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
    for (const k of roundOrder(i, open.length)) {
      const entry = open[k];
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

export const t1 = {
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

export const t2 = {
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
