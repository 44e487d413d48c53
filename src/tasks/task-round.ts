/**
 * One round of a task's tool, inside the task's object: the SDK's own modern handler serves
 * the client's `tools/call` again, in-process, so the tool sees what it would have seen at the
 * edge — validated arguments, the client's capabilities, `inputResponses` and `requestState`
 * on a later round, an abort signal — and all of McpServer's checks still apply. Each
 * notification the tool sends (progress, log lines) reaches the task's object as it is sent,
 * through the round's NotificationTap, and becomes an event of the task's timeline (MCP has no
 * other way to carry them for tasks); the answer's final message becomes the round's outcome.
 */
import { SERVER_INFO_META_KEY, type McpHttpHandler } from '@modelcontextprotocol/server';
import { SseParser } from '../core/sse-parser.ts';
import { TASK_ERRORS, type RunOutcome, type TaskError } from '../core/task.ts';
import type { NotificationTap } from './notification-tap.ts';
import { taskScope } from './run-task.ts';
import type { TaskCall } from './task-store.ts';

export interface RoundOptions {
  /** A handler built for this round alone, its servers attached to `tap` (it is closed when the round ends or is cancelled). */
  readonly handler: McpHttpHandler;
  /** Where the tool's notifications (its events, run-task.ts `emitTaskEvent`, among them) go, in order. */
  readonly tap: NotificationTap;
  readonly call: TaskCall;
  /** After `tasks/update`: the answers and the state the tool asked to get back. */
  readonly retry?: { readonly inputResponses: Record<string, unknown>; readonly requestState: string | null };
  /** Aborted by `tasks/cancel`: the tool's `ctx.mcpReq.signal` fires. */
  readonly signal: AbortSignal;
}

/** The progress token the round's request carries, so that a tool reporting progress reports it here. */
const PROGRESS_TOKEN = 'task';

export async function runRound({ handler, tap, call, retry, signal }: RoundOptions): Promise<RunOutcome> {
  const cancel = () => void handler.close();
  signal.addEventListener('abort', cancel, { once: true });
  let thrown: TaskError | undefined;
  try {
    const { request, parsedBody } = roundRequest(call, retry);
    // The tool sees who asked, as at the edge (ctx.http.authInfo), minus the token itself.
    const { principal } = call;
    const authInfo = { token: '', clientId: principal.clientId ?? '', scopes: [...principal.scopes], extra: { principal } };
    const response = await taskScope.run({ kind: 'run', fail: (error) => (thrown = error) }, () =>
      handler.fetch(request, { authInfo, parsedBody }),
    );
    const answer = await answerOf(response, tap);
    // Everything the tool sent is stored before its outcome; one not stored fails the round,
    // whatever the tool made of its rejected notify.
    tap.close();
    if (tap.failure !== undefined) throw tap.failure.error;
    if (thrown !== undefined) return { kind: 'error', error: thrown };
    return answer === undefined ? { kind: 'error', error: TASK_ERRORS.noAnswer } : outcomeOf(answer);
  } finally {
    signal.removeEventListener('abort', cancel);
    tap.close();
    await handler.close();
  }
}

/**
 * The round's request: the call's `Mcp-*` headers, and its message, which the SDK is handed
 * parsed, as the edge hands it the body it parsed (edge/modern-route.ts); like the edge's, the
 * request has no body left to read. Sent as a body instead, the message was serialised here
 * only for the SDK to clone the request, read it back and parse it: ~0.2 ms of a round under
 * local workerd (bench/README.md, T1/T2).
 */
