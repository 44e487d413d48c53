/**
 * The session object restarts (eviction, a crash, a deploy) while a call is running: its
 * handler is gone, so the server ends the call's stream with `request_interrupted` in a new
 * epoch. The transport resumes into that stream, accepts the gap-free replay, and the call
 * fails with the server's JSON-RPC error: neither re-sent, nor left waiting.
 */
import { ProtocolError } from '@modelcontextprotocol/client';
import { abortAllDurableObjects } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { connect, faultyFetch, firstToolCallPosts, settle, tally, type Tamper } from './faults.ts';

const isResume = (request: Request) => request.method === 'GET' && request.headers.has('Last-Event-ID');

/** The error a call interrupted in the session's first epoch ends with: in the next. */
const interrupted = (first: number) => ({ code: -32603, data: { reason: 'request_interrupted', epoch: first + 1 } });

describe('a call interrupted by a restart of the session object', () => {
  it('fails with the request_interrupted error when the object restarts while the call’s stream is cut', async () => {
    let aborted = false;
    // The call's connection breaks after a few progress events; before the resume reaches the
    // session, its object is aborted, taking the running handler with it.
    const tamper: Tamper = {
      async request(request) {
        if (isResume(request) && !aborted) {
          aborted = true;
          await abortAllDurableObjects();
        }
        return request;
      },
    };
    // The countdown's POST is cut after a few events; the later tally's before its first event.
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: 400 }, { at: 0 }], tamper);
    const { client, transport } = await connect(fetch, { standaloneStream: false });
    const first = transport.epoch!;
    const progress: number[] = [];
    const call = client.callTool(
      { name: 'countdown', arguments: { from: 1_000, interval_ms: 20 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    const outcome = await settle(call);
    expect(outcome).not.toBe('hung');
    const { error } = outcome as { error?: unknown };
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject(interrupted(first));
    // What ran before the restart reached the caller once each, in order, with nothing skipped.
    expect(progress).toEqual(Array.from({ length: progress.length }, (_, i) => i + 1));
    expect(progress.length).toBeGreaterThanOrEqual(2);

    // Resumed (same stream, the cursor's epoch), never re-sent.
    const posts = fetch.log.filter((entry) => entry.rpc === 'tools/call');
    expect(posts).toHaveLength(1);
    const resumes = fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null);
    expect(resumes.map((entry) => [entry.status, entry.streamId])).toEqual([[200, posts[0]!.streamId]]);
    expect(resumes[0]!.lastEventId).toMatch(new RegExp(`^${first}-${posts[0]!.streamId}-[1-9]\\d*$`));
    // Everything up to the error was replayed from the cursor on: progress n is event n.
    expect(progress.length).toBeGreaterThanOrEqual(Number(resumes[0]!.lastEventId!.split('-')[2]));
    expect(transport.epoch).toBe(first + 1);

    // The session goes on in its new epoch: a call cut before its first event resumes from its
    // stream's start in that epoch, and runs once.
    expect(await tally(client, 'after-restart')).toBe('1');
    const tallyPost = fetch.log.filter((entry) => entry.rpc === 'tools/call').at(-1)!;
    expect(fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null).at(-1)).toMatchObject({
      lastEventId: `${first + 1}-${tallyPost.streamId}-0`,
      status: 200,
    });
    expect(await tally(client, 'after-restart')).toBe('2');
    await client.close();
  });

  it('fails with the request_interrupted error when the object restarts under a live connection', async () => {
    const fetch = faultyFetch();
    const { client, transport, errors } = await connect(fetch, { standaloneStream: false });
    const first = transport.epoch!;
    const progress: number[] = [];
    const call = client.callTool(
      { name: 'countdown', arguments: { from: 1_000, interval_ms: 20 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    await expect.poll(() => progress.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    await abortAllDurableObjects();
    const outcome = await settle(call);
    expect(outcome).not.toBe('hung');
    expect((outcome as { error?: unknown }).error).toMatchObject(interrupted(first));
    expect(progress).toEqual(Array.from({ length: progress.length }, (_, i) => i + 1));
    expect(fetch.log.filter((entry) => entry.rpc === 'tools/call')).toHaveLength(1);
    expect(fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null).length).toBeGreaterThanOrEqual(1);
    expect(transport.epoch).toBe(first + 1);
    expect(errors.filter((error) => error.name !== 'ForkSafeTransportError')).toEqual([]);
    await client.close();
  });
});
