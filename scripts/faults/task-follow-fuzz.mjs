// fuzz.mjs's tasks/stream phase: fast-check generates `tasks/stream` requests — `taskId` a real
// task's, a real one spoiled, well-formed but never issued, any string (unicode, lone surrogates,
// 100,000 characters), a number, null, an array, an object or missing; `after` omitted, within
// the task's timeline, its last event, past it, negative, fractional, 2^53, 1e400, a string,
// null, an array, and raw JSON text (NaN, Infinity, 01, +1, 0x1, -0, 1.0); now and then an id too
// long to keep or the extension not declared — and each answer is judged against what the SEP
// and this server's contract say it must be:
//   - never a 5xx, and any 4xx the JSON-RPC error shape (fuzz-answers.ts errorShapeProblem);
//   - not JSON: -32700; taskId not a string, `after` not a non-negative safe integer, `after`
//     past the task's last event: -32602; the extension not declared: -32021; an id over 512
//     characters of JSON: -32600;
//   - an unknown task: the very error `tasks/get` gives for the same id (sent alongside);
//   - a real task: the events right after `after` (from seq 0 without it), each seq +1, each of
//     this task (params.taskId and related-task _meta), and for an ended task its terminal status
//     event at its last seq, then `{resultType: "complete"}` — at once, as JSON, when `after` is
//     its last event; a task still going (working, input_required) streams and is left after a
//     little reading (every stream is read for at most READ_OPEN_MS / READ_ENDED_MS);
//   - never events_gone: nothing is dropped from these tasks' timelines (TASK_MAX_EVENTS 10,000).
// `too_many_task_streams` (a running task's streams the server has not yet seen closed) is a
// typed refusal, counted apart.
import fc from 'fast-check';
import { SseParser } from '../../src/core/sse-parser.ts';
import { errorShapeProblem, isObject } from '../../test/fuzz/fuzz-answers.ts';
import { answerOf, createChatter, isTerminalStatus, modernMeta, postModern, readTaskStream } from './task-follow-raw.mjs';

const RELATED = 'io.modelcontextprotocol/related-task';
const READ_ENDED_MS = 5_000;
const READ_OPEN_MS = 600;
const IDLE_OPEN_MS = 250;
/** Far past any running task's last event during a run. */
const FAR = 1_000_000_000;
const MAX_PRINTED = 20;
const NOT_FOUND = { code: -32602, message: 'Failed to retrieve task: Task not found' };

const taskRef = fc.oneof(
  { weight: 10, arbitrary: fc.nat().map((pick) => ({ kind: 'real', pick })) },
  {
    weight: 2,
    arbitrary: fc.record({ pick: fc.nat(), at: fc.nat({ max: 21 }), how: fc.nat({ max: 4 }) }).map((r) => ({ kind: 'spoiled', ...r })),
  },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{21}[AQgw]$/).map((value) => ({ kind: 'value', value })) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 }))
      .map((value) => ({ kind: 'value', value })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('', ' ', 'é', '\u0000', '\ud800', 'A'.repeat(22), 'A'.repeat(23), 'A'.repeat(100_000), '🙂'.repeat(11), '../x', 'null')
      .map((value) => ({ kind: 'value', value })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.integer(),
        fc.double(),
        fc.constant(null),
        fc.boolean(),
        fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
        fc.object({ maxDepth: 1 }),
      )
      .map((value) => ({ kind: 'value', value })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'missing' }) },
);

const afterRef = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'missing' }) },
  { weight: 8, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((frac) => ({ kind: 'within', frac })) },
  { weight: 3, arbitrary: fc.constant({ kind: 'last' }) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 3 }).map((k) => ({ kind: 'beyond', k })) },
  {
    weight: 4,
    arbitrary: fc
      .oneof(
        fc.integer({ min: -1000, max: -1 }),
        fc.constantFrom(-1, -0.5, 0.5, 1.5, 2 ** 53, 2 ** 53 - 1, -(2 ** 53), Number.MAX_VALUE, 1e21, 5e-324, 1e9),
        fc.double({ noNaN: true }),
        fc.string({ maxLength: 5 }),
        fc.constantFrom('0', '1', '', 'NaN', '-1'),
        fc.constant(null),
        fc.array(fc.nat({ max: 5 }), { maxLength: 2 }),
        fc.constant({}),
        fc.boolean(),
      )
      .map((value) => ({ kind: 'value', value })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('NaN', 'Infinity', '-Infinity', '1e400', '-0', '1.0', '2e0', '0x1', '01', '+1', '1e-400', '-', '1_0')
      .map((text) => ({ kind: 'raw', text })),
  },
);

