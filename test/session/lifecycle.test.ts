/**
 * A session from initialize to DELETE: ids, epochs, streams, and nothing left behind.
 */
import { abortAllDurableObjects, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/session/event-log.ts';
import { errorOf, initializeRequest, messages, openSession, postRaw, toolCall } from '../support/mcp-http.ts';
import { ENDED, SseReader } from '../support/sse-reader.ts';

const tablesOf = (sessionId: string) =>
  runInDurableObject(env.MCP_SESSION.get(env.MCP_SESSION.idFromName(sessionId)), (_instance, state) =>
    state.storage.sql
      .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
      .toArray()
      .map((row) => row.name),
  );

describe('session lifecycle', () => {
  it('initialize mints a 256-bit session id and answers on stream 1 of its first epoch, drawn at random', async () => {
    const response = await postRaw(initializeRequest());
    expect(response.status).toBe(200);
    expect(response.headers.get('Mcp-Session-Id')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(response.headers.get('Mcp-Session-Epoch')).toMatch(/^[1-9][0-9]{9}$/); // ten digits: core/event-id.ts firstEpoch
    expect(response.headers.get('Mcp-Stream-Id')).toBe('1');
    expect(response.headers.get('Mcp-Stream-Resumed')).toBe('false');
    const [result] = messages(await new SseReader(response).all());
    expect(result).toMatchObject({ id: 0, result: { protocolVersion: '2025-11-25', serverInfo: { name: 'mcp-edge-sessions-fixture' } } });
  });

  it('two initializes mint two different sessions', async () => {
    const [a, b] = await Promise.all([openSession(), openSession()]);
    expect(a.id).not.toBe(b.id);
  });

  it('an initialize asking for an unknown version is answered with the latest supported one', async () => {
    const response = await postRaw({ ...initializeRequest(), params: { ...initializeRequest().params, protocolVersion: '2099-01-01' } });
    const [result] = messages(await new SseReader(response).all());
    expect(result).toMatchObject({ result: { protocolVersion: '2025-11-25' } });
  });

  it('every response of a session carries its epoch', async () => {
    const session = await openSession();
    const accepted = await session.post({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(accepted.headers.get('Mcp-Session-Epoch')).toBe(String(session.epoch));
    const refused = await session.post(initializeRequest('2025-11-25', {}, 77));
    expect(refused.headers.get('Mcp-Session-Epoch')).toBe(String(session.epoch));
  });

  it('each request gets its own stream and stream numbers are never reused', async () => {
    const session = await openSession();
    const streams: string[] = [];
    for (const id of [1, 2, 3]) {
      const response = await session.post({ jsonrpc: '2.0', id, method: 'ping' });
      streams.push(response.headers.get('Mcp-Stream-Id')!);
      await response.text();
    }
    expect(streams).toEqual(['2', '3', '4']);
  });

  it('a new session schedules its alarm at its idle expiry, and a call moves nothing', async () => {
    const before = Date.now();
    const session = await openSession();
    const alarmOf = () =>
      runInDurableObject(env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id)), (_i, state) => state.storage.getAlarm());
    const alarm = await alarmOf();
    expect(alarm).toBeGreaterThanOrEqual(before + 60 * 60_000);
    expect(alarm).toBeLessThan(before + 60 * 60_000 + 30_000);
    // Nothing is due when a stream ends: its events go with the session.
    await session.call('tools/call', toolCall('tally', { key: 'alarm' }));
    expect(await alarmOf()).toBe(alarm);
  });

  it('a session revived without its alarm (a setAlarm that failed) schedules it again', async () => {
    const session = await openSession();
    const stub = () => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
    await runInDurableObject(stub(), (_i, state) => state.storage.deleteAlarm());
    await abortAllDurableObjects();
    await session.call('tools/call', toolCall('tally', { key: 'revived' }));
    await expect.poll(() => runInDurableObject(stub(), (_i, state) => state.storage.getAlarm())).not.toBeNull();
  });

  it('a 2025-03-26 batch holding a request and its own cancellation leaves no stream open', async () => {
    const session = await openSession('2025-03-26');
    const response = await session.post([
      { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'countdown', arguments: { from: 50, interval_ms: 20 } } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c' } },
    ]);
    expect(response.status).toBe(200);
    expect(messages(await new SseReader(response).all(3_000))).toEqual([]);
    const open = await runInDurableObject(env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id)), (_i, state) =>
      new EventLog(state.storage).openRequestStreams(),
    );
    expect(open).toEqual([]);
  });

  it('DELETE ends the session: 204, then every request is 404', async () => {
    const session = await openSession();
    expect((await session.delete()).status).toBe(204);
    expect((await errorOf(await session.post({ jsonrpc: '2.0', id: 1, method: 'ping' }))).status).toBe(404);
    expect((await errorOf(await session.get())).status).toBe(404);
    expect((await errorOf(await session.delete())).status).toBe(404);
  });

  it('a deleted session id is never re-minted, not even by an initialize that names it', async () => {
    const session = await openSession();
    await session.delete();
    const again = await postRaw(initializeRequest(), { 'Mcp-Session-Id': session.id });
    expect(await errorOf(again)).toMatchObject({ status: 404, code: -32001 });
    expect(await tablesOf(session.id)).toEqual([]);
  });

  it('DELETE removes all of the session storage in one step', async () => {
    const session = await openSession();
    await session.call('tools/call', { name: 'tally', arguments: { key: 'k' } });
    expect(await tablesOf(session.id)).toEqual(expect.arrayContaining(['session', 'streams', 'events', 'requests']));
    await session.delete();
    expect(await tablesOf(session.id)).toEqual([]);
  });

  it('DELETE closes the session’s open connections', async () => {
    const session = await openSession();
    const standalone = new SseReader(await session.get());
    try {
      await standalone.take(1); // priming
      await session.delete();
      expect(await standalone.next(2_000)).toBe(ENDED);
    } finally {
      await standalone.cancel();
    }
  });
});
