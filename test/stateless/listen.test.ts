/**
 * subscriptions/listen (2026-07-28): a change made by one request reaches the listen streams
 * held by other requests — through the event bus object, as it would across isolates.
 */
import { abortAllDurableObjects, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { SseReader } from '../support/sse-reader.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';

describe('a listen stream', () => {
  it('is acknowledged, then hears a change another request makes, tagged with its subscription', async () => {
    const listen = await modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } });
    expect(listen.headers.get('Content-Type')).toContain('text/event-stream');
    const reader = new SseReader(listen);
    try {
      const [ack] = await reader.take(1);
      const acknowledged = JSON.parse(ack!.data);
      expect(acknowledged.method).toBe('notifications/subscriptions/acknowledged');
      const subscription = acknowledged.params._meta['io.modelcontextprotocol/subscriptionId'];
      // The stream listens through the bus object, which any isolate's publish reaches.
      const bus = env.MCP_BUS.get(env.MCP_BUS.idFromName('bus'));
      expect(await runInDurableObject(bus, (_instance, state) => state.getWebSockets().length)).toBeGreaterThanOrEqual(1);

      const trigger = await answerOf(await modernRequest('tools/call', { name: 'test_trigger_tool_change', arguments: {} }));
      expect(trigger.result.content[0].text).toBe('tools changed');

      const [change] = await reader.take(1);
      expect(JSON.parse(change!.data)).toMatchObject({
        method: 'notifications/tools/list_changed',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': subscription } },
      });
    } finally {
      await reader.cancel();
    }
  });

  it('hears only what it asked for', async () => {
    const listen = await modernRequest('subscriptions/listen', { notifications: { promptsListChanged: true } });
    const reader = new SseReader(listen);
    try {
      await reader.take(1); // the acknowledgement
      await answerOf(await modernRequest('tools/call', { name: 'test_trigger_tool_change', arguments: {} }));
      await answerOf(await modernRequest('tools/call', { name: 'test_trigger_prompt_change', arguments: {} }));
      const [change] = await reader.take(1);
      expect(JSON.parse(change!.data).method).toBe('notifications/prompts/list_changed');
    } finally {
      await reader.cancel();
    }
  });

  it('survives the bus object going away: it reconnects, is told its list may have changed, and hears the next change', async () => {
    const listen = await modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } });
    const reader = new SseReader(listen);
    try {
      await reader.take(1); // the acknowledgement
      await abortAllDurableObjects(); // the bus object's instance ends, and its sockets with it
      const [spare] = await reader.take(1);
      expect(JSON.parse(spare!.data).method, 'what changed meanwhile is unknown').toBe('notifications/tools/list_changed');
      await answerOf(await modernRequest('tools/call', { name: 'test_trigger_tool_change', arguments: {} }));
      const [change] = await reader.take(1);
      expect(JSON.parse(change!.data).method).toBe('notifications/tools/list_changed');
    } finally {
      await reader.cancel();
    }
  });
});
