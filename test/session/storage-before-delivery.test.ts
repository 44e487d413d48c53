/**
 * Every outgoing message is in storage before its bytes are handed to a connection.
 * The check runs at the moment of delivery, inside the object, against its own database.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/session/connection.ts';
import { RelayConnection } from '../../src/session/relay-connection.ts';
import { EventLog } from '../../src/session/event-log.ts';
import { parseEventId } from '../../src/core/event-id.ts';
import { messages, openSession, callTool, toolCall } from '../support/mcp-http.ts';
import { ENDED, SseReader } from '../support/sse-reader.ts';

const originalDeliver = RelayConnection.prototype.deliver;
const originalAppendMany = EventLog.prototype.appendMany;

afterEach(() => {
  RelayConnection.prototype.deliver = originalDeliver;
  EventLog.prototype.appendMany = originalAppendMany;
});

describe('storage before delivery', () => {
  // 100 progress events in one burst are stored in multi-row batches (APPEND_BATCH rows each):
  // each batch must be in storage before any of its events is delivered.
  it.each([20, 100])('each of %i delivered events is already a row of the event log, with the same bytes', async (count) => {
    const session = await openSession();
    const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
    const sql = await runInDurableObject(stub, (_instance, state) => state.storage.sql);
    const checked: { id: string; stored: string | undefined; sent: string }[] = [];
    RelayConnection.prototype.deliver = function (this: RelayConnection, event: Delivery) {
      const { stream, seq } = parseEventId(event.id!)!;
      const row = sql.exec<{ message: string }>(`SELECT message FROM events WHERE stream = ? AND seq = ?`, stream, seq).toArray()[0];
      checked.push({ id: event.id!, stored: row?.message, sent: event.data });
      originalDeliver.call(this, event);
    };

    const events = await session.call('tools/call', toolCall('countdown', { from: count, interval_ms: 0 }, { progressToken: 1 }));

    expect(messages(events)).toHaveLength(count + 1);
    expect(checked).toHaveLength(count + 1);
    for (const { stored, sent } of checked) expect(stored).toBe(sent);
    // Delivered in order, without a gap: seq 1..count+1 of one stream.
    expect(checked.map(({ id }) => parseEventId(id)!.seq)).toEqual(Array.from({ length: count + 1 }, (_, i) => i + 1));
  });

  it('an event that could not be stored is never delivered, and the stream goes on without a gap', async () => {
    const session = await openSession();
    let appends = 0;
    EventLog.prototype.appendMany = function (this: EventLog, events) {
      // The third progress event fails to store (as a full disk would fail it).
      if (++appends === 3) throw new Error('SQLITE_FULL: database or disk is full');
      return originalAppendMany.call(this, events);
    };
    const response = await session.post(callTool('c', 'countdown', { from: 5, interval_ms: 20 }, { progressToken: 't' }));
    const reader = new SseReader(response);
    const seen = await reader.all(5_000); // the connection ends where storing failed
    expect(seen.map((e) => e.id)).toEqual([0, 1, 2].map((seq) => session.eventId(2, seq)));
    expect(await reader.next(100)).toBe(ENDED);

    // Resuming after the last event received gets what was stored after it: the tool saw its
    // notify fail and answered with an error, numbered 3, right after the last event stored.
    const resumed = await new SseReader(await session.get(session.eventId(2, 2))).all(5_000);
    expect(resumed.map((e) => e.id)).toEqual([session.eventId(2, 2), session.eventId(2, 3)]);
    expect(messages(resumed)).toEqual([expect.objectContaining({ jsonrpc: '2.0', id: 'c' })]);
  });
});
