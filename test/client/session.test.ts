/**
 * A session that is gone (404) takes its waiting requests with it, each told so with a typed
 * error; the Client can then start a new one. A server without the wire contract's headers gets
 * the spec's plain resumption, and the transport says so.
 */
import { listDurableObjectIds } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { RequestLostError, SessionLostError } from '../../src/client/index.ts';
import { BASE_HEADERS, URL_ } from '../support/mcp-http.ts';
import {
  connect,
  countdown,
  countdownFrameEnds,
  faultyFetch,
  firstToolCallPosts,
  liftoff,
  tally,
  toolCallStreams,
  type Cut,
  type Logged,
  type Tamper,
} from './faults.ts';

const resumes = (log: readonly Logged[]) => log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null);

describe('a lost session', () => {
  it('fails every waiting request with SessionLostError, then the Client starts a new session', async () => {
    const ends = await countdownFrameEnds('2025-11-25', 10);
    let deleted = false;
    // Before the first resume, the session is deleted (as an expiry or another client's DELETE would).
    const tamper: Tamper = {
      async request(request) {
        if (request.method === 'GET' && request.headers.has('Last-Event-ID') && !deleted) {
          deleted = true;
          const sessionId = request.headers.get('Mcp-Session-Id')!;
          const gone = await exports.default.fetch(
            new Request(URL_, { method: 'DELETE', headers: { ...BASE_HEADERS, 'Mcp-Session-Id': sessionId } }),
          );
          expect(gone.status).toBe(204);
        }
        return request;
      },
    };
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: ends[1]! + 5 }, { at: ends[1]! + 5 }], tamper);
    const { client, transport, errors } = await connect(fetch);
    const lostSession = transport.sessionId;
    const [first, second] = await Promise.all([countdown(client, 10, 40), countdown(client, 10, 40)]);

    for (const outcome of [first, second]) {
      expect(outcome.error).toBeInstanceOf(SessionLostError);
      expect(outcome.error).toMatchObject({ sessionId: lostSession, requestIds: [expect.any(Number)] });
    }
    const ids = [first, second].map((outcome) => (outcome.error as SessionLostError).requestIds[0]);
    expect(new Set(ids).size).toBe(2);
    // onerror is told once, with every request the session took with it.
    const reported = errors.filter((error) => error instanceof SessionLostError);
    expect(reported).toHaveLength(1);
    expect([...(reported[0] as SessionLostError).requestIds].sort()).toEqual([...ids].sort());

    expect(transport.sessionId).toBeUndefined();
    await expect(tally(client, 'after')).rejects.toBeInstanceOf(SessionLostError);

    // Connecting again initializes a new session on the same transport.
    await client.close();
    await client.connect(transport);
    expect(transport.sessionId).toMatch(/.+/);
    expect(transport.sessionId).not.toBe(lostSession);
    expect(await tally(client, 'after')).toBe('1');
    expect(await countdown(client, 2, 0)).toEqual({ progress: [1, 2], result: liftoff(2) });
    await client.close();
  });
});

describe('a session the client ends (terminateSession)', () => {
  it('fails its waiting requests with SessionLostError, reports nothing, and a new initialize starts over', async () => {
    const fetch = faultyFetch();
    const { client, transport, errors } = await connect(fetch);
    const ended = transport.sessionId;
    const running = countdown(client, 1_000, 20);
    await expect.poll(() => fetch.log.some((entry) => entry.rpc === 'tools/call' && entry.status === 200)).toBe(true);
    await transport.terminateSession();
    const outcome = await running;
    expect(outcome.error).toBeInstanceOf(SessionLostError);
    expect(outcome.error).toMatchObject({ sessionId: ended, requestIds: [expect.any(Number)] });
    expect(transport.sessionId).toBeUndefined();
    // No resume went out without the session's id, and nothing was reported: the caller ended it.
    expect(fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null)).toEqual([]);
    expect(errors).toEqual([]);
    await client.close();
    await client.connect(transport);
    expect(transport.sessionId).not.toBe(ended);
    expect(await tally(client, 'after-end')).toBe('1');
    await client.close();
  });
});

describe('an initialize whose answer is cut', () => {
  it.each<{ name: string; cut: Cut; posts: number }>([
    { name: 'after its headers: resumed from its stream’s start, one session', cut: { at: 0 }, posts: 1 },
    { name: 'mid-way into its first event: resumed, one session', cut: { at: 5, how: 'close' }, posts: 1 },
    { name: 'with no answer at all: sent again, which makes a second session', cut: { at: 0, how: 'drop' }, posts: 2 },
  ])('$name', async ({ cut, posts }) => {
    const before = (await listDurableObjectIds(env.MCP_SESSION)).length;
    const fetch = faultyFetch((request) => request.rpc === 'initialize', [cut]);
    const { client, transport } = await connect(fetch, { standaloneStream: false });
    expect(transport.mode).toBe('fork-safe');
    const initializes = fetch.log.filter((entry) => entry.rpc === 'initialize');
    expect(initializes.map((entry) => entry.status)).toEqual(Array.from({ length: posts }, () => 200));
    if (posts === 1) expect(resumes(fetch.log).map((entry) => entry.lastEventId)).toEqual([`${transport.epoch}-1-0`]);
    expect((await listDurableObjectIds(env.MCP_SESSION)).length - before).toBe(posts);
    expect(await tally(client, 'after-cut-initialize')).toBe('1');
    await client.close();
  });
});

describe('a server without the wire contract’s headers', () => {
  const stripped: Tamper = {
    response(response) {
      const headers = new Headers(response.headers);
      for (const name of ['Mcp-Session-Epoch', 'Mcp-Stream-Id', 'Mcp-Stream-Resumed']) headers.delete(name);
      return new Response(response.body, { status: response.status, headers });
    },
  };

  it('is reported as plain mode, and calls still resume with Last-Event-ID', async () => {
    const ends = await countdownFrameEnds('2025-11-25', 5);
    const cuts = [{ at: ends[1]! + 5 }, { at: 0, how: 'close' as const }, { at: 3 }, { at: ends[2]! }, { at: 0 }, { at: ends[1]! + 1 }];
    const fetch = faultyFetch(toolCallStreams, cuts, stripped);
    const { client, transport, modes } = await connect(fetch);
    expect(transport.mode).toBe('plain');
    expect(modes).toEqual(['plain']);
    expect(transport.epoch).toBeUndefined();
    expect(await countdown(client, 5, 20)).toEqual({ progress: [1, 2, 3, 4, 5], result: liftoff(5) });
    expect(fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null).length).toBeGreaterThanOrEqual(3);
    await client.close();
  });

  it('does not re-send a POST cut before its first event: RequestLostError, and the tool ran once', async () => {
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: 0 }], stripped);
    const { client } = await connect(fetch);
    await expect(tally(client, 'plain')).rejects.toBeInstanceOf(RequestLostError);
    expect(fetch.log.filter((entry) => entry.rpc === 'tools/call')).toHaveLength(1);
    expect(await tally(client, 'plain')).toBe('2');
    await client.close();
  });
});
