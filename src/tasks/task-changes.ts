/**
 * A task's changes, stored before they are heard (task-object.ts's rule, SEP-2694 draft): a
 * change of the task is written with the event it makes, and a batch its tool reports as the
 * next events, each in one transaction of the object's SQLite, so that the task row and its
 * timeline (task-timeline.ts) never disagree; only then are they delivered to the task's
 * `tasks/stream` streams (task-streams.ts) and told to its listen watches (task-watches.ts). A
 * write that fails is rolled back, what was cached of it forgotten, and nobody told.
 *
 * Apart from the object because it is one concept the object's other work leans on: the object
 * (task-object.ts) decides when the task changes — answered, cancelled, revoked, interrupted,
 * its round's outcome — and hands the decision (core/task.ts) here; the round's notifications
 * (notification-tap.ts) come here in batches. The object keeps the task's row (creates and
 * purges it), reads the task as it stands, and counts each status reached (its metrics).
 */
import { boundedEvent, encodeBody, notificationEvent, statusEvent, type EncodedEventBody, type TaskEvent } from '../core/task-events.ts';
import { isTerminal, type TaskRecord } from '../core/task.ts';
import type { TransportConfig } from '../config.ts';
import type { Notification } from './notification-tap.ts';
import type { TaskStore } from './task-store.ts';
import type { TaskSources } from './task-sources.ts';
import type { TaskStreams } from './task-streams.ts';
import type { TaskTimeline } from './task-timeline.ts';
import type { TaskWatches } from './task-watches.ts';

/** What a change is written to and told to: the object's parts, which it owns. */
export interface TaskParts {
  /** The task's row, while there is one (none before its creation, nor once purged). */
  readonly store: () => TaskStore | undefined;
  /** The task as it stands: its row, with the working task's latest status line. */
  readonly read: () => TaskRecord | undefined;
  readonly timeline: TaskTimeline;
  readonly streams: TaskStreams;
  /** The task's MCP Events feeds (its event source's push streams). */
  readonly sources: TaskSources;
  readonly watches: TaskWatches;
  readonly config: Pick<TransportConfig, 'taskMaxEventBytes'>;
  /** The task has reached a new status (the object counts it). */
  readonly reached: (task: TaskRecord) => void;
}

export class TaskChanges {
  readonly #storage: DurableObjectStorage;
  readonly #storeOf: () => TaskStore | undefined;
  readonly #read: () => TaskRecord | undefined;
  readonly #timeline: TaskTimeline;
  readonly #streams: TaskStreams;
  readonly #sources: TaskSources;
  readonly #watches: TaskWatches;
  readonly #config: Pick<TransportConfig, 'taskMaxEventBytes'>;
  readonly #reached: (task: TaskRecord) => void;

  constructor(storage: DurableObjectStorage, { store, read, timeline, streams, sources, watches, config, reached }: TaskParts) {
    this.#storage = storage;
    this.#storeOf = store;
    this.#read = read;
    this.#timeline = timeline;
    this.#streams = streams;
    this.#sources = sources;
    this.#watches = watches;
    this.#config = config;
    this.#reached = reached;
  }

  /** Read at each change, never kept: the object creates and purges the row. */
  get #store(): TaskStore | undefined {
    return this.#storeOf();
  }

  /**
   * Stores what the working task's tool reported (a batch, notification-tap.ts) as the next
   * events, then delivers them, and returns the bytes of events that went to its streams (the
   * tap paces the tool by them). Nothing once the task stopped working: a cancelled task's tool may still be
   * winding down.
   */
  append(batch: readonly Notification[]): number {
    // The stored task, not #read()'s: its status is what matters here, not its latest line.
    const task = this.#store?.read();
    if (task?.status !== 'working') return 0;
    const { taskMaxEventBytes } = this.#config;
    const events: EncodedEventBody[] = [];
    for (const { method, params } of batch) {
      const body = notificationEvent(method, params);
      if (body !== undefined) events.push(boundedEvent(body, taskMaxEventBytes));
    }
    if (events.length === 0) return 0;
    // Listen watches hear of a new statusMessage; without one, nothing more is read here.
    const watched = this.#watches.watched;
    const before = watched ? this.#read()!.statusMessage : undefined;
    let first: number;
    const at = Date.now();
    try {
      first = this.#storage.transactionSync(() => this.#timeline.appendAll(task, events, at));
    } catch (error) {
      this.#timeline.forget();
      throw error;
    }
    let streamed = 0;
    for (const [i, event] of events.entries()) streamed += this.#streams.deliver(task, { seq: first + i, ...event });
    this.#sources.deliver(task, first, events, at);
    if (!watched) return streamed;
    const now = this.#read()!;
    if (now.statusMessage !== before) this.#watches.tell(now);
    return streamed;
  }

  /**
   * Applies a decision (core/task.ts) to the stored task and writes the task if it changed, with
   * the event it makes in the same transaction: a new status is the next event; the end is the
   * last, its seq kept with the task (the task row is that event, so it takes no row of its own).
   */
  apply(decide: (task: TaskRecord) => TaskRecord): void {
    const store = this.#store;
    const before = this.#read();
    if (store === undefined || before === undefined) return;
    let after = decide(before);
    if (after === before) return;
    const ends = isTerminal(after.status) && !isTerminal(before.status);
    let event: TaskEvent | undefined;
    try {
      this.#storage.transactionSync(() => {
        if (ends) {
          after = { ...after, finalSeq: this.#timeline.finalSeq() };
        } else if (after.status !== before.status) {
          const body = statusEvent(after);
          event = { seq: this.#timeline.append(after, body, after.updatedAt), ...body };
        }
        store.write(after);
      });
    } catch (error) {
      // Rolled back: the row and the timeline are as they were.
      store.forget();
      this.#timeline.forget();
      throw error;
    }
    if (ends) {
      this.#streams.end(after, { seq: after.finalSeq!, ...statusEvent(after) });
      this.#sources.end(after, { seq: after.finalSeq!, ...encodeBody(statusEvent(after)), at: after.updatedAt });
    } else if (event !== undefined) {
      this.#streams.deliver(after, { seq: event.seq, ...encodeBody(event) });
      this.#sources.deliver(after, event.seq, [encodeBody(event)], after.updatedAt);
    }
    if (after.status !== before.status) this.#reached(after);
    this.#watches.tell(after);
  }
}
