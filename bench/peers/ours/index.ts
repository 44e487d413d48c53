/**
 * Benchmark peer "ours": this project's transport with the two benchmark tools, written the
 * way a user of the library writes a server (README section 3): subclass McpSessionObject,
 * build an SDK v2 McpServer with sessionServerOptions(), hand the binding to createMcpWorker.
 * 2026-07-28 requests get `modernServer`, whose `work` tool is a task (T1, T2) for a client
 * that declares the Tasks extension, run by a BenchTasks object (McpTaskObject) per task, as are
 * `progress_task` (T3: progress events on `tasks/stream`) and `ask` (T4: a task that waits).
 * `demo.note` is also offered by webhook (E3): `events/subscribe` makes one BenchWebhooks
 * (McpWebhookSubscription) per subscription, bound as MCP_WEBHOOKS; only an authenticated
 * principal subscribes, so E3 runs against the helper instance `ours-webhooks` (AUTH=jwt,
 * bench/peers/index.mjs), the same Worker with other variables.
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
  McpWebhookSubscription,
  runTask,
  sessionServerOptions,
  type ConfigVars,
  type ModernContext,
  type SessionContext,
} from '../../../src/lib.ts';
import { countingNamespace, countRequest, instrument, instrumentLate, serveBilling } from '../shared/billing.ts';
import { registerModernTools } from '../shared/modern-tools.ts';
import { registerSessionTools, SESSION_CAPABILITIES } from '../shared/sdk-tools.ts';

interface BenchEnv extends ConfigVars {
  /** `on`: count the objects alive in the isolate (H1's helper `ours-held`; see `track`). */
  readonly BENCH_LIVE_OBJECTS?: string;
  readonly BENCH_SESSION: DurableObjectNamespace;
  readonly BENCH_BUS: DurableObjectNamespace;
  readonly BENCH_TASKS: DurableObjectNamespace;
  readonly BENCH_EVENTS: DurableObjectNamespace<BenchEventLog>;
  readonly MCP_WEBHOOKS: DurableObjectNamespace<BenchWebhooks>;
}

/** E1, E2, E3, E4: the demo's event type, as examples/demo declares it (webhook: E3). */
const notes = defineEventType({
  name: 'demo.note',
  description: 'A note posted with post_note (E1, E2, E3, E4).',
  inputSchema: z.object({ contains: z.string().optional() }),
  payloadSchema: z.object({ text: z.string(), n: z.number().int() }),
  delivery: ['poll', 'push', 'webhook'],
  matches: ({ contains }, { text }) => contains === undefined || text.includes(contains),
});

/**
 * The log namespace, its RPC calls counted at the caller while B1's counters are on (billing.ts),
 * decided at each call: the Worker reads its accessor once, before any workload turns counting on.
 * The accessor reads `env.BENCH_EVENTS` itself: the Worker names a webhook subscription's log
 * binding by the last env key its accessor read (edge/edge-state.ts), and the subscription's
 * object reaches its log by that key.
 */
const eventLogs = (env: BenchEnv) => {
  const logs = env.BENCH_EVENTS;
  return {
    idFromName: (name: string) => logs.idFromName(name),
    get: (id: DurableObjectId) => countingNamespace(logs, 'BenchEventLog').get(id),
  };
};

const CONFIRM_SCHEMA = { type: 'object' as const, properties: { confirm: { type: 'boolean' as const } }, required: ['confirm'] };

/**
 * 2026-07-28 requests (M1–M3, T1–T4, E1–E4), the benchmark's modern tool list
 * (../shared/modern-tools.ts), all served: echo and progress; `changed`, which tells every listen stream the
 * tool list changed; `post_note`, which emits one `demo.note`; `work`, a task with nothing to do (T1, T2); `progress_task`, a task that
 * sends n progress notifications as fast as it can (T3: the session's `progress`, W3, as a
 * task, each notification one event of its timeline); and `ask`, a task that asks a question
 * (input_required) and, once answered, reports one progress step and completes (T4).
 */
