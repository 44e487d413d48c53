/**
 * A task's `tasks/stream` connections (SEP-2694, draft), in its object: each stream request is
 * one SSE connection of the sessions' relay (session/relay-*.ts), reading the task's timeline
 * (task-timeline.ts) instead of a session stream's log. So the contract is the sessions' own:
 * every event stored before it is sent, written exactly once and in order after the client's
 * cursor, read from storage whenever the connection is behind; the Worker holds the client's
 * response, so a client streaming a task that waits (`input_required`) keeps no request open
 * here and the object may hibernate with its sockets.
 *
 * A stream's events are numbered by the relay from 1 — the relay's `n` is the task's seq n - 1
 * — because the relay's position 0 means "nothing delivered" and a task's first event is seq 0.
 * The answer to the request that opened a stream is not one of the task's events: it is the
 * connection's closing frame, written once the terminal event is through ("the stream ends
 * with" the empty result), never on a stream that was cut.
 *
 * "Connection", for the SEP's "at most one active tasks/stream request per task per
 * connection": over Streamable HTTP each POST is its own SSE response, and a 2026-07-28 POST
 * carries one request, so every stream is on a connection of its own. Several clients (or one
 * client after a cut it noticed before this side did) may stream one task at once, each
 * receiving every event; MAX_TASK_STREAMS bounds how many.
 */
import type { Backlog, Delivery } from '../session/connection.ts';
import { ConnectionTable } from '../session/connection-table.ts';
import { RelayEndpoint } from '../session/relay-endpoint.ts';
import { encodeEvent } from '../core/sse.ts';
import type { JsonRpcId } from '../core/errors.ts';
import { encodeBody, encodeEventNotification, type EncodedEvent, type TaskEvent } from '../core/task-events.ts';
import { decideTaskStream, eventsGoneError, invalidStreamParams } from '../core/task-stream.ts';
import type { TaskRecord } from '../core/task.ts';
import { JsonRpcCode, SSE_RESPONSE_HEADERS } from '../core/wire.ts';
import type { TaskTimeline } from './task-timeline.ts';

/** The tag of stream sockets, apart from the listen watches the object also holds. */
const STREAM_TAG = 'task-stream';
/** Streams of one task open at once: each is a socket held by the task's object. */
export const MAX_TASK_STREAMS = 32;
/** The most events one read of the timeline takes (the buffer usually stops it first). */
const READ_EVENTS = 64;

/** What the Worker sends to open a stream: the cursor (core/task-stream.ts) and the request's id. */
export interface StreamOpening {
  readonly after: number | undefined;
  readonly id: JsonRpcId;
}

/** The task as it stands, and its timeline: what a stream reads. */
export interface TaskState {
  readonly task: TaskRecord;
  readonly timeline: TaskTimeline;
}

export class TaskStreams {
  readonly #connections: ConnectionTable;
  readonly #relay: RelayEndpoint;
  readonly #read: () => TaskState | undefined;

  /** `read`: the task and timeline as they are now (undefined once purged). */
  constructor(ctx: DurableObjectState, bufferBytes: number, read: () => TaskState | undefined) {
    this.#read = read;
    this.#connections = new ConnectionTable({ bufferBytes, backlogOf: () => backlog(read) });
    // Woken from hibernation: the open streams' connections are rebuilt from their sockets.
    this.#relay = new RelayEndpoint(ctx, this.#connections, bufferBytes, STREAM_TAG);
  }

  /**
   * Answers a stream request: its refusal or its empty result (JSON, for the Worker to send
   * through the SDK), or the first part of its SSE response (all of it, if the task ended and
   * everything fit), which the Worker relays; undefined if there is no task (any more).
   *
   * The task is read here, not taken from the caller: a record read before an `await` may
   * say `working` of a task that ended meanwhile, and a stream attached after the end was
   * delivered would never be finished (no closing result; a slot held until its age limit).
   */
  open({ after, id }: StreamOpening): Promise<Response> | Response | undefined {
    const current = this.#read();
    if (current === undefined) return undefined;
    const { task, timeline } = current;
    const state = timeline.state(task);
    const verdict = decideTaskStream(after, state);
    switch (verdict.kind) {
      case 'invalid':
        return Response.json(invalidStreamParams(id, verdict.message));
      case 'gone':
        // "Receivers MUST NOT silently skip retained events after the requested cursor."
        return Response.json(eventsGoneError(id, task.taskId, verdict.earliestSeq));
      case 'complete':
        // "MUST return TaskStreamResult immediately with no event notifications."
        return Response.json({ jsonrpc: '2.0', id, result: { resultType: 'complete' } });
      case 'stream':
        break;
    }
    const open = this.#connections.streams;
    if (open.length >= MAX_TASK_STREAMS) {
      return Response.json({
        jsonrpc: '2.0',
        id,
        error: {
          code: JsonRpcCode.ServerError,
          message: `Too many streams of this task: at most ${MAX_TASK_STREAMS} at once; end one, or poll tasks/get`,
          data: { reason: 'too_many_task_streams', limit: MAX_TASK_STREAMS },
        },
      });
    }
    const number = freeNumber(open);
    // Relay numbering (see the top): position `fromSeq` is "had every seq before fromSeq".
    const connection = this.#connections.open({ stream: number, epoch: 0 }, verdict.fromSeq, state.nextSeq, closingFrame(id));
    this.#connections.attach(number, connection);
    connection.start();
    // Ended already: the connection closes once it has written the terminal event.
    if (state.terminal) connection.finish();
    // A live task's stream starts on the bridge, as a session's does: the runtime pipes it to
    // the client with no JavaScript per chunk, while the tool's pauses let it through
    // (notification-tap.ts). The socket follows at BRIDGE_MS, or at once if the buffer is full.
    return this.#relay.answer(connection, new Headers(SSE_RESPONSE_HEADERS));
  }