const requestArb = fc.record({
  task: taskRef,
  after: afterRef,
  id: fc.oneof(
    { weight: 20, arbitrary: fc.nat() },
    { weight: 4, arbitrary: fc.string({ maxLength: 8 }) },
    { weight: 1, arbitrary: fc.constant('i'.repeat(600)) },
  ),
  declared: fc.oneof({ weight: 20, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
});

/**
 * `Mcp-Name` as a careful client sends it: the id as is when it is a plain header value, else
 * base64'd; nothing for a non-string, a huge one, or one with a lone surrogate.
 */
function nameHeader(taskId) {
  // A lone surrogate has no UTF-8: no header can name it.
  if (typeof taskId !== 'string' || taskId.length > 1_000 || !taskId.isWellFormed()) return undefined;
  if (/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(taskId) && !taskId.startsWith('=?base64?')) return taskId;
  let binary = '';
  for (const byte of new TextEncoder().encode(taskId)) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}

/** A real id with one character changed: well-formed or not, never issued (with 128 random bits). */
function spoil(id, at, how) {
  const chars = [...id];
  const c = chars[at % chars.length];
  switch (how) {
    case 0:
      chars[at % chars.length] = c === 'A' ? 'B' : 'A';
      return chars.join('');
    case 1:
      return id.toLowerCase() === id ? id.toUpperCase() : id.toLowerCase();
    case 2:
      return ` ${id}`;
    case 3:
      return `${id}A`;
    default:
      return id.slice(0, -1);
  }
}

/**
 * The real tasks the fuzz aims at: ended ones of several lengths (and a cancelled one), some
 * waiting in input_required (a fixed timeline that never ends), and some still working (one
 * event group a second). `last`: the highest seq known to exist.
 */
async function openTasks(url) {
  const tasks = [];
  for (const steps of [0, 1, 3, 20]) {
    const taskId = await createChatter(url, { steps, interval_ms: 0 });
    tasks.push({ taskId, kind: 'ended', last: 3 * steps + 1 });
  }
  for (let i = 0; i < 3; i++) {
    const taskId = await createChatter(url, { steps: 3, interval_ms: 0, ask: 1 });
    tasks.push({ taskId, kind: 'waiting', last: 4 });
  }
  for (let i = 0; i < 3; i++) {
    const taskId = await createChatter(url, { steps: 100_000, interval_ms: 1_000 });
    tasks.push({ taskId, kind: 'working', last: 0 });
  }
  const cancelled = await createChatter(url, { steps: 100_000, interval_ms: 50 });
  await readTaskStream(url, cancelled, { until: (events) => events.length >= 7, ms: 10_000 });
  await answerOf(await postModern(url, 'tasks/cancel', { taskId: cancelled }, { name: cancelled }));
  tasks.push({ taskId: cancelled, kind: 'ended', last: undefined });
  // Each timeline as it stands: ended ones must end with their terminal event, waiting ones sit at input_required.
  for (const task of tasks) {
    const expectEnd = task.kind === 'ended';
    const until = (events) => (task.kind === 'waiting' ? events.at(-1)?.payload?.status === 'input_required' : !expectEnd);
    const read = await readTaskStream(url, task.taskId, { until, ms: 20_000 });
    const last = read.events.at(-1);
    if (expectEnd && !(read.ended === 'response' && isTerminalStatus(last))) {
      throw new Error(`setup: task ${task.taskId} did not end (${read.ended}, ${JSON.stringify(last)})`);
    }
    if (task.kind === 'waiting' && !(last?.seq === 4 && last.payload?.status === 'input_required' && read.ended === 'until')) {
      throw new Error(`setup: task ${task.taskId} is not waiting at seq 4: ${JSON.stringify(last)}`);
    }
    task.last = last?.seq ?? 0;
  }
  return tasks;
}

/** The body text of one generated request, and what it is made of. */
function build(generated, tasks) {
  let task;
  let taskId;
  switch (generated.task.kind) {
    case 'real':
      task = tasks[generated.task.pick % tasks.length];
      taskId = task.taskId;
      break;
    case 'spoiled':
      taskId = spoil(tasks[generated.task.pick % tasks.length].taskId, generated.task.at, generated.task.how);
      break;
    case 'value':
      taskId = generated.task.value;
      break;
  }
  const last = task?.last ?? 20;
  let after;
  let raw;
  switch (generated.after.kind) {
    case 'within':
      after = Math.floor(generated.after.frac * last);
      break;
    case 'last':
      after = last;
      break;
    case 'beyond':
      // A working task's timeline grows while the fuzz runs: only far past it is surely beyond.
      after = task?.kind === 'working' ? FAR + generated.after.k : last + generated.after.k;
      break;
    case 'value':
      after = generated.after.value;
      break;
    case 'raw':
      raw = generated.after.text;
      break;
  }
  const meta = generated.declared ? modernMeta('fuzz') : { ...modernMeta('fuzz'), 'io.modelcontextprotocol/clientCapabilities': {} };
  const params = { ...(generated.task.kind !== 'missing' && { taskId }), ...(after !== undefined && { after }), _meta: meta };
  let text = JSON.stringify({ jsonrpc: '2.0', id: generated.id, method: 'tasks/stream', params });
  if (raw !== undefined) text = text.replace('"params":{', `"params":{"after":${raw},`);
  return { text, task, id: generated.id };
}

/** What the server must answer to `text` (the body as it will parse it). */
function oracle(text, tasks) {
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    return { kind: 'error', code: -32700 };
  }
  const { params, id } = message;
  const { taskId, after } = params;
  if (typeof taskId !== 'string') return { kind: 'error', code: -32602 };
  const declared = isObject(params._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.['io.modelcontextprotocol/tasks']);
  if (!declared) return { kind: 'error', code: -32021 };
  if (after !== undefined && !(typeof after === 'number' && Number.isSafeInteger(after) && after >= 0))
    return { kind: 'error', code: -32602 };
  if (JSON.stringify(id).length > 512) return { kind: 'error', code: -32600 };
  const task = tasks.find((t) => t.taskId === taskId);
  if (task === undefined) return { kind: 'unknown', taskId };
  const from = after === undefined ? 0 : after + 1;
  if (task.kind === 'working') {
    if (after !== undefined && after >= FAR) return { kind: 'error', code: -32602, beyond: true };
    // Past what was seen, short of FAR: it may or may not exist yet; a stream if it does.
    return { kind: 'open', task, from, maybeBeyond: after !== undefined && after > task.last };
  }
  if (after !== undefined && after > task.last) return { kind: 'error', code: -32602, beyond: true };
  if (task.kind === 'ended') return after === task.last ? { kind: 'complete', task } : { kind: 'ended', task, from };
  return { kind: 'open', task, from, maybeBeyond: false };
}

/** Reads an answer within `ms` (`idleMs` of quiet ends an open stream): its text, whether it ended, and its frames' messages. */
async function read(response, ms, idleMs, leave) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + ms;
  let text = '';
  let ended = false;
  try {
    for (;;) {
      const wait = Math.min(idleMs, deadline - Date.now());
      if (wait <= 0) break;
      let timer;
      const chunk = await Promise.race([reader.read(), new Promise((resolve) => (timer = setTimeout(() => resolve('quiet'), wait)))]);
      clearTimeout(timer);
      if (chunk === 'quiet') break;
      if (chunk.done) {
        ended = true;
        break;
      }
      if (text.length < 2_000_000) text += decoder.decode(chunk.value, { stream: true });
    }
  } catch {
    ended = true; // cut by the server: judged on what came
  } finally {
    if (!ended) leave();
    await reader.cancel().catch(() => undefined);
  }
  return { text, ended };
}

