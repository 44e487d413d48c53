/**
 * Benchmark peer "ours": this project's transport with the two benchmark tools, written the
 * way a user of the library writes a server (README section 3): subclass McpSessionObject,
 * build an SDK v2 McpServer with sessionServerOptions(), hand the binding to createMcpWorker.
 * 2026-07-28 requests get `modernServer`, whose `work` tool is a task (T1, T2) for a client
 * that declares the Tasks extension, run by a BenchTasks object (McpTaskObject) per task.
 */
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import {
  createMcpWorker,
  McpEventBus,
  McpSessionObject,
  McpTaskObject,
  runTask,
  sessionServerOptions,
  type ConfigVars,
  type ModernContext,
  type SessionContext,
} from '../../../src/lib.ts';

interface BenchEnv extends ConfigVars {
  readonly BENCH_SESSION: DurableObjectNamespace;
  readonly BENCH_BUS: DurableObjectNamespace;
  readonly BENCH_TASKS: DurableObjectNamespace;
}

const echo = (server: McpServer) =>
  server.registerTool('echo', { description: 'Returns its text.', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));

/**
 * 2026-07-28 requests (M1–M3, T1, T2): echo; `changed`, which tells every listen stream the
 * tool list changed; and `work`, a task with nothing to do (T1, T2).
 */
function modernServer({ notify }: ModernContext): McpServer {
  const server = new McpServer({ name: 'bench-ours', version: '0.0.0' });
  echo(server);
  server.registerTool('changed', { description: 'Announces a tool list change to listeners (M3).' }, async () => {
    notify.toolsChanged();
    return { content: [{ type: 'text', text: 'changed' }] };
  });
  server.registerTool('work', { description: 'A task that does nothing but complete (T1, T2).' }, async () =>
    runTask(async () => ({ content: [{ type: 'text', text: 'done' }] })),
  );
  return server;
}

/**
 * Instances of BenchSession this process constructed (W7). Locally the Worker and its objects
 * share one isolate, so the count is readable at INSTANCES_PATH: an object woken from
 * hibernation is constructed again, one that stayed resident is not.
 */
let constructed = 0;
let busConstructed = 0;
const INSTANCES_PATH = '/bench/instances';

export class BenchSession extends McpSessionObject<BenchEnv> {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(ctx, env);
    constructed++;
  }

  protected override createServer(_session: SessionContext): McpServer {
    // logging: the notify tool's message (W7); without the capability the SDK drops it silently.
    const server = new McpServer({ name: 'bench-ours', version: '0.0.0' }, sessionServerOptions({ capabilities: { logging: {} } }));
    echo(server);
    server.registerTool(
      'progress',
      {
        description: 'Sends n progress notifications as fast as possible, then returns "done <n>".',
        inputSchema: z.object({ n: z.number().int().min(0).max(1_000_000) }),
      },
      async ({ n }, ctx) => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        if (progressToken !== undefined) {
          for (let progress = 1; progress <= n; progress++) {
            await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: n } });
          }
        }
        return { content: [{ type: 'text', text: `done ${n}` }] };
      },
    );
    server.registerTool(
      'notify',
      {
        description: "Sends one log message carrying `text` on the session's standalone stream, then returns (W7).",
        inputSchema: z.object({ text: z.string() }),
      },
      async ({ text }) => {
        await server.sendLoggingMessage({ level: 'info', logger: 'bench', data: text });
        return { content: [{ type: 'text', text: 'sent' }] };
      },
    );
    return server;
  }
}

/** The event bus object, counted like the sessions (W7: does an idle listener keep it awake?). */
export class BenchBus extends McpEventBus {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(ctx, env);
    busConstructed++;
  }
}

/**
 * What the BenchTasks objects did, summed over all of them and readable at TASKS_PATH like the
 * instance counts (T1, T2: rows per task and per tasks/get, object requests per tasks/get):
 * SQLite rows written — each statement's `rowsWritten`, the figure Cloudflare bills, read from
 * its cursor as `exec` returns (a write statement has run to completion by then; alarms are not
 * SQL rows and are not counted) — in all and by statement (its first three words), statements
 * run, requests the objects received, and instances constructed.
 */
const taskCounts = {
  rowsWritten: 0,
  statements: 0,
  byStatement: {} as Record<string, { statements: number; rowsWritten: number }>,
  objectRequests: 0,
  constructed: 0,
};
const TASKS_PATH = '/bench/tasks';

/** Counts the rows every SQL statement of the object writes; applied before McpTaskObject's constructor reads its storage. */
function countingRows(ctx: DurableObjectState): DurableObjectState {
  const { sql } = ctx.storage;
  const exec = sql.exec.bind(sql);
  sql.exec = ((query: string, ...bindings: unknown[]) => {
    const cursor = exec(query, ...bindings);
    taskCounts.statements++;
    taskCounts.rowsWritten += cursor.rowsWritten;
    const kind = (taskCounts.byStatement[query.trim().split(/\s+/, 3).join(' ')] ??= { statements: 0, rowsWritten: 0 });
    kind.statements++;
    kind.rowsWritten += cursor.rowsWritten;
    return cursor;
  }) as SqlStorage['exec'];
  return ctx;
}

/** One object per task: the same tools as a 2026-07-28 request's server. */
export class BenchTasks extends McpTaskObject<BenchEnv> {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(countingRows(ctx), env);
    taskCounts.constructed++;
  }

  override fetch(request: Request): Promise<Response> {
    taskCounts.objectRequests++;
    return super.fetch(request);
  }

  protected override createServer(context: ModernContext): McpServer {
    return modernServer(context);
  }
}

const app = createMcpWorker<BenchEnv>({
  sessions: (env) => env.BENCH_SESSION,
  modern: modernServer,
  bus: (env) => env.BENCH_BUS,
  tasks: (env) => env.BENCH_TASKS,
});

export default {
  fetch: (request, env, ctx) => {
    if (request.url.endsWith(INSTANCES_PATH)) return Response.json({ constructed, busConstructed });
    if (request.url.endsWith(TASKS_PATH)) return Response.json(taskCounts);
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<BenchEnv>;