  /**
   * A stored event (never the terminal one), to every stream that is caught up. Returns its
   * UTF-8 size if any stream is open (each sends it now, or reads it from the timeline once
   * caught up), else 0: the tap paces the tool by it (notification-tap.ts).
   */
  deliver(task: TaskRecord, event: EncodedEvent): number {
    const open = this.#connections.streams;
    // Nobody streaming (the usual case, on every progress event): nothing to encode.
    if (open.length === 0) return 0;
    const delivery = deliveryOf(task.taskId, event);
    for (const number of open) this.#connections.deliver(number, delivery);
    return delivery.bytes;
  }

  /** The task has ended with `terminal`, its last event: each stream delivers it, then closes with its result. */
  end(task: TaskRecord, terminal: TaskEvent): void {
    this.deliver(task, { seq: terminal.seq, ...encodeBody(terminal) });
    for (const number of this.#connections.streams) this.#connections.finish(number);
  }

  /** Every stream ends now, without its result (the task is gone: a resume is told so). */
  closeAll(): void {
    this.#connections.closeAll();
  }

  /** The Worker's relay socket for a stream whose first answer it holds. */
  bind(request: Request): Response {
    return this.#relay.bind(request);
  }

  /** The Worker acknowledged what its client took (a listen watch's socket is ignored here). */
  message(socket: WebSocket, message: string | ArrayBuffer): void {
    this.#relay.message(socket, message);
  }

  /** The Worker closed a stream's socket: its client went away. The task goes on. */
  closed(socket: WebSocket): void {
    this.#relay.closed(socket);
  }
}

/** The timeline as a relay connection's backlog: events after relay position `n`, as frames within the budget. */
function backlog(read: () => TaskState | undefined): Backlog {
  return {
    read(afterN, budgetBytes) {
      const state = read();
      // Purged: nothing more to read; the connection is closed with the object's sockets.
      if (state === undefined) return { events: [], lastSeq: afterN };
      const { task, timeline } = state;
      const events: Delivery[] = [];
      let bytes = 0;
      // As many frames as fit in the budget, counted as the relay counts them (UTF-8 bytes of
      // the frame), but at least one: the buffer is exceeded by at most one event.
      for (const event of timeline.encodedEvents(task, afterN, READ_EVENTS)) {
        const delivery = deliveryOf(task.taskId, event);
        const size = FRAME_BYTES + delivery.bytes;
        if (events.length > 0 && bytes + size > budgetBytes) break;
        events.push(delivery);
        bytes += size;
      }
      return { events, lastSeq: timeline.state(task).nextSeq };
    },
  };
}

/** What an event's frame adds to its data: a stream's frames carry no id (relay-connection.ts `#take`). */
const FRAME_BYTES = encodeEvent({ data: '' }).length;

function deliveryOf(taskId: string, event: EncodedEvent): Delivery & { readonly bytes: number } {
  const { text, bytes } = encodeEventNotification(taskId, event);
  return { seq: event.seq + 1, data: text, bytes };
}

/**
 * The stream's answer, once its terminal event is through: "When the receiver closes the
 * stream normally, it returns an empty result" — on 2026-07-28 a `Result` whose `resultType`
 * "servers ... MUST include".
 */
function closingFrame(id: JsonRpcId): string {
  return encodeEvent({ data: JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete' } }) });
}

/** A connection number no open stream uses (the relay keys connections by it). */
function freeNumber(open: readonly number[]): number {
  for (;;) {
    const number = 1 + (crypto.getRandomValues(new Uint32Array(1))[0]! >>> 1);
    if (!open.includes(number)) return number;
  }
}
