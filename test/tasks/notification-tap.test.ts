/**
 * The round's NotificationTap (src/tasks/notification-tap.ts): the SDK's modern handler, as a
 * task's round builds it, hands the tool's notifications to the tap as they are sent and
 * frames none of them in its answer; the tap hands them on in order, in batches of at most one
 * INSERT's rows, and pauses a tool that never awaits — more often while streams follow it; a
 * notification that cannot be stored fails the round. It keeps the answer the server sent,
 * which the round takes instead of parsing the response back.
 */
import { McpServer, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createModernEndpoint } from '../../src/stateless/modern-endpoint.ts';
import { NotificationTap, type Notification } from '../../src/tasks/notification-tap.ts';
import { BATCH_ROWS } from '../../src/tasks/task-timeline.ts';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'tap-test', version: '0' },
};

/** A server whose `count` tool sends `n` progress notifications, its notify results kept. */
function server(outcomes: string[]): McpServer {
  const mcp = new McpServer({ name: 'tap-test', version: '0' });
  mcp.registerTool('count', { inputSchema: z.object({ n: z.number().int() }) }, async ({ n }, ctx) => {
    for (let progress = 1; progress <= n; progress++) {
      const notify = ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: 't', progress, total: n } });
      outcomes.push(
        await notify.then(
          () => 'sent',
          (error: Error) => `rejected: ${error.message}`,
        ),
      );
    }
    return { content: [{ type: 'text', text: `counted ${n}` }] };
  });
  // `turns` bursts of `per_turn` notifications, the tool yielding (awaiting a timer) after each.
  mcp.registerTool(
    'count_in_turns',
    { inputSchema: z.object({ turns: z.number().int(), per_turn: z.number().int() }) },
    async (args, ctx) => {
      let progress = 0;
      for (let turn = 1; turn <= args.turns; turn++) {
        for (let i = 0; i < args.per_turn; i++) {
          progress++;
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: 't', progress } });
        }
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      return { content: [{ type: 'text', text: `counted ${progress}` }] };
    },
  );
  return mcp;
}

async function call(
  tap: NotificationTap,
  outcomes: string[],
  n: number,
  tool?: { name: string; arguments: Record<string, number> },
): Promise<string> {
  const handler = createModernEndpoint(
    () => tap.attach(server(outcomes)),
    {},
    // As the task's object builds it (task-object.ts): the SDK's default response mode.
    { maxBodyBytes: 1 << 20, heartbeatMs: 0 },
  );
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { ...(tool ?? { name: 'count', arguments: { n } }), _meta: { ...META, progressToken: 't' } },
  };
  const response = await handler.fetch(
    new Request('https://task.internal/mcp', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': tool?.name ?? 'count',
      },
      body: JSON.stringify(body),
    }),
  );
  const text = await response.text();
  await handler.close();
  tap.close(); // as the round does once it has the answer
  return text;
}

/** A tap whose sink keeps each batch's progress values and says it gave streams `streamedBytes` a notification. */
function recordingTap(streamedBytes = 0): { tap: NotificationTap; batches: number[][] } {
  const batches: number[][] = [];
  const tap = new NotificationTap((batch: readonly Notification[]) => {
    batches.push(batch.map(({ params }) => params.progress as number));
    return streamedBytes * batch.length;
  });
  return { tap, batches };
}

/** Of the first `n` notifications of a tool that never awaits I/O, how many were handed on at each of the macrotasks it yielded. */
async function handedOnAtEachPause(streamedBytes: number, n: number): Promise<number[]> {
  const { tap, batches } = recordingTap(streamedBytes);
  const seen: number[] = [];
  let running = true;
  const watch = () => {
    seen.push(batches.flat().length);
    if (running) setTimeout(watch, 0);
  };
  setTimeout(watch, 0);
  await call(tap, [], n);
  running = false;
  // Distinct counts: the macrotasks the loop let run, each at the count it had reached.
  return [...new Set(seen)].filter((count) => count < n);
}

