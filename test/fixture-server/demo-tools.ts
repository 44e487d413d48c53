/**
 * The demo's own tools: what a user's tools look like on this transport.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { SessionContext } from '../../src/lib.ts';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** The tools that need no session: served in both eras (the fixture's `modern` factory too). */
export function registerStatelessTools(server: McpServer): void {
  server.registerTool(
    'echo',
    {
      description: 'Returns its text, `repeat` times over (default once): a result of any size.',
      inputSchema: z.object({ text: z.string(), repeat: z.number().int().min(1).max(10_000).optional() }),
    },
    async ({ text, repeat = 1 }) => ({ content: [{ type: 'text', text: text.repeat(repeat) }] }),
  );

  server.registerTool(
    'countdown',
    {
      description: 'Counts down, one progress notification per step, then reports liftoff.',
      inputSchema: z.object({
        from: z.number().int().min(1).max(10_000),
        interval_ms: z.number().int().min(0).max(60_000),
      }),
    },
    async ({ from, interval_ms }, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= from; step++) {
        if (interval_ms > 0) await sleep(interval_ms, ctx.mcpReq.signal);
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: from },
          });
        }
      }
      return { content: [{ type: 'text', text: `liftoff after ${from}` }] };
    },
  );
}

/** All the demo tools; `tally`, `note`-like state and background tasks need the session. */
export function registerDemoTools(server: McpServer, session: SessionContext): void {
  registerStatelessTools(server);
  server.registerTool(
    'broadcast',
    {
      description:
        'Starts a background task that sends `count` log messages (notifications/message) on the ' +
        "session's standalone stream, one per interval, and returns at once. The task belongs to " +
        'the session, not to the call.',
      inputSchema: z.object({
        count: z.number().int().min(1).max(1_000),
        interval_ms: z.number().int().min(0).max(60_000),
      }),
    },
    async ({ count, interval_ms }) => {
      const task = (async () => {
        for (let n = 1; n <= count; n++) {
          if (interval_ms > 0) await sleep(interval_ms, AbortSignal.timeout(interval_ms + 60_000));
          await server.sendLoggingMessage({ level: 'info', logger: 'broadcast', data: { n, of: count } });
        }
      })();
      session.waitUntil(task);
      return { content: [{ type: 'text', text: `broadcasting ${count}` }] };
    },
  );

  server.registerTool(
    'ask_later',
    {
      description:
        "Starts a background task that, after `delay_ms`, asks the client for its roots (roots/list) on the session's " +
        'standalone stream, then logs the answer or the error. Shows a server request that outlives the call.',
      inputSchema: z.object({ delay_ms: z.number().int().min(0).max(60_000) }),
    },
    async ({ delay_ms }) => {
      const task = (async () => {
        await sleep(delay_ms, AbortSignal.timeout(delay_ms + 60_000));
        const outcome = await server.server.listRoots().then(
          (result) => ({ roots: result.roots }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
        );
        await server.sendLoggingMessage({ level: 'info', logger: 'ask_later', data: outcome });
      })();
      session.waitUntil(task);
      return { content: [{ type: 'text', text: `asking in ${delay_ms} ms` }] };
    },
  );

  server.registerTool(
    'tally',
    {
      description:
        'Increments a durable per-session counter and returns its new value. Not idempotent: ' +
        'running it twice for one request would show.',
      inputSchema: z.object({ key: z.string().min(1).max(256) }),
    },
    async ({ key }) => {
      const storageKey = `tally:${key}`;
      const value = (session.storage.kv.get<number>(storageKey) ?? 0) + 1;
      session.storage.kv.put(storageKey, value);
      return { content: [{ type: 'text', text: String(value) }] };
    },
  );
}