/** The messages of an SSE text; a frame that is not JSON becomes a string. */
function framesOf(text) {
  const parser = new SseParser();
  return parser
    .push(text)
    .concat(parser.end())
    .filter((frame) => frame.data !== undefined && frame.data !== '')
    .map((frame) => {
      try {
        return JSON.parse(frame.data);
      } catch {
        return frame.data;
      }
    });
}

/** What is wrong with the events of a stream of `task` that should start at `from` (empty: nothing). */
function eventProblems(messages, task, from, id) {
  const problems = [];
  let expected = from;
  let response;
  for (const message of messages) {
    if (!isObject(message) || message.jsonrpc !== '2.0') {
      problems.push(`not a JSON-RPC message: ${JSON.stringify(message).slice(0, 200)}`);
      continue;
    }
    if (response !== undefined) problems.push(`a message after the response: ${JSON.stringify(message).slice(0, 200)}`);
    if (message.method === undefined) {
      response = message;
      continue;
    }
    if (message.method !== 'notifications/tasks/event') {
      problems.push(`not a task event: ${message.method}`);
      continue;
    }
    const event = message.params;
    if (event?.seq !== expected) problems.push(`seq ${event?.seq} where ${expected} was due`);
    expected = (Number.isSafeInteger(event?.seq) ? event.seq : expected) + 1;
    if (event?.taskId !== task.taskId || event?._meta?.[RELATED]?.taskId !== task.taskId)
      problems.push(`event ${event?.seq} not of this task`);
    if (typeof event?.type !== 'string' || !isObject(event?.payload)) problems.push(`event ${event?.seq} without a type or payload`);
    if (isTerminalStatus(event) && task.kind !== 'ended') problems.push(`a terminal event on a ${task.kind} task`);
    if (task.kind === 'ended' && event?.seq > task.last) problems.push(`seq ${event.seq} past the task's end (${task.last})`);
  }
  if (response !== undefined && (response.id !== id || response.result?.resultType !== 'complete')) {
    problems.push(`the stream's response: ${JSON.stringify(response).slice(0, 200)}`);
  }
  return { problems, response, lastSeq: expected - 1 };
}

