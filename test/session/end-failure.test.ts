/**
 * A session ended from outside (an operator, a revoked grant: the object's end route) answers
 * each running call first, every answer stored before it is delivered. When storing fails
 * partway (a full disk), the end fails — and what a client already received is what storage
 * holds: its resume is a resume, never `cursor_ahead` for an id the server sent it. Ending
 * again then completes.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { OBJECT_ROUTES } from '../../src/core/wire.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { callTool, openSession } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

const originalFinish = SessionStreams.prototype.finish;
afterEach(() => {
  SessionStreams.prototype.finish = originalFinish;
});

const end = (sessionId: string) =>
  env.MCP_SESSION.get(env.MCP_SESSION.idFromName(sessionId)).fetch(
    new Request(`https://session.internal${OBJECT_ROUTES.end}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Mcp-Session-Id': sessionId },
      body: JSON.stringify({ reason: 'ended_by_operator' }),
    }),
  );

describe('a session ended from outside', () => {
  it('when storing fails partway, every answer a client received is stored, and ending again completes', async () => {
    const session = await openSession();
    const reader = new SseReader(
      await session.post(callTool('running', 'countdown', { from: 1_000, interval_ms: 20 }, { progressToken: 't' })),
    );
    await reader.take(2);
    // The end's first step after the call's answer fails, as a full disk would.
    let failures = 0;
    SessionStreams.prototype.finish = function (this: SessionStreams, stream: number) {
      if (failures++ === 0) throw new Error('SQLITE_FULL (injected)');
      return originalFinish.call(this, stream);
    };
    expect((await end(session.id)).status).toBe(500);
    SessionStreams.prototype.finish = originalFinish;

    const received = await reader.all(5_000);
    const answer = received.find((event) => event.data.includes('"ended_by_operator"'));
    expect(answer, 'the call was answered before the failure').toBeDefined();
    const resumed = await session.get(answer!.id);
    expect(resumed.status).toBe(200);
    await resumed.body?.cancel();

    expect((await end(session.id)).status).toBe(204);
    expect((await session.post({ jsonrpc: '2.0', id: 'after', method: 'ping' })).status).toBe(404);
  });
});
