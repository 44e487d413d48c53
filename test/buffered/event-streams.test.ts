/**
 * An MCP Events push stream whose client reads slower than occurrences come, with this project's
 * 8 KB connection buffer (vitest.config.ts): the stream stops taking its log's feed once the
 * buffer is full and, as the client makes room, reads on from the log at its own position
 * (src/events/push-stream.ts). Every occurrence is delivered once and in order; where retention
 * deleted some before the client made room, the stream says so with "a fresh
 * notifications/events/active with truncated: true and a new cursor" (SEP-3415, *Event delivery*)
 * before what follows — never a silent skip.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { EventsNotification } from '../../src/core/events-wire.ts';
import { McpEventLog } from '../../src/events/event-log-object.ts';
import { resetEventLog } from '../../src/events/event-logs.ts';
import { noteEvents, tinyEvents } from '../fixture-server/note-events.ts';
import { activeStream, cursorFields, type EventStream, polled, token } from '../support/events-http.ts';

const originalRead = McpEventLog.prototype.read;
afterEach(() => {
  McpEventLog.prototype.read = originalRead;
});

/** Counts the log reads of streams catching up (a push stream reads the log only after its feed paused or fell behind). */
function countLogReads(): { reads: number } {
  const counted = { reads: 0 };
  McpEventLog.prototype.read = function (this: McpEventLog, request) {
    counted.reads++;
    return originalRead.call(this, request);
  };
  return counted;
}

/** What a stream delivers until the occurrence numbered `last`: each `n`, or `active` with its params. */
async function readUntil(
  stream: EventStream,
  last: number,
): Promise<({ n: number; cursor: string } | { active: { cursor: string; truncated: boolean } })[]> {
  const read: ({ n: number; cursor: string } | { active: { cursor: string; truncated: boolean } })[] = [];
  for (;;) {
    const message = await stream.notification();
    if (message.method === EventsNotification.active) read.push({ active: message.params });
    else if (message.method === EventsNotification.event) read.push({ n: message.params.data.n, cursor: message.params.cursor });
    else throw new Error(`unexpected ${JSON.stringify(message)}`);
    if (message.params.data?.n === last) return read;
  }
}

describe('a push stream whose client reads slower than occurrences come', () => {
  it('gets every occurrence once and in order, read back from the log past the buffer; no second active (nothing was skipped)', async () => {
    const tok = token();
    const args = { contains: tok };
    const { stream } = await activeStream({ name: 'demo.note', arguments: args, cursor: null });
    const count = 200;
    const counted = countLogReads();
    try {
      // ~1 KB each: the 8 KB buffer holds a few; the rest waits in the log.
      for (let n = 0; n < count; n++) await noteEvents.emit(env.MCP_EVENTS, { data: { text: `${tok} ${'x'.repeat(1_000)}`, n } });
      const read = await readUntil(stream, count - 1);
      expect(read.map((item) => ('n' in item ? item.n : 'active'))).toEqual(Array.from({ length: count }, (_, n) => n));
      expect(counted.reads, 'the stream paused and read on from the log').toBeGreaterThan(0);
    } finally {
      await stream.cancel();
    }
  });

  it('retention (demo.tiny keeps 3) overtaking it: a fresh active with truncated: true and the cursor it resumes at, then the kept occurrences; every gap announced', async () => {
    await resetEventLog(env.MCP_EVENTS, tinyEvents);
    const { stream } = await activeStream({ name: 'demo.tiny', cursor: null });
    const count = 400;
    try {
      for (let n = 0; n < count; n++) await tinyEvents.emit(env.MCP_EVENTS, { data: { n } });
      const read = await readUntil(stream, count - 1);
      const restarts = read.filter((item) => 'active' in item);
      // The buffer holds a few dozen of these: the stream paused, and retention overtook it.
      expect(restarts.length).toBeGreaterThan(0);
      let expected = 0;
      let announced = false;
      for (const item of read) {
        if ('active' in item) {
          expect(item.active.truncated).toBe(true);
          expected = cursorFields(item.active.cursor).next;
          announced = true;
          continue;
        }
        if (item.n !== expected) throw new Error(`got n=${item.n} where ${expected} was due, with no active announcing a gap`);
        expect(cursorFields(item.cursor).next).toBe(item.n + 1);
        expected = item.n + 1;
      }
      expect(announced).toBe(true);
      // The stream's position is the log's head: a poll from its last cursor continues with nothing skipped.
      const last = read.at(-1) as { cursor: string };
      const after = await polled({ name: 'demo.tiny', cursor: last.cursor });
      expect({ events: after.events, truncated: after.truncated }).toEqual({ events: [], truncated: false });
    } finally {
      await stream.cancel();
    }
  });
});
