/**
 * followTask: a task's event stream (`tasks/stream`, SEP-2694, Resumable Task Event Streams,
 * draft) followed to the task's end across any number of broken connections, then the task's
 * final state read with `tasks/get`.
 *
 * The follower keeps one cursor, the seq of the last event whose `onEvent` returned: "Clients
 * SHOULD persist the latest sequence number only after fully processing that event. On
 * reconnect, clients SHOULD pass that sequence number as after." A stream cut before its result
 * (the body ends or fails) is opened again with that `after`, after the backoff (backoff.ts); an
 * event the server sends again is dropped by its seq ("Clients MUST tolerate duplicate delivery
 * after reconnect and SHOULD de-duplicate events by (taskId, seq)"; every event is checked to be
 * of this task, so the seq alone decides), and one whose seq skips ahead fails the follow:
 * nothing past a gap is delivered. One stream at a time: "A receiver MUST allow at most one
 * active tasks/stream request per task per connection", and the next opens only once the last is
 * closed.
 *
 * The final result is not an event: it stays in `tasks/get`. A stream may end before the task
 * does ("Receivers MAY close a stream before a task reaches a terminal state"), so its result
 * alone does not mean the task ended: after each one the task is read, and streamed again while
 * it runs. This server's streams end right after its terminal status event; a stream that did
 * not show one (another server's event types) is confirmed by one more stream once the task has
 * ended, which is complete by the SEP's rule: with nothing retained after the cursor on an ended
 * task, the receiver "MUST return TaskStreamResult immediately".
 *
 * The requests themselves, and what a refusal of one means (another attempt or a typed error),
 * are task-opener.ts; this file holds the follow: the attempts and their backoff, and the reading
 * of each answer, event by event, to the task's end.
 */
import { SseParser } from '../core/sse-parser.ts';
import { bodyText, idleLimit } from './idle-limit.ts';
import { sseBody, sseFrames } from './sse-frames.ts';
import { isTerminal } from '../core/task.ts';
import { reconnectDelay, reconnectOptions, STEADY_CONNECTION_MS, type ReconnectOptions } from './backoff.ts';
import { ReconnectExhaustedError, TaskFollowCancelledError, TaskProtocolError } from './errors.ts';
import { mediaType, sleep } from './http.ts';
import { isTerminalEvent, readStreamMessage, readTaskAnswer, type StreamMessage } from './task-events.ts';
import { TaskOpener, Transient, type TaskTarget } from './task-opener.ts';
import type { DetailedTask, TaskStreamEvent } from './task-types.ts';

/** Where the requests go and what they carry (TaskTarget, task-opener.ts), and how the task is followed. */
export interface FollowTaskOptions extends TaskTarget {
  /** The last event already processed (a cursor kept from an earlier follow): the stream starts after it. */
  readonly after?: number;
  /**
   * Each event once, in seq order; the next waits until this returns (or resolves), and only then
   * does the event count as processed. A throw ends the follow with that error.
   */
  readonly onEvent?: (event: TaskStreamEvent) => void | Promise<void>;
  /** Aborting closes the stream and rejects with TaskFollowCancelledError. The task goes on: `tasks/cancel` ends it. */
  readonly signal?: AbortSignal;
  readonly reconnect?: Partial<ReconnectOptions>;
  /**
   * A stream that carries nothing for this long, not even a heartbeat, is taken as dead and
   * resumed with `after` (a dropped connection can leave a read waiting forever); so is a
   * request not answered within it. Default
   * DEFAULT_IDLE_TIMEOUT_MS (45 s, three of this server's heartbeats); 0: no limit.
   */
  readonly idleTimeoutMs?: number;
}

export interface FollowedTask {
  /** The task's final state from `tasks/get`: completed with its `result`, failed with its `error`, or cancelled. */
  readonly task: DetailedTask;
  /** The last event processed, a cursor for a later follow; undefined if there was none (and no `after` was given). */
  readonly lastSeq: number | undefined;
}

