/**
 * A call whose client went away: it runs to its end with nothing attached, its events and
 * result are stored as they happen, and the resume replays them. The object stays resident
 * for the call's whole life (residency.ts): the call's stream holds a `waitUntil` promise
 * until it ends.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/session/event-log.ts';
import { Residency } from '../../src/session/residency.ts';
import { callTool, messages, openSession, type Session } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const stubOf = (session: Session) => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
const progress = (n: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 'p', progress: n, total: 3 },
});
const liftoff = (id: string) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'liftoff after 3' }] } });

/** Replaces the object's `ctx.waitUntil` with a recorder: whether each promise it was given has settled. */
async function recordWaitUntil(session: Session): Promise<{ settled: boolean }[]> {
  const recorded: { settled: boolean }[] = [];
  await runInDurableObject(stubOf(session), (_instance, state) => {
    state.waitUntil = (promise: Promise<unknown>) => {
      const entry = { settled: false };
      recorded.push(entry);
      void promise.finally(() => (entry.settled = true));
    };
  });
  return recorded;
}

describe('a call whose only client disconnected mid-call', () => {
  it('finishes while nothing touches the session, and is replayed whole on the resume', async () => {
    const session = await openSession();
    const response = await session.post(callTool('away', 'countdown', { from: 3, interval_ms: 400 }, { progressToken: 'p' }));
    const reader = new SseReader(response);
    const [priming, first] = await reader.take(2);
    expect(JSON.parse(first!.data)).toEqual(progress(1));
    await reader.cancel(); // the only client leaves; ~800 ms of the call remain

    await sleep(2_000); // no request to the session for longer than the whole call (1.2 s)

    // Finished and stored before anyone came back: not produced by the resume.
    const stored = await runInDurableObject(stubOf(session), (_instance, state) => {
      const { stream } = state.storage.sql
        .exec<{ stream: number }>(`SELECT max(stream) AS stream FROM streams WHERE kind = 'request'`)
        .one();
      const events = state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM events WHERE stream = ?`, stream).one().n;
      return { state: new EventLog(state.storage).stream(stream)?.state, events };
    });
    expect(stored).toEqual({ state: 'finished', events: 4 }); // three progress events and the result

    const resumed = await session.get(first!.id);
    expect(resumed.status).toBe(200);
    // A fresh instance would have found the call orphaned, ended it with request_interrupted
    // and advanced the epoch: the same epoch means the call ran to its end in one instance.
    expect(resumed.headers.get('Mcp-Session-Epoch')).toBe(String(session.epoch));
    expect(resumed.headers.get('Mcp-Stream-Resumed')).toBe('true');
    expect(messages(await new SseReader(resumed).all())).toEqual([progress(2), progress(3), liftoff('away')]);

    // And from its first event, as often as asked: the result is replayable, never re-run.
    const again = await session.get(priming!.id);
    expect(messages(await new SseReader(again).all())).toEqual([progress(1), progress(2), progress(3), liftoff('away')]);
  });

  it('holds the object resident from the call’s start to its answer', async () => {
    const session = await openSession();
    const held = await recordWaitUntil(session);
    const response = await session.post(callTool('held', 'countdown', { from: 3, interval_ms: 200 }, { progressToken: 'p' }));
    const reader = new SseReader(response);
    await reader.take(2);
    await reader.cancel();
    expect(held).toEqual([{ settled: false }]); // running, no client attached
    await sleep(1_000);
    expect(held).toEqual([{ settled: true }]); // answered: the object may go
  });

  it('hands nothing to waitUntil for a call answered within its request', async () => {
    const session = await openSession();
    const held = await recordWaitUntil(session);
    const response = await session.post(callTool('quick', 'countdown', { from: 2, interval_ms: 0 }));
    await new SseReader(response).all();
    expect(held).toEqual([]);
  });

  it('releases the object when the call is cancelled, and when the session is deleted', async () => {
    const session = await openSession();
    const held = await recordWaitUntil(session);
    const first = await session.post(callTool('cancelled', 'countdown', { from: 3, interval_ms: 10_000 }));
    const second = await session.post(callTool('deleted', 'countdown', { from: 3, interval_ms: 10_000 }));
    await Promise.all([first.body?.cancel(), second.body?.cancel()]);
    expect(held).toEqual([{ settled: false }, { settled: false }]);

    const cancel = await session.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'cancelled' } });
    expect(cancel.status).toBe(202);
    await sleep(0);
    expect(held).toEqual([{ settled: true }, { settled: false }]);

    expect((await session.delete()).status).toBe(204);
    await sleep(0);
    expect(held).toEqual([{ settled: true }, { settled: true }]);
  });
});

describe('Residency', () => {
  const recorder = () => {
    const given: Promise<void>[] = [];
    const settled = new Set<Promise<void>>();
    const residency = new Residency((until) => {
      given.push(until);
      void until.then(() => settled.add(until));
    });
    const isSettled = async (i: number) => {
      await sleep(0);
      return settled.has(given[i]!);
    };
    return { residency, given, isSettled };
  };

  it('gives waitUntil one promise per stream still open when its request is answered, settled by its release', async () => {
    const { residency, given, isSettled } = recorder();
    residency.hold(1);
    residency.hold(1); // a stream is held once
    residency.hold(2);
    expect(given).toHaveLength(0); // the request that opened them keeps the object meanwhile
    expect(residency.size).toBe(2);
    residency.detach();
    residency.detach(); // a stream is handed over once
    expect(given).toHaveLength(2);
    residency.release(1);
    expect([await isSettled(0), await isSettled(1)]).toEqual([true, false]);
    residency.release(1); // twice is harmless
    residency.release(3); // never held: nothing
    expect(residency.size).toBe(1);
    residency.releaseAll();
    expect([await isSettled(0), await isSettled(1)]).toEqual([true, true]);
    expect(residency.size).toBe(0);
  });

  it('never hands over a stream that ended within its request', () => {
    const { residency, given } = recorder();
    residency.hold(1, 2);
    expect(residency.requests).toBe(2);
    residency.release(1);
    residency.detach();
    expect(given).toHaveLength(0);
    expect([residency.size, residency.requests]).toEqual([0, 0]);
  });

  it('holds a stream again after its release', async () => {
    const { residency, given, isSettled } = recorder();
    residency.hold(7);
    residency.detach();
    residency.release(7);
    residency.hold(7);
    residency.detach();
    expect(given).toHaveLength(2);
    expect([await isSettled(0), await isSettled(1)]).toEqual([true, false]);
  });
});
