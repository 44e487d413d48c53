/**
 * One Durable Object per task: it stores the task, runs its tool, and answers `tasks/get`,
 * `tasks/update` and `tasks/cancel` for it. Subclass it with the same tools as the modern
 * factory (`createServer`), as the session object is subclassed.
 *
 * Rules it keeps (each has a test in test/tasks/):
 * - stored before anyone hears of it: the create request is answered only once the task's row
 *   is written (a Durable Object's output gate holds the answer until then);
 * - never re-run: a new instance runs no round, so a task it finds `working` was being run by
 *   an instance that ended (restart, deploy, crash); it is `failed` with `task_interrupted`;
 * - kept until its TTL: a finished task's row outlives any number of restarts, and the alarm
 *   set at creation deletes everything at `createdAt + ttlMs`;
 * - resident while its tool runs: the round is handed to `waitUntil`, which from compatibility
 *   date 2026-10-01 keeps the object running with no request open;
 * - its timeline stored before it is heard (SEP-2694, draft): each status change, progress and
 *   log line of its tool and event the tool emits is an event with the next seq, written in the
 *   transaction of the change it describes, then delivered to its `tasks/stream` streams
 *   (task-streams.ts), its MCP Events push streams (task-sources.ts) and listen watches; a progress line is that one event row, its
 *   `statusMessage` read from it rather than written into the task again.
 * Why one object per task rather than a table per principal: a `tasks/get` wakes the one
 * object it reads (no principal's other tasks are loaded), rounds of different tasks never
 * share one object's thread, and purging is deleting the object's storage. Addressing by
 * principal *and* id (task-directory.ts) makes another principal's task an unknown one.
 *
 * What is not here: how a change is stored and then heard (the task row and its events in one
 * transaction, then its streams and watches told) is task-changes.ts's, which every change
 * decided here and every batch of the round's notifications goes through; the create request
 * it answers, and the bound on its call, are task-creation.ts's, so that the edge's directory
 * writes that message without importing this object.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { DurableObject } from 'cloudflare:workers';
import { log } from '../core/log.ts';
import { utf8Length } from '../core/utf8.ts';
import {
  afterAnswers,
  afterCancel,
  afterInterruption,
  afterRevocation,
  afterOutcome,
  afterStatusMessage,
  detailedTaskOnWire,
  expiresAt,
  isExpired,
  MAX_KEPT_ANSWERS_BYTES,
  newTask,
  taskOnWire,
  TASK_ERRORS,
  type RunOutcome,
  type TaskRecord,
} from '../core/task.ts';
import { TASK_ROUTES } from '../core/wire.ts';
import { createModernEndpoint, type ModernContext } from '../stateless/modern-endpoint.ts';
import { readConfig, type ConfigEnv, type ConfigVars, type TransportConfig } from '../config.ts';
import { metricTool } from '../core/metrics.ts';
import { Metrics } from '../metrics/metrics.ts';
import { NotificationTap } from './notification-tap.ts';
import { MAX_CALL_BYTES, type TaskCreation } from './task-creation.ts';
import { runRound, type RoundOptions } from './task-round.ts';
import { TaskChanges } from './task-changes.ts';
import { TaskStore, type TaskCall } from './task-store.ts';
import { TaskSources } from './task-sources.ts';
import type { TaskSourceRead } from '../core/task-source.ts';
import { TaskStreams, type StreamOpening, type TaskState } from './task-streams.ts';
import { TaskTimeline } from './task-timeline.ts';
import { TaskWatches } from './task-watches.ts';

const json = (value: unknown, status = 200) => Response.json(value, { status });
const UNKNOWN = () => new Response(null, { status: 404 });

export abstract class McpTaskObject<E extends ConfigEnv<E> = ConfigVars> extends DurableObject<E> {
  /** Builds the McpServer a round of the task runs in: register the same tools as the `modern` factory. */
  protected abstract createServer(context: ModernContext): McpServer | Promise<McpServer>;

  #store: TaskStore | undefined;
  readonly #config: TransportConfig;
  readonly #timeline: TaskTimeline;
  readonly #streams: TaskStreams;
  /** Its timeline as an MCP Events task event source: polls' reads and push streams' feeds. */
  readonly #sources: TaskSources;
  readonly #watches: TaskWatches;
  /** Every change of the task goes through it: stored with its events, then heard (task-changes.ts). */
  readonly #changes: TaskChanges;
  /** Cancels the round this instance is running, if any. */
  #round: AbortController | undefined;
  /** Counts to the MCP_METRICS dataset, when bound (metrics/metrics.ts). */
  readonly #metrics: Metrics;

  constructor(ctx: DurableObjectState, env: E) {
    super(ctx, env);
    this.#config = readConfig(env);
    this.#metrics = Metrics.of(env, (promise) => ctx.waitUntil(promise));
    this.#store = TaskStore.open(ctx.storage);
    this.#timeline = new TaskTimeline(ctx.storage.sql, { maxEvents: this.#config.taskMaxEvents });
    // Before anything else: a woken instance rebuilds its open streams from their sockets.
    this.#streams = new TaskStreams(ctx, this.#config.connectionBufferBytes, () => this.#state());
    this.#sources = new TaskSources(ctx, () => this.#state());
    this.#watches = new TaskWatches(ctx);
    this.#changes = new TaskChanges(ctx.storage, {
      store: () => this.#store,
      read: () => this.#read(),
      timeline: this.#timeline,
      streams: this.#streams,
      sources: this.#sources,
      watches: this.#watches,
      config: this.#config,
      reached: (task) => this.#count(task),
    });
    const task = this.#read();
    if (task?.status === 'working') {
      log({ msg: 'mcp.task.interrupted', task: task.taskId.slice(0, 8) });
      this.#changes.apply((current) => afterInterruption(current, Date.now()));
    }
  }

  /** Whether this instance is running a round of the task's tool (for tests and diagnostics). */
  get running(): boolean {
    return this.#round !== undefined;
  }

  override async fetch(request: Request): Promise<Response> {
    const route = new URL(request.url).pathname;
    if (route === TASK_ROUTES.watch) {
      const task = await this.#live();
      return task === undefined ? UNKNOWN() : this.#watches.open(task);
    }
    if (route === TASK_ROUTES.relay) return this.#streams.bind(request);
    if (route === TASK_ROUTES.sourceAttach) return (await this.#live()) === undefined ? UNKNOWN() : this.#sources.attach(request);
    const body = (await request.json()) as Record<string, unknown>;
    if (route === TASK_ROUTES.create) return this.#create(body as unknown as TaskCreation);
    const task = await this.#live();
    if (task === undefined) return UNKNOWN();
    switch (route) {
      case TASK_ROUTES.get:
        return json(detailedTaskOnWire(task));
      case TASK_ROUTES.stream:
        return this.#streams.open(body as unknown as StreamOpening) ?? UNKNOWN();
      case TASK_ROUTES.sourceRead: {
        const answer = this.#sources.read(body as unknown as TaskSourceRead);
        return answer === undefined ? UNKNOWN() : json(answer);
      }
      case TASK_ROUTES.update: {
        const responses = typeof body.inputResponses === 'object' && body.inputResponses !== null ? body.inputResponses : {};
        let rerun: RoundOptions['retry'];
        let tooLarge: number | undefined;
        this.#changes.apply((current) => {
          const decision = afterAnswers(current, responses as Record<string, unknown>, Date.now());
          rerun = decision.rerun;
          tooLarge = decision.tooLarge;
          return decision.task;
        });
        if (tooLarge !== undefined) return json({ bytes: tooLarge, limit: MAX_KEPT_ANSWERS_BYTES }, 413);
        if (rerun !== undefined) this.#startRoundSoon(rerun);
        return json({});
      }
      case TASK_ROUTES.cancel:
        // Stored before the tool hears of it: whatever the tool does next, the task stays cancelled.
        this.#changes.apply((current) => afterCancel(current, Date.now()));
        this.#round?.abort();
        return json({});
      case TASK_ROUTES.revoke:
        // As a cancel: stored first, then the tool is stopped; the task reads failed, `grant_revoked`.
        this.#changes.apply((current) => afterRevocation(current, Date.now()));
        this.#round?.abort();
        return json({});
      default:
        return UNKNOWN();
    }
  }

  /** `createdAt + ttlMs`: the task and everything about it is deleted. */
  override async alarm(): Promise<void> {
    const task = this.#store?.read();
    if (task !== undefined && !isExpired(task, Date.now())) return this.ctx.storage.setAlarm(expiresAt(task));
    await this.#purge();
  }

  /** A stream's acknowledgements (a listen watch only listens: its messages are ignored). */
  override webSocketMessage(socket: WebSocket, message: string | ArrayBuffer): void {
    this.#streams.message(socket, message);
  }

  override webSocketClose(socket: WebSocket): void {
    this.#streams.closed(socket);
  }

  override webSocketError(socket: WebSocket): void {
    this.#streams.closed(socket);
  }

  async #create({ taskId, call, ttlMs, pollIntervalMs }: TaskCreation): Promise<Response> {
    // 128 random bits: a second create under one id is a bug, never a retry to honour.
    if (this.#store !== undefined) return new Response(null, { status: 409 });
    // The call shares the task's row (2 MB on the platform, in bytes) with the result: it may take half.
    if (utf8Length(JSON.stringify(call)) > MAX_CALL_BYTES) return new Response(null, { status: 413 });
    const task = newTask(taskId, Date.now(), ttlMs, pollIntervalMs);
    await this.ctx.storage.setAlarm(expiresAt(task));
    this.#store = TaskStore.create(this.ctx.storage, task, call);
    this.#count(task);
    // Its first round runs the call as it came here, which is what was just stored.
    this.#startRoundSoon(undefined, call);
    return json(taskOnWire(task));
  }

  /** The task, unless it never existed here or its TTL has passed (then it is purged now, not at the alarm). */
  async #live(): Promise<TaskRecord | undefined> {
    const task = this.#read();
    if (task === undefined || !isExpired(task, Date.now())) return task;
    await this.#purge();
    return undefined;
  }

  async #purge(): Promise<void> {
    this.#round?.abort();
    this.#store = undefined;
    // Ended without their result: a client resuming is told the task is gone, not that it finished.
    this.#streams.closeAll();
    this.#sources.closeAll();
    this.#watches.closeAll('task purged');
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }

  /**
   * Starts a round once the request that asked for it is answered: a tool that works without
   * awaiting I/O (a loop of progress notifications) would otherwise hold the answer until it
   * is done. The round keeps the object resident (`waitUntil`) from then on.
   */
  #startRoundSoon(retry?: RoundOptions['retry'], call?: TaskCall): void {
    this.ctx.waitUntil(scheduler.wait(0).then(() => this.#startRound(retry, call)));
  }

  /** `call`: the stored call, where this instance has it at hand (it stored it); else it is read from the row. */
  #startRound(retry?: RoundOptions['retry'], call?: TaskCall): void {
    const store = this.#store;
    // Cancelled (or purged) before it started: nothing to run.
    if (store === undefined || store.read().status !== 'working') return;
    const controller = new AbortController();
    this.#round = controller;
    const { taskId, ttlMs } = store.read();
    const tap = new NotificationTap((batch) => this.#changes.append(batch));
    const handler = createModernEndpoint(async (context) => tap.attach(await this.createServer(context)), this.env, {
      // The body is the call the edge already accepted, with the answers the task gathered.
      maxBodyBytes: Number.MAX_SAFE_INTEGER,
      heartbeatMs: 0,
      // The SDK's default: the answer as JSON, whose message the round takes from the tap with
      // nothing to read back (task-round.ts). The tap takes the tool's notifications before the
      // transport sees them; one that reached it would make the answer SSE, read as before.
      // A question inside a task may be answered at any time in its life.
      requestStateTtlSeconds: Math.ceil(ttlMs / 1000),
    });
    const round = runRound({
      handler,
      tap,
      call: call ?? store.call(),
      ...(retry !== undefined && { retry }),
      signal: controller.signal,
    })
      .catch((error: unknown): RunOutcome => {
        // A cancel or a purge ends the round by design; anything else is a bug worth a line.
        if (!controller.signal.aborted) log({ msg: 'mcp.task.error', task: taskId.slice(0, 8), error: String(error) });
        return { kind: 'error', error: { code: -32603, message: 'Task failed: internal error' } };
      })
      .then((outcome) => {
        if (this.#round === controller) this.#round = undefined;
        try {
          this.#changes.apply((task) => afterOutcome(task, outcome, Date.now()));
        } catch (error) {
          // Most likely a result over SQLite's 2 MB value limit: the task fails, explicitly.
          log({ msg: 'mcp.task.error', task: taskId.slice(0, 8), error: `outcome not stored: ${String(error)}` });
          this.#changes.apply((task) => afterOutcome(task, { kind: 'error', error: TASK_ERRORS.notStored }, Date.now()));
        }
      });
    // Keeps the object resident while the tool runs, whether or not anyone is asking.
    this.ctx.waitUntil(round);
  }

  /**
   * The task as it stands: its row, and while it works, the line its tool last reported —
   * read from that event (one row written per line, not two).
   */
  #read(): TaskRecord | undefined {
    const task = this.#store?.read();
    if (task?.status !== 'working') return task;
    const reported = this.#timeline.statusLine();
    return reported === undefined ? task : afterStatusMessage(task, reported.line, reported.at);
  }

  #state(): TaskState | undefined {
    const task = this.#read();
    return task === undefined ? undefined : { task, timeline: this.#timeline };
  }

  /** The task's `task` point for the status it has just reached (created: `working`). */
  #count(task: TaskRecord): void {
    if (!this.#metrics.enabled || this.#store === undefined) return;
    const { message, principal } = this.#store.call();
    this.#metrics.write(
      {
        kind: 'task',
        // Registered by construction: a task is created only by runTask inside the handler the
        // edge's SDK found under this name (edge-tasks.ts: only for a tools/call), so the name is
        // one the server registered; metricTool still bounds it, as every tool blob is.
        tool: metricTool(message.params.name, () => true),
        status: task.status,
        interrupted: (task.error?.data as { reason?: unknown } | undefined)?.reason === TASK_ERRORS.interrupted.data.reason,
        ageMs: task.updatedAt - task.createdAt,
        // Ended: every event before its terminal one.
        events: task.finalSeq ?? 0,
      },
      principal.id,
    );
  }
}
