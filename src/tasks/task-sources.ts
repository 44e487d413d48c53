/**
 * A task's timeline as an MCP Events task event source (core/task-source.ts), in its object:
 * the reads of `events/poll` and the feeds of `events/stream`, over the same stored timeline
 * `tasks/stream` reads (task-timeline.ts). Nothing is written for them: no event is copied, no
 * row is added per event or per reader.
 *
 * Where a read starts is decided in the turn that reads (core/event-cursor.ts `decideStart`,
 * against the timeline's state as an event log's: partition the task id, log id fixed, earliest
 * and next seq), so no event can be stored between the decision and the page. A start at the
 * end of a terminal task's timeline is the end of the subscription: refused with
 * `taskEnded` (NotFound), the signal of both modes.
 *
 * A push stream is held by the Worker (events/push-stream.ts, the same feed an event log's
 * streams use) over one WebSocket to this object, accepted with the Hibernation API, so a task
 * waiting for input keeps no code running here for it. An attach is answered, in one turn, with
 * the start and the backlog (or, for a long one, the start only: the Worker reads it by pages
 * and attaches again); then each event is sent to every socket right after it is stored, and
 * after the terminal event the sockets are closed: the Worker attaches again from its position,
 * is refused with `taskEnded`, and ends its stream with `notifications/events/terminated`. A
 * socket carries events, never a position: the Worker counts seqs (a duplicate is dropped, a gap
 * read from the timeline).
 */
import { decideStart, type EventCursor } from '../core/event-cursor.ts';
import type { EventsError } from '../core/events-wire.ts';
import {
  type DeliveringStart,
  taskEnded,
  taskOccurrence,
  taskTimelineIdentity,
  type TaskFeedMessage,
  type TaskOccurrence,
  type TaskSourceRead,
  type TaskSourceReadAnswer,
  type TimedEvent,
} from '../core/task-source.ts';
import type { EncodedEventBody } from '../core/task-events.ts';
import type { TaskRecord } from '../core/task.ts';
import { INTERNAL_HEADERS } from '../core/wire.ts';
import type { TaskState } from './task-streams.ts';

/** The tag of task source sockets, apart from the object's `tasks/stream` relays and listen watches. */
const SOURCE_TAG = 'task-source';
/** Push streams of one task's events open at once (as MAX_TASK_STREAMS bounds `tasks/stream`). */
export const MAX_TASK_SOURCES = 32;
/** The most events an attach sends at once; a longer backlog is read by pages first (push-stream.ts reads 64). */
const ATTACH_BACKLOG_MAX = 64;
/** The most stored events one read takes. */
const READ_MAX = 1_000;

/** A push stream's attach: its JSON in INTERNAL_HEADERS.eventAttach (the Worker's feed sends more members; these are read). */
interface Attach {
  readonly cursor: EventCursor | null;
  readonly maxAgeMs?: number;
}

type Decided = { readonly refusal: EventsError } | { readonly start: Started };

interface Started {
  readonly decision: DeliveringStart;
  readonly nextSeq: number;
  readonly terminal: boolean;
}

export class TaskSources {
  readonly #ctx: DurableObjectState;
  readonly #read: () => TaskState | undefined;

  /** `read`: the task and timeline as they are now (undefined once purged, or for an object that holds none). */
  constructor(ctx: DurableObjectState, read: () => TaskState | undefined) {
    this.#ctx = ctx;
    this.#read = read;
  }

  /** A poll's page (or a push stream catching up), decided and read in one turn; undefined without a task. */
  read(request: TaskSourceRead): TaskSourceReadAnswer | undefined {
    const state = this.#read();
    if (state === undefined) return undefined;
    const decided = decide(state, request.cursor, request.maxAgeMs);
    if ('refusal' in decided) return decided;
    const { decision, nextSeq } = decided.start;
    const limit = Math.max(1, Math.min(request.limit, READ_MAX));
    const occurrences: TaskOccurrence[] = [];
    let bytes = 0;
    for (const event of state.timeline.encodedEvents(state.task, decision.fromSeq, limit)) {
      const occurrence = taskOccurrence(state.task.taskId, event);
      // At least one, so a reader always moves; then what fits.
      if (occurrences.length > 0 && (occurrences.length >= limit || bytes + occurrence.data.length > request.maxBytes)) break;
      occurrences.push(occurrence);
      bytes += occurrence.data.length;
    }
    return { decision, logId: taskTimelineIdentity(state.task.taskId).logId, nextSeq, occurrences };
  }

