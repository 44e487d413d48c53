/**
 * Benchmark peer "ours": this project's transport with the two benchmark tools, written the
 * way a user of the library writes a server (README section 3): subclass McpSessionObject,
 * build an SDK v2 McpServer with sessionServerOptions(), hand the binding to createMcpWorker.
 * 2026-07-28 requests get `modernServer`, whose `work` tool is a task (T1, T2) for a client
 * that declares the Tasks extension, run by a BenchTasks object (McpTaskObject) per task, as are
 * `progress_task` (T3: progress events on `tasks/stream`) and `ask` (T4: a task that waits).
 * Every object class counts what Cloudflare bills it for (B1) through ../shared/billing.ts,
 * served at GET /bench/billing and off unless B1 turns it on.
 */
import { acceptedContent, inputRequired, McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { env as workerEnv } from 'cloudflare:workers';
import * as z from 'zod';
import {
  createMcpWorker,
  defineEventType,
  McpEventBus,
  McpEventLog,
  McpSessionObject,
  McpTaskObject,
  runTask,
  sessionServerOptions,
  type ConfigVars,
  type ModernContext,
  type SessionContext,
} from '../../../src/lib.ts';
import { countingNamespace, countRequest, instrument, instrumentLate, serveBilling } from '../shared/billing.ts';
import { registerEcho, registerProgress } from '../shared/sdk-tools.ts';

interface BenchEnv extends ConfigVars {
  readonly BENCH_SESSION: DurableObjectNamespace;
  readonly BENCH_BUS: DurableObjectNamespace;
  readonly BENCH_TASKS: DurableObjectNamespace;
  readonly BENCH_EVENTS: DurableObjectNamespace<BenchEventLog>;
}

/** E1, E2, E4: the demo's event type, as examples/demo declares it. */
const notes = defineEventType({
  name: 'demo.note',
  description: 'A note posted with post_note (E1, E2, E4).',
  inputSchema: z.object({ contains: z.string().optional() }),
  payloadSchema: z.object({ text: z.string(), n: z.number().int() }),
  delivery: ['poll', 'push'],
  matches: ({ contains }, { text }) => contains === undefined || text.includes(contains),
});

/**
 * The log namespace, its RPC calls counted at the caller while B1's counters are on (billing.ts),
 * decided at each call: the Worker reads its accessor once, before any workload turns counting on.
 */
const eventLogs = (env: BenchEnv) => ({
  idFromName: (name: string) => env.BENCH_EVENTS.idFromName(name),
  get: (id: DurableObjectId) => countingNamespace(env.BENCH_EVENTS, 'BenchEventLog').get(id),
});

const CONFIRM_SCHEMA = { type: 'object' as const, properties: { confirm: { type: 'boolean' as const } }, required: ['confirm'] };

/**
 * 2026-07-28 requests (M1–M3, T1–T4): echo; `changed`, which tells every listen stream the
 * tool list changed; `work`, a task with nothing to do (T1, T2); `progress_task`, a task that
 * sends n progress notifications as fast as it can (T3: the session's `progress`, W3, as a
 * task, each notification one event of its timeline); and `ask`, a task that asks a question
 * (input_required) and, once answered, reports one progress step and completes (T4).
 */
function modernServer({ notify }: ModernContext): McpServer {
  const server = new McpServer({ name: 'bench-ours', version: '0.0.0' });
  registerEcho(server);
  server.registerTool('changed', { description: 'Announces a tool list change to listeners (M3).' }, async () => {
    notify.toolsChanged();
    return { content: [{ type: 'text', text: 'changed' }] };
  });
  server.registerTool(
    'post_note',
    { description: 'Emits one demo.note, stored before this returns (E1, E2, E4).', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => {
      const { eventId } = await notes.emit(eventLogs(workerEnv as BenchEnv), { data: { text, n: text.length } });
      return { content: [{ type: 'text', text: eventId }] };
    },
  );
  server.registerTool('work', { description: 'A task that does nothing but complete (T1, T2).' }, async () =>
    runTask(async () => ({ content: [{ type: 'text', text: 'done' }] })),
  );
  server.registerTool(
    'progress_task',
    {
      description: 'A task that sends n progress notifications as fast as possible, then returns "done <n>" (T3).',
      inputSchema: z.object({ n: z.number().int().min(0).max(1_000_000) }),
    },
    async ({ n }, ctx) =>
      runTask(async () => {
        // Inside the task's object the round's request carries a progress token of its own.
        const progressToken = ctx.mcpReq._meta?.progressToken;
        if (progressToken !== undefined) {
          for (let progress = 1; progress <= n; progress++) {
            await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: n } });
          }
        }
        return { content: [{ type: 'text', text: `done ${n}` }] };
      }),
  );
  server.registerTool(
    'ask',
    { description: 'A task that asks to go on (input_required), then reports one step and completes (T4).' },
    (ctx: ServerContext) =>
      runTask(async () => {
        const answer = acceptedContent<{ confirm?: unknown }>(ctx.mcpReq.inputResponses, 'go_on');
        if (answer === undefined) {
          return inputRequired({ inputRequests: { go_on: inputRequired.elicit({ message: 'Go on?', requestedSchema: CONFIRM_SCHEMA }) } });
        }
        const progressToken = ctx.mcpReq._meta?.progressToken;
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 1 } });
        }
        return { content: [{ type: 'text', text: answer.confirm === true ? 'went on' : 'stopped' }] };
      }),
  );
  return server;
}

