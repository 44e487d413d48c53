import { describe, expect, it } from 'vitest';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { ENDED, SseReader, TIMED_OUT } from '../support/sse-reader.ts';

const EVENTS = { extensions: { 'io.modelcontextprotocol/events': {} } };

async function post(text: string) {
  const answer = await answerOf(await modernRequest('tools/call', { name: 'post_note', arguments: { text } }));
  return answer.result.structuredContent as { eventId: string; seq: number };
}

describe('events smoke', () => {
  it('lists, polls and streams demo.note', async () => {
    const discover = await answerOf(await modernRequest('server/discover', {}, EVENTS));
    expect(discover.result.capabilities.extensions['io.modelcontextprotocol/events']).toEqual({});
    const list = await answerOf(await modernRequest('events/list', {}, EVENTS));
    expect(list.result.events.map((e: { name: string }) => e.name)).toEqual([
      'demo.note',
      'demo.other',
      'demo.tiny',
      'demo.polled',
      'demo.watched',
      'demo.upstream',
      'mcp-edge-sessions.task',
    ]);
    const first = await answerOf(await modernRequest('events/poll', { name: 'demo.note', arguments: {}, cursor: null }, EVENTS));
    expect(first.result).toMatchObject({ resultType: 'complete', events: [], truncated: false, hasMore: false });
    await post('hello');
    await post('world');
    const second = await answerOf(
      await modernRequest('events/poll', { name: 'demo.note', arguments: { contains: 'wor' }, cursor: first.result.cursor }, EVENTS),
    );
    expect(second.result.events.map((e: { data: { text: string } }) => e.data.text)).toEqual(['world']);

    const stream = await modernRequest('events/stream', { name: 'demo.note', arguments: {}, cursor: first.result.cursor }, EVENTS);
    expect(stream.headers.get('Content-Type')).toContain('text/event-stream');
    const reader = new SseReader(stream);
    try {
      const frames: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const frame = await reader.next();
        if (frame === ENDED || frame === TIMED_OUT) throw new Error(String(frame));
        frames.push(JSON.parse(frame.data));
      }
      expect(frames.map((f: any) => [f.method, f.params.data?.text])).toEqual([
        ['notifications/events/active', undefined],
        ['notifications/events/event', 'hello'],
        ['notifications/events/event', 'world'],
      ]);
      await post('live');
      const live = await reader.next();
      if (live === ENDED || live === TIMED_OUT) throw new Error(String(live));
      expect(JSON.parse(live.data).params.data.text).toBe('live');
    } finally {
      await reader.cancel();
    }
  });
});