  /** A push stream's feed: 101 with its socket, or JSON (200 a long backlog, 400 a refusal); 404 without a task, 429 past the bound. */
  attach(request: Request): Response {
    const state = this.#read();
    const header = request.headers.get(INTERNAL_HEADERS.eventAttach);
    if (state === undefined || header === null || request.headers.get('Upgrade')?.toLowerCase() !== 'websocket') {
      return new Response(null, { status: 404 });
    }
    if (this.#ctx.getWebSockets(SOURCE_TAG).length >= MAX_TASK_SOURCES) return new Response(null, { status: 429 });
    const attach = JSON.parse(header) as Attach;
    const decided = decide(state, attach.cursor, attach.maxAgeMs);
    if ('refusal' in decided) return Response.json(decided, { status: 400 });
    const { decision, nextSeq, terminal } = decided.start;
    const { logId } = taskTimelineIdentity(state.task.taskId);
    if (nextSeq - decision.fromSeq > ATTACH_BACKLOG_MAX) return Response.json({ backlog: { logId, decision } });
    const pair = new WebSocketPair();
    this.#ctx.acceptWebSocket(pair[1], [SOURCE_TAG]);
    // In this turn: nothing can be stored between the backlog read and the socket's joining the feed.
    const send = (message: TaskFeedMessage) => pair[1].send(JSON.stringify(message));
    send({ start: { logId, fromSeq: decision.fromSeq, truncated: decision.truncated } });
    for (const event of state.timeline.encodedEvents(state.task, decision.fromSeq, ATTACH_BACKLOG_MAX)) {
      send({ occurrence: taskOccurrence(state.task.taskId, event) });
    }
    // Ended: everything is sent; the stream comes back for its end (the refusal above).
    if (terminal) pair[1].close(1000, 'task ended');
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  /** Events just stored, from seq `first` on, stored at `at`: sent to every feed (none open, the usual case: nothing done). */
  deliver(task: TaskRecord, first: number, events: readonly EncodedEventBody[], at: number): void {
    const sockets = this.#ctx.getWebSockets(SOURCE_TAG);
    if (sockets.length === 0) return;
    const messages = events.map((event, i) =>
      JSON.stringify({ occurrence: taskOccurrence(task.taskId, { seq: first + i, ...event, at }) }),
    );
    for (const socket of sockets) sendAll(socket, messages);
  }

  /** The task has ended with `terminal`, its last event: each feed is sent it, then closed. */
  end(task: TaskRecord, terminal: TimedEvent): void {
    const message = JSON.stringify({ occurrence: taskOccurrence(task.taskId, terminal) } satisfies TaskFeedMessage);
    for (const socket of this.#ctx.getWebSockets(SOURCE_TAG)) {
      sendAll(socket, [message]);
      close(socket, 'task ended');
    }
  }

  /** The task is gone (purged): every feed is closed; attaching again is answered as for an unknown task. */
  closeAll(): void {
    for (const socket of this.#ctx.getWebSockets(SOURCE_TAG)) close(socket, 'task purged');
  }
}

/**
 * Where a reader with `cursor` starts in the task's timeline, as an event log decides it: the
 * refusal of a cursor that is not a position of this task's timeline (another task's:
 * `cursor_other_log`; another type's; past the end), `truncated` from the earliest retained event
 * when older ones were dropped (TASK_MAX_EVENTS) or `maxAgeMs` skips some; and the end of the
 * subscription when a terminal task has nothing after the start.
 */
function decide(state: TaskState, cursor: EventCursor | null, maxAgeMs: number | undefined): Decided {
  const { task, timeline } = state;
  const { nextSeq, earliestSeq, terminal } = timeline.state(task);
  const log = { ...taskTimelineIdentity(task.taskId), nextSeq, earliestSeq };
  const maxAge = maxAgeMs === undefined ? undefined : { floorSeq: timeline.floorSeq(task, Date.now() - maxAgeMs) };
  const decision = decideStart(cursor, log, maxAge);
  if (decision.kind === 'refused') return { refusal: decision.invalid };
  // "The server MUST terminate the event stream when the task reaches a terminal status."
  if (terminal && decision.fromSeq === nextSeq) return { refusal: taskEnded(task.taskId, task.status) };
  return { start: { decision, nextSeq, terminal } };
}

function sendAll(socket: WebSocket, messages: readonly string[]): void {
  try {
    for (const message of messages) socket.send(message);
  } catch {
    // Closing: its stream attaches again from its own position if it is still open.
  }
}

function close(socket: WebSocket, reason: string): void {
  try {
    socket.close(1000, reason);
  } catch {
    // Already closed.
  }
}