/**
 * Follows task `taskId` to its end: every event to `onEvent`, then its final state.
 *
 * ```ts
 * import { followTask, readTaskEvent, TaskEventsGoneError } from 'mcp-edge-sessions/client';
 *
 * try {
 *   const { task } = await followTask({
 *     url: 'https://mcp.example.com/mcp',
 *     taskId,
 *     after: await loadCursor(taskId), // undefined the first time: every event the server retains
 *     headers: { Authorization: `Bearer ${token}` },
 *     onEvent: async (event) => {
 *       const known = readTaskEvent(event); // payloads are untrusted: this checks our types' shapes
 *       if (known?.kind === 'progress') showProgress(known.progress, known.total);
 *       await saveCursor(taskId, event.seq);
 *     },
 *   });
 *   if (task.status === 'completed') show(task.result);
 * } catch (error) {
 *   // The cursor is older than what the server keeps: start again from its oldest event, or report the gap.
 *   // (No cursor, `after` omitted, is "from the oldest": -1 is not a cursor, and is refused.)
 *   if (error instanceof TaskEventsGoneError) await saveCursor(taskId, error.earliestSeq ? error.earliestSeq - 1 : undefined);
 *   throw error;
 * }
 * ```
 *
 * Rejects with TaskEventsGoneError, TaskRefusedError (`-32602`: a task unknown to this principal,
 * or a cursor it never issued), TaskMethodNotFoundError (no task streams served), TaskProtocolError
 * (a gap, another task's event), HttpStatusError, ReconnectExhaustedError (5xx, 429, the network
 * or cuts, past the reconnect budget without progress), TaskFollowCancelledError, or what
 * `onEvent` threw.
 */
export async function followTask(options: FollowTaskOptions): Promise<FollowedTask> {
  return new TaskFollower(options).run();
}

class TaskFollower {
  readonly #options: FollowTaskOptions;
  readonly #taskId: string;
  readonly #reconnect: ReconnectOptions;
  readonly #idleTimeoutMs: number | undefined;
  readonly #signal: AbortSignal;
  readonly #opener: TaskOpener;
  #lastSeq: number | undefined;
  #nextId = 1;
  /** The server's last `retry:`, the backoff's base. */
  #retryMs: number | undefined;
  /** This server's terminal status event was processed: the stream that ends after it is the last. */
  #ended = false;
  /** The current attempt processed an event: progress starts the count of attempts again. */
  #advanced = false;

  constructor(options: FollowTaskOptions) {
    const { taskId, after } = options;
    if (typeof taskId !== 'string' || taskId === '') throw new TypeError('taskId must be a non-empty string');
    // "The after parameter MUST be a non-negative integer."
    if (after !== undefined && !(Number.isSafeInteger(after) && after >= 0)) {
      throw new RangeError(`after must be a non-negative integer, got ${after}`);
    }
    this.#options = options;
    this.#taskId = taskId;
    this.#lastSeq = after;
    this.#reconnect = reconnectOptions(options.reconnect);
    // On by default for any server: a resume with `after` is a read, always safe, so a server that
    // sends no heartbeats costs at most one `tasks/stream` per idle limit while its task is quiet.
    this.#idleTimeoutMs = idleLimit(options.idleTimeoutMs, true);
    this.#signal = options.signal ?? new AbortController().signal;
    this.#opener = new TaskOpener(options, this.#idleTimeoutMs, this.#signal);
  }

