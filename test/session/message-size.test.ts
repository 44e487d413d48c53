/**
 * A message is stored before it is sent; one longer than a SQLite value may be (2 MB) is
 * stored in parts, up to MAX_MESSAGE_BYTES. An answer over that must still end its call —
 * with a typed error, the same one on every replay — never leave the call open with nothing
 * to say. A handshake is stored as one value, and one too large for it is refused before
 * anything runs.
 */
import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_BYTES, MAX_VALUE_BYTES } from '../../src/session/event-rows.ts';
import { errorOf, initializeRequest, messages, openSession, postRaw, toolCall } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

const MiB = 1024 * 1024;

describe('a large answer', () => {
  it('over one stored value: delivered and replayed whole', async () => {
    const session = await openSession();
    // 3 MiB of text with two- and four-byte characters, so parts are cut between them.
    const text = 'é😀ab'.repeat(MiB / 8);
    const events = await session.call('tools/call', toolCall('echo', { text, repeat: 3 }), 'large');
    const [answer] = messages(events);
    expect(answer).toEqual({ jsonrpc: '2.0', id: 'large', result: { content: [{ type: 'text', text: text.repeat(3) }] } });
    const replay = messages(await new SseReader(await session.get(events[0]!.id)).all());
    expect(replay).toEqual([answer]);
  });

  it('just within MAX_MESSAGE_BYTES: delivered', async () => {
    const session = await openSession();
    const text = 'y'.repeat((MAX_MESSAGE_BYTES - 200) / 8);
    const [fits] = messages(await session.call('tools/call', toolCall('echo', { text, repeat: 8 })));
    expect(fits).toMatchObject({ result: { content: [{ type: 'text', text: text.repeat(8) }] } });
  });
});

describe('an answer too large to store', () => {
  it('ends the call with a message_too_large error, replayed as such, and the session goes on', async () => {
    const session = await openSession();
    const events = await session.call('tools/call', toolCall('echo', { text: 'x'.repeat(MiB), repeat: MAX_MESSAGE_BYTES / MiB }), 'big');
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

    // The session goes on.
    const [next] = messages(await session.call('tools/call', toolCall('echo', { text: 'after' })));
    expect(next).toMatchObject({ result: { content: [{ type: 'text', text: 'after' }] } });
  });
});

describe('an initialize too large to store', () => {
  it('is refused whole with 400 message_too_large: no session is created, no id issued', async () => {
    const request = initializeRequest();
    const big = { ...request, params: { ...request.params, clientInfo: { name: 'x'.repeat(MAX_VALUE_BYTES), version: '1' } } };
    const response = await postRaw(big);
    expect(response.headers.get('Mcp-Session-Id')).toBeNull();
    const error = await errorOf(response);
    expect(error).toMatchObject({ status: 400, code: -32600, reason: 'message_too_large' });
    expect(error.body.id).toBe(request.id);
    expect(error.body.error.data).toMatchObject({ limit: MAX_VALUE_BYTES });
    expect(error.body.error.data.bytes).toBeGreaterThan(MAX_VALUE_BYTES);

    // Just within the bound, the handshake is stored and the session works.
    const fits = { ...request, params: { ...request.params, clientInfo: { name: 'x'.repeat(MAX_VALUE_BYTES - 500), version: '1' } } };
    const created = await postRaw(fits);
    expect(created.status).toBe(200);
    expect(created.headers.get('Mcp-Session-Id')).not.toBeNull();
    await created.body?.cancel();
  });
});
