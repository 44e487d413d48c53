/**
 * How a push stream (push-stream.ts) attaches to what it reads — an event type's log object, or a
 * task's timeline read as one (task-source.ts): a WebSocket upgrade carrying the attach request
 * (which log, from which cursor), answered with the socket, or without one: the refusal of the
 * cursor (no stream opened), or a backlog too long to send at once (read it by pages first).
 */
import type { EventsError } from '../core/events-wire.ts';
import { EVENT_LOG_ROUTES, INTERNAL_HEADERS } from '../core/wire.ts';
import type { AttachAnswer, AttachRequest } from './event-log-object.ts';
import type { EventLogStub } from './event-logs.ts';

export type Attached = { readonly socket: WebSocket } | AttachAnswer;

export async function attachFeed(log: EventLogStub, attach: AttachRequest): Promise<Attached> {
  const response = await log.fetch(
    new Request(`https://event-log.internal${EVENT_LOG_ROUTES.attach}`, {
      headers: { Upgrade: 'websocket', [INTERNAL_HEADERS.eventAttach]: JSON.stringify(attach) },
    }),
  );
  if (response.webSocket !== null) {
    response.webSocket.accept();
    return { socket: response.webSocket };
  }
  if (response.status === 400 || response.status === 200) return (await response.json()) as AttachAnswer;
  throw new Error(`the event log answered an attach with ${response.status}`);
}

/**
 * What a subscription reads refused it after its checks passed: a cursor the log will not serve
 * (a server fault: the stream's own position), a task event source's end, or its task unknown
 * (core/task-source.ts). A poll answers with `error`; a push stream ends with it (`terminated`).
 */
export class SubscriptionRefused extends Error {
  constructor(readonly error: EventsError) {
    super(error.message);
  }
}