  async run(): Promise<FollowedTask> {
    let confirming = false;
    for (;;) {
      await this.#retrying(() => this.#stream());
      const task = await this.#retrying(() => this.#get());
      if (isTerminal(task.status) && (this.#ended || confirming)) return { task, lastSeq: this.#lastSeq };
      confirming = isTerminal(task.status);
      // Closed while the task runs: the server's choice, not a failure; stream again at the pace of a first reconnect.
      if (!confirming) await sleep(Math.min(this.#reconnect.maxDelayMs, this.#retryMs ?? this.#reconnect.initialDelayMs), this.#signal);
    }
  }

  /** `attempt` until it succeeds or fails for good; attempts count only while none makes progress. */
  async #retrying<T>(attempt: () => Promise<T>): Promise<T> {
    let failures = 0;
    for (;;) {
      this.#throwIfAborted();
      this.#advanced = false;
      try {
        return await attempt();
      } catch (error) {
        // An abort surfaces as whatever the fetch or the read it interrupted threw.
        this.#throwIfAborted();
        if (!(error instanceof Transient)) throw error;
        if (this.#advanced) failures = 0;
        const delay = reconnectDelay(failures, this.#retryMs, this.#reconnect, error.retryAfterMs);
        if (delay === undefined) throw new ReconnectExhaustedError(failures, this.#lastSeq?.toString(), error.cause ?? error);
        failures++;
        await sleep(delay, this.#signal);
      }
    }
  }

  #throwIfAborted(): void {
    if (this.#signal.aborted) throw new TaskFollowCancelledError(this.#taskId, this.#lastSeq, this.#signal.reason);
  }

  /** One `tasks/stream`, read until its result. */
  async #stream(): Promise<void> {
    const id = this.#nextId++;
    const after = this.#lastSeq;
    const response = await this.#opener.post('tasks/stream', id, { taskId: this.#taskId, ...(after !== undefined && { after }) });
    if (!response.ok) return this.#opener.refused('tasks/stream', response, after);
    const type = mediaType(response);
    if (type === 'application/json') {
      // Answered at once: its result (nothing after the cursor of an ended task) or its refusal.
      const message = readStreamMessage(await jsonOf(response, this.#idleTimeoutMs), id, this.#taskId);
      if (message.kind === 'event' || message.kind === 'other')
        throw this.#violation('unexpected_response', 'a JSON answer that is not a response');
      await this.#take(message, after);
      return;
    }
    const body = await sseBody(response);
    const broken = (cause: unknown) => new Transient('the stream broke', { cause });
    const opened = Date.now();
    try {
      for await (const frames of sseFrames(body, this.#signal, broken, this.#idleTimeoutMs)) {
        for (const frame of frames) {
          if (frame.retry !== undefined) this.#retryMs = frame.retry;
          if (frame.data === undefined || frame.data === '' || (frame.event ?? 'message') !== 'message') continue;
          if ((await this.#take(readStreamMessage(parseJson(frame.data), id, this.#taskId), after)) === 'end') return;
        }
      }
    } finally {
      // A stream kept open a while, then ended (the server's connection age, a deploy), is not a failed attempt.
      if (Date.now() - opened >= STEADY_CONNECTION_MS) this.#advanced = true;
    }
    throw new Transient('the stream ended before its result');
  }

  /** Acts on one message of a stream: `end` at its result. */
  async #take(message: StreamMessage, after: number | undefined): Promise<'end' | 'more'> {
    switch (message.kind) {
      case 'event':
        await this.#process(message.event);
        return 'more';
      case 'end':
        return 'end';
      case 'error':
        throw this.#opener.failure('tasks/stream', 200, message.error, after);
      case 'other':
        return 'more';
      case 'invalid':
        throw this.#violation(message.reason, message.detail);
    }
  }

  async #process(event: TaskStreamEvent): Promise<void> {
    const last = this.#lastSeq;
    if (last !== undefined && event.seq <= last) return; // processed already: a replay after the resume
    // "Each subsequent event for that task MUST increment by exactly 1": a skipped seq is a lost event.
    if (last !== undefined && event.seq !== last + 1) throw this.#violation('gap', `event ${event.seq} came next`);
    this.#throwIfAborted(); // a chunk may hold several events: none is delivered after the abort
    await this.#options.onEvent?.(event);
    this.#lastSeq = event.seq;
    this.#advanced = true;
    if (isTerminalEvent(event)) this.#ended = true;
  }

  /** One `tasks/get`. */
  async #get(): Promise<DetailedTask> {
    const id = this.#nextId++;
    const response = await this.#opener.post('tasks/get', id, { taskId: this.#taskId });
    if (!response.ok) return this.#opener.refused('tasks/get', response, undefined);
    const idleMs = this.#idleTimeoutMs;
    const body = mediaType(response) === 'text/event-stream' ? await responseInStream(response, idleMs) : await jsonOf(response, idleMs);
    const answer = readTaskAnswer(body, id, this.#taskId);
    if (answer.kind === 'task') return answer.task;
    if (answer.kind === 'error') throw this.#opener.failure('tasks/get', 200, answer.error, undefined);
    throw this.#violation(answer.reason, answer.detail);
  }

  #violation(reason: TaskProtocolError['reason'], detail: string): TaskProtocolError {
    return new TaskProtocolError(this.#taskId, reason, this.#lastSeq, detail);
  }
}

/** A JSON body; one that cannot be read whole (or stops coming for `idleMs`) was cut. */
async function jsonOf(response: Response, idleMs: number | undefined): Promise<unknown> {
  try {
    return JSON.parse(await bodyText(response, idleMs));
  } catch (error) {
    throw new Transient('the JSON answer was cut', { cause: error });
  }
}

/** The response among an SSE answer's messages (a `tasks/get` may be answered so); one without it was cut. */
async function responseInStream(response: Response, idleMs: number | undefined): Promise<unknown> {
  let text: string;
  try {
    text = await bodyText(response, idleMs);
  } catch (error) {
    throw new Transient('the answer was cut', { cause: error });
  }
  const parser = new SseParser();
  for (const frame of parser.push(text).concat(parser.end())) {
    const message = frame.data === undefined ? undefined : parseJson(frame.data);
    if (typeof message === 'object' && message !== null && !('method' in message)) return message;
  }
  throw new Transient('the answer ended before its response');
}

/** The frame's JSON, or its text when it is not JSON (reported as not a JSON-RPC message). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
