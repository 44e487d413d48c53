/**
 * Every outgoing message is in storage before its bytes are handed to a connection.
 * The check runs at the moment of delivery, inside the object, against its own database.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { SseConnection, type Delivery } from '../../src/session/connection.ts';
import { parseEventId } from '../../src/core/event-id.ts';
import { messages, openSession, toolCall } from '../support/mcp-http.ts';

const originalDeliver = SseConnection.prototype.deliver;

afterEach(() => {
  SseConnection.prototype.deliver = originalDeliver;
});

describe('storage before delivery', () => {
  it('each delivered event is already a row of the event log, with the same bytes', async () => {
    const session = await openSession();
    const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
    const sql = await runInDurableObject(stub, (_instance, state) => state.storage.sql);
    const checked: { id: string; stored: string | undefined; sent: string }[] = [];
    SseConnection.prototype.deliver = function (this: SseConnection, event: Delivery) {
      const { stream, seq } = parseEventId(event.id)!;
      const row = sql.exec<{ message: string }>(`SELECT message FROM events WHERE stream = ? AND seq = ?`, stream, seq).toArray()[0];
      checked.push({ id: event.id, stored: row?.message, sent: event.data });
      originalDeliver.call(this, event);
    };

    const events = await session.call('tools/call', toolCall('countdown', { from: 20, interval_ms: 0 }, { progressToken: 1 }));

    expect(messages(events)).toHaveLength(21);
    expect(checked).toHaveLength(21);
    for (const { stored, sent } of checked) expect(stored).toBe(sent);
  });
});
