/**
 * A message too large to store cannot be sent (delivery is store-then-send). An answer that
 * large must still end its call — with a typed error, the same one on every replay — never
 * leave the call open with nothing to say.
 */
import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_BYTES } from '../../src/session/event-log.ts';
import { messages, openSession, toolCall } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

describe('an answer too large to store', () => {
  it('ends the call with a message_too_large error, replayed as such, and the session goes on', async () => {
    const session = await openSession();
    const events = await session.call('tools/call', toolCall('echo', { text: 'x'.repeat(MAX_MESSAGE_BYTES) }), 'big');
    const [answer] = messages(events);
    expect(answer).toMatchObject({
      jsonrpc: '2.0',
      id: 'big',
      error: { code: -32603, data: { reason: 'message_too_large', limit: MAX_MESSAGE_BYTES } },
    });
    expect((answer as any).error.data.bytes).toBeGreaterThan(MAX_MESSAGE_BYTES);
    expect(answer).not.toHaveProperty('result');

    // The stream finished with that error: resuming from its priming event replays exactly it.
    const replay = messages(await new SseReader(await session.get(events[0]!.id)).all());
    expect(replay).toEqual([answer]);

    // Just within the bound, the same tool answers normally.
    const text = 'y'.repeat(MAX_MESSAGE_BYTES - 200);
    const [fits] = messages(await session.call('tools/call', toolCall('echo', { text })));
    expect(fits).toMatchObject({ result: { content: [{ type: 'text', text }] } });
  });
});