function roundRequest(call: TaskCall, retry: RoundOptions['retry']): { request: Request; parsedBody: unknown } {
  const { inputResponses, requestState, _meta, ...params } = call.message.params as Record<string, unknown> & {
    inputResponses?: Record<string, unknown>;
    requestState?: string;
    _meta?: Record<string, unknown>;
  };
  const first = { inputResponses, requestState: requestState ?? null };
  // A later round runs the code before runTask again, which must find the answers it had
  // (an MRTR question asked before the task): the call's answers, with the task's on top,
  // and the state the task's last round asked to get back, else the call's.
  const round =
    retry === undefined
      ? first
      : {
          inputResponses: { ...first.inputResponses, ...retry.inputResponses },
          requestState: retry.requestState ?? first.requestState,
        };
  const message = {
    ...call.message,
    params: {
      ...params,
      _meta: { progressToken: PROGRESS_TOKEN, ..._meta },
      ...(round.inputResponses !== undefined && { inputResponses: round.inputResponses }),
      ...(round.requestState !== null && { requestState: round.requestState }),
    },
  };
  const request = new Request('https://task.internal/mcp', {
    method: 'POST',
    headers: { ...call.headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
  });
  return { request, parsedBody: message };
}

type Answer = { result?: Record<string, unknown>; error?: TaskError };

/**
 * The round's answer: the message the tap took on its way to the transport, where the SDK
 * answered with it alone (JSON, its body that message); else read from the response
 * (readAnswer), with any notification the tap did not take, in order. A response with no body
 * (the round cancelled before the answer) has none, whatever the tool sent after.
 */
async function answerOf(response: Response, tap: NotificationTap): Promise<Answer | undefined> {
  const taken = tap.answer as Answer | undefined;
  if (taken === undefined || response.body === null || isEventStream(response)) return readAnswer(response, tap);
  await response.body.cancel();
  return taken;
}

const isEventStream = (response: Response): boolean => response.headers.get('Content-Type')?.startsWith('text/event-stream') ?? false;

/**
 * The final JSON-RPC message of the SDK's answer. Notifications the tap kept are not in it; any
 * other before it (were the SDK to connect the server some other way) goes to the tap too.
 */
async function readAnswer(response: Response, tap: NotificationTap): Promise<Answer | undefined> {
  if (response.body === null) return undefined;
  if (!isEventStream(response)) return parse(await response.text());
  const parser = new SseParser();
  const text = new TextDecoder();
  let answer: Answer | undefined;
  // A reader's read() loop, not `for await`: under workerd the stream's async iterator costs
  // ~15 µs more a chunk, and the SDK's answer is one chunk per notification (measured: 5,000
  // chunks in 80–95 ms against 10–26 ms).
  const reader = response.body.getReader();
  for (;;) {
    const { done, value: chunk } = await reader.read();
    if (done) break;
    for (const { data } of parser.push(text.decode(chunk, { stream: true }))) {
      if (data === undefined) continue;
      const message = parse(data) as (Answer & { method?: string; params?: Record<string, unknown> }) | undefined;
      if (message?.method !== undefined) {
        // A failure to store is kept by the tap (and fails the round); nobody awaits this one.
        tap.receive(message.method, message.params ?? {}).catch(() => undefined);
      } else if (message !== undefined) {
        answer = message;
      }
    }
  }
  return answer;
}

function parse(text: string): Answer | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null ? (value as Answer) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A JSON-RPC error fails the task; an MRTR question puts it in `input_required` (the state
 * stays with the task, never on the wire); any other result completes it — a tool's own
 * `isError` result included: "tool execution errors ... are reported as completed".
 */
function outcomeOf({ result, error }: Answer): RunOutcome {
  if (error !== undefined) {
    const { code, message, data } = error;
    return { kind: 'error', error: { code, message, ...(data !== undefined && { data }) } };
  }
  if (result === undefined) return { kind: 'error', error: TASK_ERRORS.noAnswer };
  const { resultType, _meta, ...rest } = result;
  if (resultType === 'input_required') {
    const inputRequests = (result.inputRequests ?? {}) as Record<string, unknown>;
    if (Object.keys(inputRequests).length === 0) return { kind: 'error', error: TASK_ERRORS.nothingAsked };
    return { kind: 'input_required', inputRequests, requestState: typeof result.requestState === 'string' ? result.requestState : null };
  }
  // The SDK's serverInfo stamp belongs to the round's answer, not to the tool's result.
  const { [SERVER_INFO_META_KEY]: _server, ...meta } = (_meta ?? {}) as Record<string, unknown>;
  return { kind: 'result', result: Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest };
}
