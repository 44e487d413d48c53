/**
 * The listen streams watching a task (task-listen.ts, at the edge), in its object: each is a
 * WebSocket accepted with the Hibernation API, so a watched task's object may sleep between
 * changes. A watch is told the task as it stands when it opens and whenever its status or
 * `statusMessage` changes, and it is closed once the task has ended: nothing more will come.
 * It only listens; what it sends is ignored.
 */
import { detailedTaskOnWire, isTerminal, type TaskRecord } from '../core/task.ts';

/** The tag of listen watches' sockets, apart from the `tasks/stream` relay sockets the object also holds. */
const WATCH = 'watch';
/**
 * Watches of one task open at once: each is a socket its object holds (as MAX_TASK_STREAMS
 * bounds its streams). Past it a watch is refused, and the listen's acknowledgement leaves the
 * task out of the task ids it honours.
 */
export const MAX_TASK_WATCHES = 32;

export class TaskWatches {
  readonly #ctx: DurableObjectState;

  constructor(ctx: DurableObjectState) {
    this.#ctx = ctx;
  }

  /** A new watch of `task`: told the task at once (and closed with it, if it has ended); 429 past MAX_TASK_WATCHES. */
  open(task: TaskRecord): Response {
    if (this.#ctx.getWebSockets(WATCH).length >= MAX_TASK_WATCHES) return new Response(null, { status: 429 });
    const pair = new WebSocketPair();
    this.#ctx.acceptWebSocket(pair[1], [WATCH]);
    tell(pair[1], task);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  /** Whether any watch is open: without one, nothing about a change needs working out. */
  get watched(): boolean {
    return this.#ctx.getWebSockets(WATCH).length > 0;
  }

  /** Tells every watch the task as it now stands. */
  tell(task: TaskRecord): void {
    for (const socket of this.#ctx.getWebSockets(WATCH)) tell(socket, task);
  }

  /** The task is gone (purged): its watches end without a last state. */
  closeAll(reason: string): void {
    for (const socket of this.#ctx.getWebSockets(WATCH)) socket.close(1000, reason);
  }
}

function tell(socket: WebSocket, task: TaskRecord): void {
  try {
    socket.send(JSON.stringify(detailedTaskOnWire(task)));
    if (isTerminal(task.status)) socket.close(1000, 'task ended');
  } catch {
    // The listen stream is gone; its socket closes with it.
  }
}
