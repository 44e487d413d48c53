// The B family: B1, what Cloudflare bills each operation — rows written and read, Durable
// Object requests, alarms, deleteAll — counted by the peers' billing counters (GET
// /bench/billing), each operation in its own window, then the idle minutes and, on `ours-ttl`,
// expiry for real. With the helpers only B1 uses: its columns and operations, its windows,
// expiry. The counters and the window (`measure`) are in shared.mjs, as T3 counts with them
// too; the arithmetic and the prices are ../billing.mjs's.
import { setTimeout as sleep } from 'node:timers/promises';
import { perUnit } from '../billing.mjs';
import { initialize, modernRequest, now } from '../client.mjs';
import {
  CALL_TIMEOUT_MS,
  LONG_CALL_TIMEOUT_MS,
  isProgress,
  tokenOf,
  expectResult,
  TASKS,
  createWorkTask,
  getTask,
  untilCompleted,
  probeTasks,
  billingOf,
  setBilling,
  B1_SETTLE_MS,
  measure,
} from './shared.mjs';

/** After a DELETE: McpAgent tears a session down in an alarm 1 s later (agents' DESTROY_ALARM_DELAY_MS). */
const B1_CLEANUP_SETTLE_MS = 2_500;
/** How long the TTL instance's sessions and tasks may take to be removed (their TTL is 2 s). */
const B1_EXPIRY_DEADLINE_MS = 30_000;

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

export const b1 = {
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