describe('NotificationTap', () => {
  it('takes the tool’s notifications as they are sent; the answer carries only the result', async () => {
    const received: unknown[] = [];
    const outcomes: string[] = [];
    const tap = new NotificationTap((batch) => {
      received.push(...batch.map(({ method, params }) => ({ method, progress: params.progress })));
      return 0;
    });
    const answer = await call(tap, outcomes, 3);
    expect(received).toEqual([1, 2, 3].map((progress) => ({ method: 'notifications/progress', progress })));
    expect(outcomes).toEqual(['sent', 'sent', 'sent']);
    expect(answer).not.toContain('notifications/progress');
    expect(answer).toContain('counted 3');
  });

  it('keeps the answer as the server sent it: the message the response is made of, nothing framed with it', async () => {
    const tap = new NotificationTap(() => 0);
    const answer = await call(tap, [], 3);
    expect(tap.answer).toEqual(JSON.parse(answer));
    expect(tap.answer).toMatchObject({ id: 1, result: { content: [{ type: 'text', text: 'counted 3' }] } });
  });

  it('hands the notifications on in order, the turn’s first at once and the rest in batches of at most one INSERT', async () => {
    const { tap, batches } = recordingTap();
    const n = 2 * BATCH_ROWS + 10;
    await call(tap, [], n);
    expect(batches.flat()).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(batches[0]).toEqual([1]);
    expect(Math.max(...batches.map((batch) => batch.length))).toBe(BATCH_ROWS);
    expect(batches.filter((batch) => batch.length === BATCH_ROWS)).toHaveLength(2);
  });

  it('pauses a tool that never awaits I/O after its first full batch, so its object can serve other requests meanwhile', async () => {
    const { tap, batches } = recordingTap();
    let handedOnWhenTimerRan: number | undefined;
    setTimeout(() => (handedOnWhenTimerRan = batches.flat().length), 0);
    await call(tap, [], 10 * BATCH_ROWS);
    // Without the pause the timer runs only once the whole loop is over (all 490 handed on).
    expect(handedOnWhenTimerRan).toBeDefined();
    expect(handedOnWhenTimerRan!).toBeLessThanOrEqual(1 + BATCH_ROWS);
  });

  // A turn hands on its first notification alone, then full batches until a pause ends it.
  const turns = (batchesPerTurn: number[]) => batchesPerTurn.map((batches) => 1 + batches * BATCH_ROWS);
  it.each([
    // 64 batches: with nobody streaming, the schedule's pauses alone, after batches 1, 2, 4, …,
    // 32 (the 64th is the last); given to streams 1 KiB a notification, also a pause each time
    // 128 KiB have been handed to them: turns of at most 3 batches (3 × 49 KiB).
    { streaming: 'nobody streaming', bytes: 0, schedule: turns([1, 1, 2, 4, 8, 16]), longest: turns([16])[0] },
    { streaming: 'streams given 1 KiB a notification', bytes: 1024, schedule: undefined, longest: turns([3])[0] },
  ])('pauses on its schedule, and with $streaming, whenever 128 KiB were handed to streams', async ({ bytes, schedule, longest }) => {
    const counts = await handedOnAtEachPause(bytes, 64 * BATCH_ROWS);
    const turnSizes = counts.map((count, i) => count - (counts[i - 1] ?? 0));
    if (schedule !== undefined) expect(turnSizes).toEqual(schedule);
    expect(Math.max(...turnSizes)).toBe(longest);
  });

  it('counts what streams were given only since the tool last yielded: bursts that yield on their own are paused only when one gives 128 KiB', async () => {
    // Sixteen bursts of one notification, then a full batch, the tool yielding after each.
    const turns = 16;
    const pausesWith = async (streamedBytes: number) => {
      const { tap } = recordingTap(streamedBytes);
      await call(tap, [], 0, { name: 'count_in_turns', arguments: { turns, per_turn: 1 + BATCH_ROWS } });
      return tap.pauses;
    };
    const nobody = await pausesWith(0);
    expect(nobody).toBeGreaterThan(0); // the schedule's own
    // 50 KiB a burst: never 128 KiB since the last yield (counted across bursts, it was 3 more).
    expect(await pausesWith(1024)).toBe(nobody);
    // 49 × 64 KiB in each burst's batch: every burst.
    expect(await pausesWith(64 * 1024)).toBe(turns);
  });

  it('fails the round when a batch cannot be stored: the notify that handed it on rejects, and every later one', async () => {
    const outcomes: string[] = [];
    const tap = new NotificationTap((batch) => {
      if (batch.some(({ params }) => params.progress === 2)) throw new Error('SQLITE_FULL');
      return 0;
    });
    const n = BATCH_ROWS + 5;
    const answer = await call(tap, outcomes, n);
    // 1 went on alone; 2 … BATCH_ROWS + 1 waited for company, and the one that filled the batch failed with it.
    expect(outcomes).toEqual([
      ...Array.from({ length: BATCH_ROWS }, () => 'sent'),
      ...Array.from({ length: n - BATCH_ROWS }, () => 'rejected: SQLITE_FULL'),
    ]);
    expect(String(tap.failure?.error)).toContain('SQLITE_FULL');
    // The tool went on and answered; the round (task-round.ts) fails on `failure` regardless.
    expect(answer).toContain(`counted ${n}`);
  });

  it('fails the round when what waited for the end of the turn cannot be stored, though every notify had resolved', async () => {
    const outcomes: string[] = [];
    const tap = new NotificationTap((batch) => {
      if (batch.some(({ params }) => params.progress === 2)) throw new Error('SQLITE_FULL');
      return 0;
    });
    await call(tap, outcomes, 3);
    expect(outcomes).toEqual(['sent', 'sent', 'sent']);
    expect(String(tap.failure?.error)).toContain('SQLITE_FULL');
  });

  it('passes everything else through to the transport itself, which keeps the handlers the SDK sets', async () => {
    const sent: JSONRPCMessage[] = [];
    const transport = new (class implements Transport {
      onmessage?: Transport['onmessage'];
      readonly #sent = sent;
      async start() {}
      async close() {}
      async send(message: JSONRPCMessage) {
        this.#sent.push(message); // a private field: the view calls it bound to the transport
      }
    })();
    const received: string[] = [];
    const mcp = new McpServer({ name: 'tap-test', version: '0' });
    let view: Transport | undefined;
    mcp.server.connect = async (connected: Transport) => {
      view = connected;
    };
    const tap = new NotificationTap((batch) => {
      received.push(...batch.map(({ method }) => method));
      return 0;
    });
    await tap.attach(mcp).connect(transport);
    const handler = () => undefined;
    view!.onmessage = handler;
    expect(transport.onmessage).toBe(handler);
    await view!.send({ jsonrpc: '2.0', id: 1, result: {} }, { relatedRequestId: 1 });
    await view!.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await view!.send(
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } },
      { relatedRequestId: 1 },
    );
    expect(sent).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ]);
    expect(received).toEqual(['notifications/progress']);
    // The answer went on to the transport, and the tap kept it; a second one would not replace it.
    await view!.send({ jsonrpc: '2.0', id: 1, result: { late: true } }, { relatedRequestId: 1 });
    expect(tap.answer).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });
});
