/**
 * Tasks as MCP Events event sources, at the edge (the task event sources proposal; the type, its
 * cursor and its end are core/task-source.ts's): the event type a Worker that serves tasks lists
 * beside its authors' types, the `eventSource` a task's CreateTaskResult carries, and the "log"
 * a subscription to it reads — the task's own timeline, in its own object, addressed by the
 * principal and the task id as every task request is (tasks/task-directory.ts), so another
 * principal's task is answered exactly as an unknown one.
 *
 * The type is an ordinary event type whose partition is the task id: `events/list`,
 * `events/poll` and `events/stream` check its arguments, decode its cursors and serve it through
 * the same code as any other (event-subscription.ts, event-poll.ts, push-stream.ts); only where
 * a subscription reads differs — `taskTimelineLog` instead of an `McpEventLog` object (the host
 * chooses, edge-events.ts `logOf`). It speaks the log's protocol over the task object's routes
 * (tasks/task-sources.ts): a read decides and pages in one turn, an attach opens a hibernatable
 * feed. Nothing emits to it: a task's events are what its object stores as it runs.
 */
import { fromJsonSchema } from '@modelcontextprotocol/server';
import { type CursorKeys, mintCursor } from '../core/event-cursor.ts';
import { eventsError, type EventsError, type JsonObject, type TaskEventSource } from '../core/events-wire.ts';
import {
  initialPosition,
  TASK_SOURCE_DESCRIPTION,
  TASK_SOURCE_INPUT_SCHEMA,
  TASK_SOURCE_PAYLOAD_SCHEMA,
  TASK_SOURCE_TYPE,
  taskEventSource,
  type TaskFeedMessage,
  type TaskSourceRead,
  type TaskSourceReadAnswer,
  unknownTask,
} from '../core/task-source.ts';
import { INTERNAL_HEADERS, TASK_ROUTES } from '../core/wire.ts';
import type { TaskDirectory } from '../tasks/task-directory.ts';
import { MAX_TASK_SOURCES } from '../tasks/task-sources.ts';
import type { FeedMessage, ReadAnswer } from './event-log-object.ts';
import type { EventLogStub } from './event-logs.ts';
import { defineEventType } from './event-type.ts';
import { SubscriptionRefused } from './feed-attach.ts';

/** The event type of every task's timeline: listed where the Worker serves tasks (event-catalog.ts). */
export const taskEventType = defineEventType<{ taskId: string }, JsonObject & { taskId: string }>({
  name: TASK_SOURCE_TYPE,
  description: TASK_SOURCE_DESCRIPTION,
  inputSchema: fromJsonSchema(TASK_SOURCE_INPUT_SCHEMA),
  payloadSchema: fromJsonSchema(TASK_SOURCE_PAYLOAD_SCHEMA),
  delivery: ['poll', 'push'],
  // One log per task: its timeline. A cursor of another task is one of another partition (`cursor_other_log`).
  partitions: { ofData: ({ taskId }) => taskId, ofArguments: ({ taskId }) => taskId },
});

/**
 * `CreateTaskResult.eventSource` for `taskId`: "Servers MUST NOT include eventSource in
 * CreateTaskResult unless the server and client have declared the Events capability" — the
 * caller asks only for a tools/call that declared it, on a Worker that serves events.
 * `initialCursor` is before the task's first event: "The client passes this as the
 * subscription cursor to replay events emitted before it subscribed."
 */
export async function taskEventSourceOf(keys: CursorKeys, taskId: string): Promise<TaskEventSource> {
  return taskEventSource(taskId, await mintCursor(initialPosition(taskId), keys));
}

/** The task's timeline, read as an event log is (event-poll.ts, push-stream.ts). */
export function taskTimelineLog(directory: TaskDirectory, taskId: string): EventLogStub {
  const written = () => Promise.reject(new TypeError(`${TASK_SOURCE_TYPE} is written by its task only`));
  // Not offered by webhook (its type's `delivery` leaves it out), so never subscribed to.
  const subscribed = () => Promise.reject(new TypeError(`${TASK_SOURCE_TYPE} is not delivered by webhook`));
  return {
    append: written,
    reset: written,
    addSubscriber: subscribed,
    removeSubscriber: subscribed,
    async read({ cursor, maxAgeMs, limit, maxBytes }): Promise<ReadAnswer> {
      const request: TaskSourceRead = { cursor, ...(maxAgeMs !== undefined && { maxAgeMs }), limit, maxBytes };
      const answer = (await directory.ask(TASK_ROUTES.sourceRead, taskId, { ...request })) as TaskSourceReadAnswer | undefined;
      if (answer === undefined) throw new SubscriptionRefused(unknownTask());
      if ('refusal' in answer) throw new SubscriptionRefused(answer.refusal);
      return answer;
    },
    async fetch(request: Request): Promise<Response> {
      const response = await directory.sourceAttach(taskId, request.headers.get(INTERNAL_HEADERS.eventAttach) ?? 'null');
      // Refusals as the log's (push-stream.ts): the stream is not opened, or, attaching again, it is terminated with the error.
      if (response === undefined) return refusal(unknownTask());
      if (response.status === 429) {
        return refusal(
          eventsError('ResourceExhausted', `at most ${MAX_TASK_SOURCES} event streams of one task at once`, {
            limit: 'task event streams',
            max: MAX_TASK_SOURCES,
          }),
        );
      }
      return response;
    },
  };
}

const refusal = (error: EventsError) => Response.json({ refusal: error }, { status: 400 });

/** The object's feed messages are the log's (push-stream.ts reads them as such): held at compile time. */
const feedShape: TaskFeedMessage extends FeedMessage ? true : never = true;
void feedShape;
