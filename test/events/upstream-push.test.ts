/**
 * `events/stream` on an upstream-backed type (src/events/upstream-feed.ts; docs/events.md,
 * *Upstream-backed types*), served by the fixture's `demo.upstream` (its upstream read every
 * 100 ms; heartbeats every 1 s): `active` first, each selected occurrence with a cursor never
 * after one not yet delivered, heartbeats with the checked-up-to cursor, the subscription id on
 * every message; a read that fails told once (`notifications/events/error`) and retried, nothing
 * lost or twice after; a gap announced with a fresh `active`; a reconnect from the last cursor
 * continuing exactly after it. Refusals are upstream-poll.test.ts's; the bound per principal and
 * revocation the principals project's (test/principals/upstream-streams.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { EventsNotification, SUBSCRIPTION_ID_META_KEY, UPSTREAM_ERROR } from '../../src/core/events-wire.ts';
import { activeStream, type EventStream, type Occurrence, polled, subscriptionIdOf } from '../support/events-http.ts';
import { driveFeed, feedName, upstreamAt } from '../support/upstream-feed.ts';

const texts = (events: Occurrence[]) => events.map((e) => e.data.text);
const positions = (events: Occurrence[]) => events.map((e) => upstreamAt(e.cursor!));

/** A feed with `notes` in it (`exact`: each with its own cursor), and the cursor of a poll from before them. */
async function feedWith(notes: readonly string[], exact = false): Promise<{ feed: string; start: string }> {
  const feed = feedName();
  await driveFeed(feed, { exact });
  const { cursor } = await polled({ name: 'demo.upstream', arguments: { feed }, cursor: null });
  await driveFeed(feed, { append: notes });
  return { feed, start: cursor };
}

/** Reads up to the next heartbeat and fails on any other message: nothing else was due. */
async function nothingMoreThan(stream: EventStream): Promise<string> {
  return (await stream.heartbeat(5_000)).params.cursor;
}

describe('events/stream on an upstream-backed type', () => {
  it("active first (the upstream's head), then each occurrence as it reaches the upstream, then a heartbeat with the checked-up-to cursor; the subscription id on every message", async () => {
    const feed = feedName();
    await driveFeed(feed, { append: ['before: not replayed'] });
    const { stream, active } = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: null }, { id: 'upstream-sub' });
    try {
      expect(active.truncated).toBe(false);
      expect(upstreamAt(active.cursor)).toBe('at:1');
      await driveFeed(feed, { append: ['a', 'b'] });
      const events = await stream.events(2);
      expect(events.map(({ eventId, name, data }) => ({ eventId, name, data }))).toEqual([
        { eventId: `${feed}-1`, name: 'demo.upstream', data: { text: 'a' } },
        { eventId: `${feed}-2`, name: 'demo.upstream', data: { text: 'b' } },
      ]);
      // One page, one cursor from the author: the page's last event carries it, an earlier one the page's start.
      expect(positions(events)).toEqual(['at:1', 'at:3']);
      expect(upstreamAt(await nothingMoreThan(stream))).toBe('at:3');
      for (const message of stream.seen) {
        expect(subscriptionIdOf(message), JSON.stringify(message)).toBe('upstream-sub');
        expect(Object.keys(message.params._meta)).toEqual([SUBSCRIPTION_ID_META_KEY]);
      }
    } finally {
      await stream.cancel();
    }
  });

  it("the arguments select: only the notes containing `contains`; the heartbeat's cursor moves past the others", async () => {
    const { feed, start } = await feedWith(['skip', 'keep', 'skip again']);
    const { stream } = await activeStream({ name: 'demo.upstream', arguments: { feed, contains: 'keep' }, cursor: start });
    try {
      expect(texts(await stream.events(1))).toEqual(['keep']);
      expect(upstreamAt(await nothingMoreThan(stream))).toBe('at:3');
    } finally {
      await stream.cancel();
    }
  });

  it('"a recoverable failure, such as a single failed upstream fetch": one notifications/events/error (UpstreamError, no upstream words), the stream stays, retries and resumes: every note once, in order', async () => {
    const { feed, start } = await feedWith([]);
    const { stream } = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: start });
    try {
      await driveFeed(feed, { fail: 3, append: ['during the outage'] });
      const error = await stream.notification();
      expect(error).toMatchObject({ method: EventsNotification.error, params: { error: UPSTREAM_ERROR } });
      expect(JSON.stringify(error)).not.toMatch(/503|secret-upstream-detail/);
      expect(texts(await stream.events(1))).toEqual(['during the outage']);
      await driveFeed(feed, { append: ['after'] });
      expect(texts(await stream.events(1))).toEqual(['after']);
      expect(upstreamAt(await nothingMoreThan(stream))).toBe('at:2');
      const methods = stream.seen.map((m) => m.method).filter((m) => m !== EventsNotification.heartbeat);
      expect(methods).toEqual([EventsNotification.active, EventsNotification.error, EventsNotification.event, EventsNotification.event]);
    } finally {
      await stream.cancel();
    }
  });

  it('a cursor behind what the upstream keeps: active truncated: true, then what it keeps; overtaken mid-stream (reads failing meanwhile): "a fresh notifications/events/active with truncated: true"', async () => {
    const { feed, start } = await feedWith(['1', '2', '3', '4', '5']);
    await driveFeed(feed, { keepLast: 2 });
    const { stream, active } = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: start });
    try {
      expect(active.truncated).toBe(true);
      expect(texts(await stream.events(2))).toEqual(['4', '5']);
      await driveFeed(feed, { fail: 2, append: ['6', '7', '8'], keepLast: 1 });
      expect((await stream.notification()).method).toBe(EventsNotification.error);
      const gap = await stream.notification();
      expect(gap).toMatchObject({ method: EventsNotification.active, params: { truncated: true } });
      expect(upstreamAt(gap.params.cursor)).toBe('at:5');
      expect(texts(await stream.events(1))).toEqual(['8']);
    } finally {
      await stream.cancel();
    }
  });

  it('"Closing or cancelling the request ends the subscription … the server MUST stop delivering events and release the associated resources": the upstream is no longer read', async () => {
    const { feed, start } = await feedWith([]);
    const { stream } = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: start });
    // Read every 100 ms while open.
    const opened = (await driveFeed(feed)).reads;
    await stream.heartbeat();
    expect((await driveFeed(feed)).reads).toBeGreaterThan(opened);
    await stream.cancel();
    // A read under way when the client left may still finish; none starts after it. (workerd also
    // drops a request's timers once its client has left: this holds the behaviour, whichever stops it.)
    await scheduler.wait(150);
    const left = (await driveFeed(feed)).reads;
    await scheduler.wait(500);
    expect((await driveFeed(feed)).reads).toBe(left);
  });
});

