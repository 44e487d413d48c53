// What several workload families use, in one place, so that no family imports another: the
// call's timeouts and checks (W, B, T), W0's sequence (also pair.mjs's), the peers taken step by
// step (`interleaved`: W0, W3, W4, W5), a fresh session per run and batches of concurrent steps
// (W, T4), W3's run (`progressRun`: W3's own runs and the W3 runs T3 interleaves with its
// tasks), the `ours` peer's counts of constructed objects (W7, T4), the 2026-07-28 task client
// (create, get, poll to completed, the probe: T1, T2, T3, B1) and the peer's billing counters
// and their per-operation window (`measure`: B1, and T3's rows per progress event). Moved
// verbatim out of the single workloads.mjs; what a helper measures is unchanged, and a helper
// one family alone uses stays in that family's file.
import { setTimeout as sleep } from 'node:timers/promises';
import { perOperation } from '../billing.mjs';
import { initialize, modernRequest, now } from '../client.mjs';
import { roundOrder } from '../round-order.mjs';

export const CALL_TIMEOUT_MS = 30_000;
export const LONG_CALL_TIMEOUT_MS = 120_000;

export const isProgress = (event, token) =>
  event.message?.method === 'notifications/progress' && (token === undefined || event.message.params?.progressToken === token);
export const tokenOf = (call) => `bench-${call.requestId}`;

/** Fails loudly when a call did not end in a successful tools/call result. */
export function expectResult(call, what) {
  if (call.response?.result && !call.response.result.isError) return call;
  const why = call.response?.error ? JSON.stringify(call.response.error) : (call.error ?? `ended: ${call.end}, HTTP ${call.status}`);
  throw new Error(`${what}: no result (${why})`);
}

/**
 * W0's sequence (w-calls.mjs, pair.mjs): a new session, then its first echo; the session is ended
 * (DELETE) after, not timed. Resolves to { sequence: initialize → the echo answered, echo: the
 * echo alone }, in ms.
 */
export async function firstEcho(url, text) {
  const t0 = now();
  const session = await initialize(url);
  try {
    const call = expectResult(await session.callTool('echo', { text }, { timeoutMs: CALL_TIMEOUT_MS }), 'W0 echo');
    return { sequence: call.tResponse - t0, echo: call.tResponse - call.tSent };
  } finally {
    await session.close();
  }
}

/**
 * Runs `step(peer, i)` for i in [-warmup, count) on every peer, step by step: step i goes to
 * every peer (in an order drawn afresh for each i: round-order.mjs) before step i + 1 goes to
 * any. A peer whose step throws is left out from then on (its error is returned in `failed`).
 */
export async function interleaved(peers, warmup, count, step) {
  const failed = new Map();
  for (let i = -warmup; i < count; i++) {
    for (const k of roundOrder(i, peers.length)) {
      const peer = peers[k];
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

/** Runs `fn` on a fresh session and always ends the session afterwards (not timed). */
export async function withSession(url, fn) {
  const session = await initialize(url);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

/** Runs `task(i)` for i in [0, count) with at most `width` at once. */
export async function inBatches(count, width, task) {
  const results = [];
  for (let start = 0; start < count; start += width) {
    const batch = Array.from({ length: Math.min(width, count - start) }, (_, k) => task(start + k));
    results.push(...(await Promise.allSettled(batch)));
  }
  return results;
}

/** One progress{n} call in a fresh session: events/s to the last progress event, first-event ms. */
export async function progressRun(url, sizes) {
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

/** A peer's counts of constructed session and bus objects (`ours` only: bench/peers/ours), or undefined. */
export async function countsOf(peer) {
  try {
    const response = await fetch(new URL('/bench/instances', peer.url), { signal: AbortSignal.timeout(5_000) });
    return response.ok ? await response.json() : undefined;
  } catch {
    return undefined;
  }
}

/** What a client declares to take tasks: the Tasks extension, in the request's client capabilities. */
export const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
/** How long one task may take to complete (T1, T2); polling stops there. */
const TASK_DEADLINE_MS = 10_000;

/** `tools/call name` from a client that declared `capabilities` (the extension at least): the CreateTaskResult, or a throw. */
export async function createTask(peer, name, args = {}, capabilities = TASKS) {
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
export const createWorkTask = (peer) => createTask(peer, 'work');

/** One `tasks/get`: the task, or a throw if it is not this task or it ended other than completed. */
export async function getTask(peer, taskId) {
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
export async function untilCompleted(peer, taskId) {
  const deadline = now() + TASK_DEADLINE_MS;
  for (let polls = 1; ; polls++) {
    if ((await getTask(peer, taskId)).status === 'completed') return polls;
    if (now() > deadline) throw new Error(`task ${taskId} not completed within ${TASK_DEADLINE_MS} ms (${polls} polls)`);
  }
}

/** The probe: a completed task's id, or undefined where tools/call work is not answered with a task. */
export async function probeTasks(peer) {
  let task;
  try {
    task = await createWorkTask(peer);
  } catch {
    return undefined;
  }
  await untilCompleted(peer, task.taskId); // a task that never completes is an error, not "unserved"
  return task.taskId;
}

/** The peer's billing counters by object class (GET /bench/billing), or undefined where it has none. */
export async function billingOf(peer) {
  try {
    const response = await fetch(new URL('/bench/billing', peer.url), { signal: AbortSignal.timeout(5_000) });
    const body = response.ok ? await response.json() : undefined;
    return body?.classes !== null && typeof body?.classes === 'object' ? body.classes : undefined;
  } catch {
    return undefined;
  }
}

/** Turns the peer's counting on or off (off by default: the latency workloads never pay for it). */
export async function setBilling(peer, enabled) {
  const response = await fetch(new URL(`/bench/billing?enabled=${enabled ? 1 : 0}`, peer.url), {
    method: 'POST',
    signal: AbortSignal.timeout(5_000),
  });
  if (!response.ok) throw new Error(`POST /bench/billing: HTTP ${response.status}`);
}

/** How long after an operation its own deferred work may still run (writes after the answer). */
export const B1_SETTLE_MS = 300;

/** The counts of `count` operations run by `run`: the counters before, and `settleMs` after it returned. */
export async function measure(peer, count, run, settleMs = B1_SETTLE_MS) {
  const before = await billingOf(peer);
  await run();
  await sleep(settleMs);
  return perOperation(before, await billingOf(peer), count);
}
