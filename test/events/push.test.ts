/**
 * `events/stream`, served (SEP-3415, *Push*; src/events/push-stream.ts): `notifications/events/active`
 * first, every notification carrying the subscription id (the request's id) in `_meta`, each
 * occurrence with its cursor, heartbeats as SSE data frames with the checked-up-to cursor (the
 * fixture's EVENTS_HEARTBEAT_MS is 1 s), a stream cut by its client and reopened with its last
 * cursor continuing exactly after it, occurrences emitted while no stream is open delivered on
 * reopening, and a backlog longer than one attach read in order. Where a stream starts from a
 * cursor is cursors.test.ts's; slots and bounds are the bounds and principals projects'.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { EventsNotification, SUBSCRIPTION_ID_META_KEY } from '../../src/core/events-wire.ts';
import { ATTACH_BACKLOG_MAX } from '../../src/events/event-log-object.ts';
import { logObjectName } from '../../src/events/event-logs.ts';
import { noteEvents } from '../fixture-server/note-events.ts';
import { activeStream, cursorFields, openStream, polled, postNote, subscriptionIdOf, token } from '../support/events-http.ts';

async function until(what: string, condition: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await scheduler.wait(10);
  }
}

describe('events/stream', () => {
  it.each([
    { kind: 'a number', id: 4_242 },
    { kind: 'a string', id: `sub-${crypto.randomUUID()}` },
  ])(
    'active first, then each occurrence with its cursor; "Every notifications/events/* message carries the JSON-RPC id" ($kind) in _meta',
    async ({ id }) => {
      const tok = token();
      await postNote(`${tok} before: not replayed`);
      const stream = await openStream({ name: 'demo.note', arguments: { contains: tok }, cursor: null }, { id });
      try {
        const active = await stream.notification();
        expect(active).toMatchObject({
          jsonrpc: '2.0',
          method: EventsNotification.active,
          params: { truncated: false, cursor: expect.any(String) },
        });
        expect(active.id).toBeUndefined();
        const a = await postNote(`${tok} a`);
        const b = await postNote(`${tok} b`);
        const events = await stream.events(2);
        expect(events.map(({ eventId, name, timestamp, data }) => ({ eventId, name, timestamp, data }))).toEqual([
          { eventId: a.eventId, name: 'demo.note', timestamp: a.timestamp, data: { text: `${tok} a`, n: expect.any(Number) } },
          { eventId: b.eventId, name: 'demo.note', timestamp: b.timestamp, data: { text: `${tok} b`, n: expect.any(Number) } },
        ]);
        // "the subscription's position after this event"
        expect(events.map((e) => cursorFields(e.cursor!))).toEqual([
          { ...cursorFields(active.params.cursor), next: a.seq + 1 },
          { ...cursorFields(active.params.cursor), next: b.seq + 1 },
        ]);
        await stream.heartbeat();
        expect(stream.seen.length).toBeGreaterThanOrEqual(4);
        for (const message of stream.seen) {
          expect(subscriptionIdOf(message), JSON.stringify(message)).toBe(id);
          expect(Object.keys(message.params._meta)).toEqual([SUBSCRIPTION_ID_META_KEY]);
        }
      } finally {
        await stream.cancel();
      }
    },
  );

  it('"The server MUST send periodic keepalive messages": notifications/events/heartbeat as an SSE data frame ("The SSE comment form is not used") with the checked-up-to cursor', async () => {
    const tok = token();
    const { stream, active } = await activeStream({ name: 'demo.note', arguments: { contains: `${tok} wanted` }, cursor: null });
    try {
      // An occurrence this subscription does not select: not delivered, but checked.
      const passed = await postNote(`${tok} unwanted`);
      const heartbeat = await stream.heartbeat();
      const at = cursorFields(heartbeat.params.cursor);
      expect({ ...at, next: 0 }).toEqual({ ...cursorFields(active.cursor), next: 0 });
      // A heartbeat may be written before the feed tells the stream of it: the next one then says so.
      const checked = at.next > passed.seq ? at : cursorFields((await stream.heartbeat()).params.cursor);
      expect(checked.next).toBeGreaterThan(passed.seq);
      expect(stream.reader.raw).toMatch(/^data: \{"jsonrpc":"2\.0","method":"notifications\/events\/heartbeat"/m);
      expect(stream.reader.raw.split('\n').filter((line) => line.startsWith(':'))).toEqual([]);
      // The heartbeat's cursor is a position like any other: a poll from it continues.
      const after = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: heartbeat.params.cursor });
      expect(after.truncated).toBe(false);
    } finally {
      await stream.cancel();
    }
  });

  it("cut by its client and reopened with the last event's cursor: continues exactly after it (0 lost, 0 twice), occurrences emitted while closed included", async () => {
    const tok = token();
    const args = { contains: tok };
    const { cursor } = await polled({ name: 'demo.note', arguments: args, cursor: null });
    const posted = [await postNote(`${tok} 1`), await postNote(`${tok} 2`), await postNote(`${tok} 3`)];
    const first = await openStream({ name: 'demo.note', arguments: args, cursor });
    let last: string;
    try {
      expect((await first.notification()).method).toBe(EventsNotification.active);
      const read = await first.events(2);
      expect(read.map((e) => e.eventId)).toEqual(posted.slice(0, 2).map((p) => p.eventId));
      last = read[1]!.cursor!;
    } finally {
      await first.cancel();
    }
    // Emitted while no stream of this subscription is open.
    posted.push(await postNote(`${tok} 4`), await postNote(`${tok} 5`));
    const { stream, active } = await activeStream({ name: 'demo.note', arguments: args, cursor: last });
    try {
      expect(active.truncated).toBe(false);
      expect(cursorFields(active.cursor)).toEqual(cursorFields(last));
      const rest = await stream.events(3);
      expect(rest.map((e) => e.eventId)).toEqual(posted.slice(2).map((p) => p.eventId));
      // Nothing else of this subscription is due.
      await stream.heartbeat();
    } finally {
      await stream.cancel();
    }
  });

  it(`a backlog longer than one attach sends (${ATTACH_BACKLOG_MAX}) is read by pages: every occurrence once, "in the order the server produces them", then live`, async () => {
    const tok = token();
    const args = { contains: tok };
    const { cursor } = await polled({ name: 'demo.note', arguments: args, cursor: null });
    const count = ATTACH_BACKLOG_MAX * 2 + 10;
    for (let n = 0; n < count; n++) await noteEvents.emit(env.MCP_EVENTS, { data: { text: `${tok} ${n}`, n } });
    const { stream, active } = await activeStream({ name: 'demo.note', arguments: args, cursor });
    try {
      expect(active.truncated).toBe(false);
      const backlog = await stream.events(count);
      expect(backlog.map((e) => e.data.n)).toEqual(Array.from({ length: count }, (_, n) => n));
      await noteEvents.emit(env.MCP_EVENTS, { data: { text: `${tok} live`, n: count } });
      expect((await stream.events(1)).map((e) => e.data.n)).toEqual([count]);
    } finally {
      await stream.cancel();
    }
  });

  it('"Closing or cancelling the request ends the subscription … the server MUST stop delivering events and release the associated resources": its socket to the log object closes, the other stream\'s stays', async () => {
    // demo.other: no other file holds a stream of it, so its log object's sockets are these.
    const otherLog = env.MCP_EVENTS.get(env.MCP_EVENTS.idFromName(logObjectName({ type: 'demo.other', partition: '' })));
    const sockets = () => runInDurableObject(otherLog, (_instance, state) => state.getWebSockets().length);
    const { stream: leaving } = await activeStream({ name: 'demo.other', cursor: null });
    const { stream: staying } = await activeStream({ name: 'demo.other', cursor: null });
    try {
      expect(await sockets()).toBe(2);
      await leaving.cancel();
      await until("the leaving stream's socket is closed", async () => (await sockets()) === 1);
      await staying.heartbeat();
      expect(await sockets()).toBe(1);
    } finally {
      await staying.cancel();
    }
    await until('every socket is closed', async () => (await sockets()) === 0);
  });
});
