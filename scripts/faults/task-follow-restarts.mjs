// restarts.mjs's task part: one SIGKILL of `wrangler dev` while a task's event stream is being
// followed, and what the stream says after the restart on the same state. A long `chatter` task
// (200 steps, 50 ms apart: 602 events if it ran to its end) is created and its `tasks/stream`
// read; after some events (more each kill) the server is killed — with the stream still being
// read (odd kills: the kill is the cut), or after the stream was left and the task went on unread
// for 0–450 ms (even kills: what it stored meanwhile must come back). After the restart,
// `tasks/stream` with `after` = the last seq seen must give, in order and each once:
//   every event stored after it (seq last+1, last+2, … with nothing skipped or repeated), then
//   the terminal status event, `failed` with error.data.reason `task_interrupted`, then the
//   stream's result — never `completed`, and nothing from a re-run (its com.example.step
//   numbers would start again at 1: they must only go up, one at a time);
// a second stream from the start must replay the same timeline event for event, and a moment
// later the task must be as it was (not run again: nothing after its terminal event, the same
// `tasks/get`).
import { setTimeout as sleep } from 'node:timers/promises';
import { createChatter, getTask, isTerminalStatus, readTaskStream } from './task-follow-raw.mjs';

const STEPS = 200;
const INTERVAL_MS = 50;
const STEP = 'com.example.step';

/** Events as comparable text, by seq. */
const bySeq = (events) => new Map(events.map((event) => [event.seq, JSON.stringify([event.type, event.payload])]));

/**
 * Kill number `kill`: `restart()` SIGKILLs the server and starts it again on the same state.
 * Returns the figures of this kill and a line describing it.
 */
export async function killMidTaskStream(url, kill, restart) {
  const figures = { interrupted: 0, gaps: 0, repeats: 0, reruns: 0, differences: 0, failures: 0 };
  const problems = [];
  const wrong = (kind, line) => {
    figures[kind]++;
    problems.push(line);
  };
  const taskId = await createChatter(url, { steps: STEPS, interval_ms: INTERVAL_MS });
  const wanted = 5 + ((13 * kill) % 400); // events seen before the kill
  const reading = kill % 2 === 1;
  let reached;
  const enough = new Promise((resolve) => {
    reached = resolve;
  });
  const first = readTaskStream(url, taskId, {
    ms: 60_000,
    until: (events) => {
      if (events.length >= wanted) reached();
      return !reading && events.length >= wanted; // reading: on until the kill cuts it
    },
  });
  // Bounded: a stream that ends (or fails) before `wanted` events ends the wait too.
  await Promise.race([enough, first]);
  if (!reading) await sleep((kill * 97) % 450);
  await restart();
  const before = await first;
  const seen = before.events;
  const lastSeq = seen.at(-1)?.seq;
  if (lastSeq === undefined || before.ended === 'response' || seen.some(isTerminalStatus)) {
    figures.failures++;
    return { figures, line: `task kill ${kill}: the stream before the kill ended ${before.ended} after ${seen.length} events` };
  }
  // Before the kill: 0, 1, 2, … as the stream delivered them.
  seen.forEach((event, i) => {
    if (event.seq !== i) wrong('gaps', `before the kill, event ${i} had seq ${event.seq}`);
  });

  const resumed = await readTaskStream(url, taskId, { after: lastSeq, ms: 30_000 });
  const rest = resumed.events;
  let expected = lastSeq + 1;
  for (const event of rest) {
    if (event.seq < expected) wrong('repeats', `seq ${event.seq} again after ${expected - 1}`);
    else if (event.seq > expected) wrong('gaps', `seq ${event.seq} came when ${expected} was due`);
    expected = Math.max(expected, event.seq + 1);
  }
  const terminal = rest.at(-1);
  const reported =
    isTerminalStatus(terminal) && terminal.payload.status === 'failed' && terminal.payload.error?.data?.reason === 'task_interrupted';
  if (reported) figures.interrupted++;
  else problems.push(`last event of the resumed stream: ${JSON.stringify(terminal)?.slice(0, 300)}`);
  if (resumed.ended !== 'response' || resumed.response?.result?.resultType !== 'complete') {
    figures.failures++;
    problems.push(`resumed stream ended ${resumed.ended}: ${JSON.stringify(resumed.response ?? String(resumed.error))}`);
  }
  const all = [...seen, ...rest];
  if (all.some((event) => event.type === 'mcp-edge-sessions.status' && event.payload?.status === 'completed'))
    wrong('reruns', 'a completed status event');
  if (rest.slice(0, -1).some(isTerminalStatus)) wrong('reruns', 'a terminal status event before the last');
  // A re-run would number its steps from 1 again: they must go 1, 2, 3, … across the kill.
  let step = 0;
  for (const event of all) {
    if (event.type !== STEP) continue;
    if (event.payload?.step !== step + 1) wrong('reruns', `com.example.step ${event.payload?.step} after step ${step}`);
    step = event.payload?.step;
  }

  // The whole timeline again, from the start: the same events as the two streams gave.
  const full = await readTaskStream(url, taskId, { ms: 30_000 });
  const once = bySeq(all);
  const again = bySeq(full.events);
  if (full.events.length !== once.size || full.ended !== 'response') {
    wrong('differences', `the full replay has ${full.events.length} events (${full.ended}), the streams gave ${once.size}`);
  }
  for (const [seq, text] of again) {
    if (once.get(seq) !== text) wrong('differences', `seq ${seq} replayed as ${text.slice(0, 200)}, was ${once.get(seq)?.slice(0, 200)}`);
  }

  // Not run again: a moment later, nothing after the terminal event, and tasks/get unchanged.
  const task = await getTask(url, taskId);
  await sleep(1_000);
  const later = await getTask(url, taskId);
  const after = await readTaskStream(url, taskId, { after: terminal?.seq ?? lastSeq, ms: 10_000 });
  if (JSON.stringify(later.result) !== JSON.stringify(task.result)) wrong('reruns', `tasks/get changed: ${JSON.stringify(later.result)}`);
  if (task.result?.status !== 'failed' || task.result?.error?.data?.reason !== 'task_interrupted') {
    problems.push(`tasks/get: ${JSON.stringify(task.result ?? task.error)}`);
    figures.failures++;
  }
  if (!after.json || after.response?.result?.resultType !== 'complete') {
    wrong('reruns', `a stream after the terminal event: ${after.events.length} events, ${JSON.stringify(after.response)}`);
  }

  const line =
    `task kill ${kill}: ${reading ? 'while reading' : 'while unread'}, resumed after seq ${lastSeq} (step ${seen.filter((e) => e.type === STEP).at(-1)?.payload?.step ?? 0}): ` +
    `${rest.length} events to seq ${terminal?.seq}, ${reported ? 'task_interrupted' : 'NOT reported'}` +
    (problems.length > 0 ? `\n  ${problems.slice(0, 8).join('\n  ')}` : '');
  return { figures, line };
}
