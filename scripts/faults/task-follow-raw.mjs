// Raw 2026-07-28 task requests for the scripts that check task event streams on the wire
// (soak.mjs's tasks client, restarts.mjs's mid-stream kills, fuzz.mjs's tasks/stream phase):
// one request with the Tasks extension declared, a `chatter` task created, a `tasks/stream`
// read frame by frame on the library's own SSE parser (Node 24 runs the .ts file as is).
import { SseParser } from '../../src/core/sse-parser.ts';

export const MODERN_VERSION = '2026-07-28';
export const TASKS_CAPABILITIES = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const STATUS = 'mcp-edge-sessions.status';

/** The `_meta` every 2026-07-28 request carries, the Tasks extension declared (and any other `capabilities`). */
export const modernMeta = (name = 'task-scripts', capabilities = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': { ...capabilities, ...TASKS_CAPABILITIES },
  'io.modelcontextprotocol/clientInfo': { name, version: '1' },
});

/** The headers of a 2026-07-28 request for `method` naming `name` (omitted when undefined). */
export const modernHeaders = (method, name) => ({
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': MODERN_VERSION,
  'Mcp-Method': method,
  ...(name !== undefined && { 'Mcp-Name': name }),
});

let nextId = 1;

/** POSTs one 2026-07-28 request (`params` gets the envelope); the Response, unread. */
export function postModern(url, method, params, { name, id = nextId++, timeoutMs = 15_000, signal, capabilities } = {}) {
  return fetch(url, {
    method: 'POST',
    headers: modernHeaders(method, name),
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta('task-scripts', capabilities) } }),
    signal: signal ?? AbortSignal.timeout(timeoutMs),
  });
}

/** The JSON-RPC answer of a request answered whole (JSON, or SSE whose last message is the response). */
export async function answerOf(response) {
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const parser = new SseParser();
    const messages = parser
      .push(text)
      .concat(parser.end())
      .flatMap((frame) => (frame.data ? [JSON.parse(frame.data)] : []));
    return messages.find((message) => !('method' in message)) ?? messages.at(-1);
  }
  return JSON.parse(text);
}

/** Creates a `chatter` task straight at `url`; its task id. With `ask`, the client declares form elicitation (the question needs it). */
export async function createChatter(url, args) {
  const capabilities = args.ask === undefined ? {} : { elicitation: { form: {} } };
  const answer = await answerOf(
    await postModern(url, 'tools/call', { name: 'chatter', arguments: args }, { name: 'chatter', capabilities }),
  );
  if (answer?.result?.resultType !== 'task' || typeof answer.result.taskId !== 'string') {
    throw new Error(`expected a task, got ${JSON.stringify(answer)}`);
  }
  return answer.result.taskId;
}

/** `tasks/get`: the JSON-RPC answer. */
export async function getTask(url, taskId) {
  return answerOf(await postModern(url, 'tasks/get', { taskId }, { name: taskId }));
}

/**
 * Opens `tasks/stream` for `taskId` after `after` (undefined: omitted) and reads it: every frame's
 * message in order (`events`: the notifications/tasks/event params; `response`: the JSON-RPC
 * response that ended it, if it came), until `until(events)` holds, the stream ends, or `ms`
 * pass; the rest is cancelled. `json`: answered with application/json (a refusal or the result at once).
 */
export async function readTaskStream(url, taskId, { after, until = () => false, ms = 30_000, signal } = {}) {
  const leave = new AbortController();
  const timer = setTimeout(() => leave.abort(new Error(`no end within ${ms} ms`)), ms);
  const aborts = signal === undefined ? leave.signal : AbortSignal.any([leave.signal, signal]);
  const out = { status: 0, json: false, events: [], response: undefined, other: [], ended: 'open', error: undefined };
  try {
    const response = await postModern(
      url,
      'tasks/stream',
      { taskId, ...(after !== undefined && { after }) },
      { name: taskId, signal: aborts },
    );
    out.status = response.status;
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      out.json = true;
      out.response = JSON.parse(await response.text());
      out.ended = 'answered';
      return out;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    try {
      for (;;) {
        const chunk = await reader.read();
        const frames = chunk.done
          ? parser.push(decoder.decode()).concat(parser.end())
          : parser.push(decoder.decode(chunk.value, { stream: true }));
        for (const frame of frames) {
          if (!frame.data) continue;
          const message = JSON.parse(frame.data);
          if (message.method === 'notifications/tasks/event') out.events.push(message.params);
          else if (!('method' in message)) out.response = message;
          else out.other.push(message);
          if (out.response !== undefined) {
            out.ended = 'response';
            return out;
          }
          if (until(out.events)) {
            out.ended = 'until';
            return out;
          }
        }
        if (chunk.done) {
          out.ended = 'cut';
          return out;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  } catch (error) {
    out.ended = leave.signal.aborted ? 'timeout' : 'error';
    out.error = error;
    return out;
  } finally {
    clearTimeout(timer);
  }
}

/** Whether an event is a terminal status event. */
export const isTerminalStatus = (event) => event?.type === STATUS && ['completed', 'failed', 'cancelled'].includes(event.payload?.status);