/**
 * Instances of BenchSession (W7), BenchBus (W7) and BenchTasks (T4) this process constructed.
 * Locally the Worker and its objects share one isolate, so the count is readable at
 * INSTANCES_PATH: an object woken from hibernation is constructed again, one that stayed
 * resident is not.
 */
let constructed = 0;
let busConstructed = 0;
let tasksConstructed = 0;
let logsConstructed = 0;
const INSTANCES_PATH = '/bench/instances';

export class BenchSession extends McpSessionObject<BenchEnv> {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(instrument(ctx, 'BenchSession'), env);
    constructed++;
  }

  override fetch(request: Request): Promise<Response> {
    countRequest('BenchSession', 'fetch');
    return super.fetch(request);
  }

  override alarm(): Promise<void> {
    countRequest('BenchSession', 'alarm');
    return super.alarm();
  }

  override webSocketMessage(socket: WebSocket, message: string | ArrayBuffer): void {
    countRequest('BenchSession', 'webSocketMessage');
    super.webSocketMessage(socket, message);
  }

  protected override createServer(_session: SessionContext): McpServer {
    // logging: the notify tool's message (W7); without the capability the SDK drops it silently.
    const server = new McpServer({ name: 'bench-ours', version: '0.0.0' }, sessionServerOptions({ capabilities: { logging: {} } }));
    registerEcho(server);
    registerProgress(server);
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
    super(instrument(ctx, 'BenchBus'), env);
    busConstructed++;
  }

  override fetch(request: Request): Promise<Response> {
    countRequest('BenchBus', 'fetch');
    return super.fetch(request);
  }

  override webSocketMessage(): void {
    countRequest('BenchBus', 'webSocketMessage');
    super.webSocketMessage();
  }
}

/** The event log object (E1, E2, E4: does an idle push stream keep it awake?), its storage counted from its first request with B1's counters on. */
export class BenchEventLog extends McpEventLog {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(instrument(ctx, 'BenchEventLog'), env);
    logsConstructed++;
  }

  override fetch(request: Request): Promise<Response> {
    instrumentLate(this.ctx, 'BenchEventLog');
    countRequest('BenchEventLog', 'fetch');
    return super.fetch(request);
  }

  override alarm(): Promise<void> {
    instrumentLate(this.ctx, 'BenchEventLog');
    countRequest('BenchEventLog', 'alarm');
    return super.alarm();
  }

  // RPC entry points: counted as requests at the caller (eventLogs), their storage here.
  override append(...args: Parameters<McpEventLog['append']>): ReturnType<McpEventLog['append']> {
    instrumentLate(this.ctx, 'BenchEventLog');
    return super.append(...args);
  }

  override read(...args: Parameters<McpEventLog['read']>): ReturnType<McpEventLog['read']> {
    instrumentLate(this.ctx, 'BenchEventLog');
    return super.read(...args);
  }
}

/** One object per task: the same tools as a 2026-07-28 request's server. */
export class BenchTasks extends McpTaskObject<BenchEnv> {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(instrument(ctx, 'BenchTasks'), env);
    tasksConstructed++;
  }

  override fetch(request: Request): Promise<Response> {
    countRequest('BenchTasks', 'fetch');
    return super.fetch(request);
  }

  override alarm(): Promise<void> {
    countRequest('BenchTasks', 'alarm');
    return super.alarm();
  }

  /** The relay's acknowledgements of a `tasks/stream` (T3, T4), billed 20 to a request. */
  override webSocketMessage(socket: WebSocket, message: string | ArrayBuffer): void {
    countRequest('BenchTasks', 'webSocketMessage');
    super.webSocketMessage(socket, message);
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
  events: { types: [notes], logs: eventLogs },
});

export default {
  fetch: (request, env, ctx) => {
    if (request.url.endsWith(INSTANCES_PATH)) return Response.json({ constructed, busConstructed, tasksConstructed, logsConstructed });
    return serveBilling(request) ?? app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<BenchEnv>;