function modernServer({ notify }: ModernContext): McpServer {
  const server = new McpServer({ name: 'bench-ours', version: '0.0.0' });
  registerModernTools(server, {
    changed: async () => {
      notify.toolsChanged();
      return { content: [{ type: 'text', text: 'changed' }] };
    },
    post_note: async ({ text }) => {
      const { eventId } = await notes.emit(eventLogs(workerEnv as BenchEnv), { data: { text, n: text.length } });
      return { content: [{ type: 'text', text: eventId }] };
    },
    work: async () => runTask(async () => ({ content: [{ type: 'text', text: 'done' }] })),
    progress_task: async ({ n }, ctx) =>
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
    ask: (ctx: ServerContext) =>
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
  });
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

/**
 * H1 (`BENCH_LIVE_OBJECTS=on`, its helper only): a weak reference to each object constructed, by
 * class, so that GET /bench/instances also says how many are still alive in the isolate — an
 * evicted object's instance is unreachable, and gone at the next full collection (H1 forces
 * one through the inspector before it reads). Off, nothing is kept: the timed peer pays nothing.
 */
type Tracked = 'sessions' | 'bus' | 'tasks' | 'logs';
const liveRefs: Record<Tracked, WeakRef<object>[]> = { sessions: [], bus: [], tasks: [], logs: [] };
let tracking = false;

/** Decided by the first request or object to run in the isolate (the environment is the same for both). */
function track(kind: Tracked, instance: object, env: BenchEnv): void {
  tracking ||= env.BENCH_LIVE_OBJECTS === 'on';
  if (tracking) liveRefs[kind].push(new WeakRef(instance));
}

/** The tracked instances not yet collected, by class (dropping the references to those that were). */
function liveCounts(): Record<Tracked, number> | undefined {
  if (!tracking) return undefined;
  const counts = { sessions: 0, bus: 0, tasks: 0, logs: 0 };
  for (const kind of Object.keys(counts) as Tracked[]) {
    liveRefs[kind] = liveRefs[kind].filter((ref) => ref.deref() !== undefined);
    counts[kind] = liveRefs[kind].length;
  }
  return counts;
}

export class BenchSession extends McpSessionObject<BenchEnv> {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(instrument(ctx, 'BenchSession'), env);
    constructed++;
    track('sessions', this, env);
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
    const server = new McpServer({ name: 'bench-ours', version: '0.0.0' }, sessionServerOptions({ capabilities: SESSION_CAPABILITIES }));
    registerSessionTools(server);
    return server;
  }
}

/** The event bus object, counted like the sessions (W7: does an idle listener keep it awake?). */
export class BenchBus extends McpEventBus {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(instrument(ctx, 'BenchBus'), env);
    busConstructed++;
    track('bus', this, env);
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
    track('logs', this, env);
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

  // Called by webhook subscriptions' objects only (E3), through their env: counted here.
  override addSubscriber(...args: Parameters<McpEventLog['addSubscriber']>): ReturnType<McpEventLog['addSubscriber']> {
    instrumentLate(this.ctx, 'BenchEventLog');
    countRequest('BenchEventLog', 'rpc');
    return super.addSubscriber(...args);
  }

  override removeSubscriber(...args: Parameters<McpEventLog['removeSubscriber']>): ReturnType<McpEventLog['removeSubscriber']> {
    instrumentLate(this.ctx, 'BenchEventLog');
    countRequest('BenchEventLog', 'rpc');
    return super.removeSubscriber(...args);
  }
}

/**
 * One object per webhook subscription (E3), delivering `demo.note`. Its storage is counted from
 * its first request with B1's counters on, as the log's is (a subscription is made before E3
 * turns counting on). Its callers are the Worker (create, refresh, unsubscribe) and its log
 * (poke), which reaches it through `env.MCP_WEBHOOKS` unwrapped: each RPC method is counted here,
 * one billed request per call (the class never calls its own public methods).
 */
export class BenchWebhooks extends McpWebhookSubscription<BenchEnv> {
  readonly types = [notes];

  #counted(): void {
    instrumentLate(this.ctx, 'BenchWebhooks');
    countRequest('BenchWebhooks', 'rpc');
  }

  override create(...args: Parameters<McpWebhookSubscription['create']>): ReturnType<McpWebhookSubscription['create']> {
    this.#counted();
    return super.create(...args);
  }

  override refresh(...args: Parameters<McpWebhookSubscription['refresh']>): ReturnType<McpWebhookSubscription['refresh']> {
    this.#counted();
    return super.refresh(...args);
  }

  override poke(...args: Parameters<McpWebhookSubscription['poke']>): ReturnType<McpWebhookSubscription['poke']> {
    this.#counted();
    return super.poke(...args);
  }

  override unsubscribe(): ReturnType<McpWebhookSubscription['unsubscribe']> {
    this.#counted();
    return super.unsubscribe();
  }

  override alarm(): Promise<void> {
    instrumentLate(this.ctx, 'BenchWebhooks');
    countRequest('BenchWebhooks', 'alarm');
    return super.alarm();
  }
}

/** One object per task: the same tools as a 2026-07-28 request's server. */
export class BenchTasks extends McpTaskObject<BenchEnv> {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(instrument(ctx, 'BenchTasks'), env);
    tasksConstructed++;
    track('tasks', this, env);
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
  events: { types: [notes], logs: eventLogs, webhooks: (env) => env.MCP_WEBHOOKS },
});

export default {
  fetch: (request, env, ctx) => {
    tracking ||= env.BENCH_LIVE_OBJECTS === 'on';
    if (request.url.endsWith(INSTANCES_PATH))
      return Response.json({ constructed, busConstructed, tasksConstructed, logsConstructed, live: liveCounts() });
    return serveBilling(request) ?? app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<BenchEnv>;