describe('"reconnect with the last cursor continues exactly after it"', () => {
  it("cut after the page's last event and reopened with its cursor: only what came after, emitted while closed included (0 lost, 0 twice)", async () => {
    const { feed, start } = await feedWith(['a', 'b', 'c']);
    const first = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: start });
    let last: string;
    try {
      const events = await first.stream.events(3);
      expect(positions(events)).toEqual(['at:0', 'at:0', 'at:3']);
      last = events[2]!.cursor!;
    } finally {
      await first.stream.cancel();
    }
    await driveFeed(feed, { append: ['d', 'e'] });
    const { stream, active } = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: last });
    try {
      expect({ truncated: active.truncated, cursor: active.cursor }).toEqual({ truncated: false, cursor: last });
      expect(texts(await stream.events(2))).toEqual(['d', 'e']);
      await nothingMoreThan(stream);
    } finally {
      await stream.cancel();
    }
  });

  it("without the author's per-occurrence cursors, an earlier event of a page carries the page's start: reopened with it, the page again (at least once, never a skip)", async () => {
    const { feed, start } = await feedWith(['a', 'b', 'c']);
    const first = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: start });
    const events = await first.stream.events(1).finally(() => first.stream.cancel());
    const { stream } = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: events[0]!.cursor });
    try {
      expect(texts(await stream.events(3))).toEqual(['a', 'b', 'c']);
    } finally {
      await stream.cancel();
    }
  });

  it("with the author's per-occurrence cursors (`cursor` on each occurrence), each event carries its own: reopened after the first, exactly the rest", async () => {
    const { feed, start } = await feedWith(['a', 'b', 'c'], true);
    const first = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: start });
    const events = await first.stream.events(3).finally(() => first.stream.cancel());
    expect(positions(events)).toEqual(['at:1', 'at:2', 'at:3']);
    await driveFeed(feed, { append: ['d'] });
    const { stream } = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: events[0]!.cursor });
    try {
      expect(texts(await stream.events(3))).toEqual(['b', 'c', 'd']);
      await nothingMoreThan(stream);
    } finally {
      await stream.cancel();
    }
  });

  it("a poll's cursor opens a stream and a stream's cursor continues a poll: one position, two ways to read it", async () => {
    const { feed, start } = await feedWith(['a']);
    const { stream } = await activeStream({ name: 'demo.upstream', arguments: { feed }, cursor: start });
    let cursor: string;
    try {
      cursor = (await stream.events(1))[0]!.cursor!;
    } finally {
      await stream.cancel();
    }
    await driveFeed(feed, { append: ['b'] });
    const result = await polled({ name: 'demo.upstream', arguments: { feed }, cursor });
    expect({ texts: result.events.map((e) => e.data.text), truncated: result.truncated }).toEqual({ texts: ['b'], truncated: false });
  });
});