/**
 * Runs `requests` generated tasks/stream requests (seeded by `seed`) at `url`, `concurrency` at a
 * time. Returns the tally and its one line.
 */
export async function fuzzTaskStreams(url, { requests, seed, concurrency = 4 }) {
  const tasks = await openTasks(url);
  const tally = { requests: 0, fiveXX: 0, wrong: 0, eventsGone: 0, unended: 0, busy: 0, parity: 0 };
  const busyBy = { waiting: 0, working: 0 };
  let printed = 0;
  const report = (kind, what, text, answer) => {
    tally[kind]++;
    if (printed++ < MAX_PRINTED)
      console.error(`tasks/stream ${kind}: ${what}\n  request: ${text.slice(0, 400)}\n  answer: ${answer.slice(0, 600)}`);
  };
  const generated = fc.sample(requestArb, { seed, numRuns: requests });
  let next = 0;
  const worker = async () => {
    while (next < generated.length) {
      const { text, id } = build(generated[next++], tasks);
      const expected = oracle(text, tasks);
      let parsedId;
      try {
        parsedId = JSON.parse(text).params?.taskId;
      } catch {
        parsedId = undefined;
      }
      const leave = new AbortController();
      let response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'MCP-Protocol-Version': '2026-07-28',
            'Mcp-Method': 'tasks/stream',
            ...(nameHeader(parsedId) !== undefined && { 'Mcp-Name': nameHeader(parsedId) }),
          },
          body: text,
          signal: AbortSignal.any([leave.signal, AbortSignal.timeout(30_000)]),
        });
      } catch (error) {
        tally.requests++;
        report('fiveXX', `no answer: ${String(error)}`, text, '');
        continue;
      }
      tally.requests++;
      const type = (response.headers.get('content-type') ?? '').toLowerCase();
      const sse = type.startsWith('text/event-stream');
      const open = expected.kind === 'open';
      const { text: body, ended } = await read(
        response,
        sse && open ? READ_OPEN_MS : READ_ENDED_MS,
        sse && open ? IDLE_OPEN_MS : READ_ENDED_MS,
        () => leave.abort(),
      );
      const answer = `${response.status} ${type} ${body}`;
      if (response.status >= 500) {
        report('fiveXX', `status ${response.status}`, text, answer);
        continue;
      }
      if (response.status >= 400) {
        const problem = errorShapeProblem(body, type);
        if (problem !== undefined) report('wrong', `error body not the JSON-RPC error shape: ${problem}`, text, answer);
      }
      let json;
      if (!sse) {
        try {
          json = JSON.parse(body);
        } catch {
          report('wrong', 'neither SSE nor JSON', text, answer);
          continue;
        }
      }
      const error = json?.error;
      if (error?.data?.reason === 'events_gone' || error?.code === -32010) {
        report('eventsGone', 'events_gone for a retained range', text, answer);
        continue;
      }
      if (error?.data?.reason === 'too_many_task_streams' && expected.kind === 'open') {
        tally.busy++;
        busyBy[expected.task.kind]++;
        continue;
      }
      switch (expected.kind) {
        case 'error':
          if (error?.code !== expected.code) report('wrong', `expected error ${expected.code}`, text, answer);
          else if (expected.beyond && !/beyond|no events/.test(error.message))
            report('wrong', 'expected the "beyond" refusal', text, answer);
          break;
        case 'unknown': {
          // tasks/get needs its Mcp-Name (the SDK checks it against taskId): a huge id, which no header carries, is judged alone.
          const name = nameHeader(expected.taskId);
          let get;
          if (name !== undefined) {
            get = await answerOf(await postModern(url, 'tasks/get', { taskId: expected.taskId }, { name }));
            tally.requests++;
          }
          const same =
            get === undefined ||
            JSON.stringify([error?.code, error?.message, error?.data]) ===
              JSON.stringify([get.error?.code, get.error?.message, get.error?.data]);
          if (!same) report('parity', `tasks/get says ${JSON.stringify(get.error ?? get)}`, text, answer);
          else if (error?.code !== NOT_FOUND.code || error?.message !== NOT_FOUND.message) {
            report('wrong', 'expected the unknown-task error', text, answer);
          }
          break;
        }
        case 'complete':
          if (sse || json?.result?.resultType !== 'complete' || json?.id !== id)
            report('wrong', 'expected {resultType: "complete"} at once', text, answer);
          break;
        case 'ended': {
          if (!sse) {
            report('wrong', 'expected a stream', text, answer);
            break;
          }
          const { problems, response: end, lastSeq } = eventProblems(framesOf(body), expected.task, expected.from, id);
          if (!ended || end === undefined)
            report('unended', `the stream of an ended task did not end within ${READ_ENDED_MS} ms`, text, answer);
          else if (lastSeq !== expected.task.last) problems.push(`ended at seq ${lastSeq}, not ${expected.task.last}`);
          if (problems.length > 0) report('wrong', problems.slice(0, 3).join('; '), text, answer);
          break;
        }
        case 'open': {
          if (!sse) {
            // Past a working task's last event but short of FAR: refused as beyond, if it did not exist yet.
            if (!(expected.maybeBeyond && error?.code === -32602)) report('wrong', 'expected a stream', text, answer);
            break;
          }
          const { problems, response: end, lastSeq } = eventProblems(framesOf(body), expected.task, expected.from, id);
          if (end !== undefined) problems.push('a task still going answered its stream');
          if (expected.task.kind === 'working') expected.task.last = Math.max(expected.task.last, lastSeq);
          if (problems.length > 0) report('wrong', problems.slice(0, 3).join('; '), text, answer);
          break;
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    // The tasks still going are cancelled: the server is stopped after, but leave it tidy.
    for (const task of tasks.filter((t) => t.kind !== 'ended')) {
      await postModern(url, 'tasks/cancel', { taskId: task.taskId }, { name: task.taskId })
        .then((r) => r.body?.cancel())
        .catch(() => {});
    }
  }
  const line = `fuzz: tasks/stream: ${tally.requests} requests, ${tally.fiveXX} 5xx, ${tally.wrong} wrong answers, ${tally.parity} unknown-task errors unlike tasks/get, ${tally.eventsGone} events_gone, ${tally.unended} unended streams; ${tally.busy} too_many_task_streams (${busyBy.waiting} of tasks waiting, ${busyBy.working} working) (seed ${seed})`;
  return { tally, line, failed: tally.fiveXX + tally.wrong + tally.parity + tally.eventsGone + tally.unended > 0 };
}
