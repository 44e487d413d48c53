/**
 * The session's lifecycle in its object's instance, apart from the HTTP the object speaks
 * (session-object.ts): the live session started for a new session or revived for a stored
 * one, and its end — by its client (DELETE), from outside (an operator, a revoked grant), or
 * by idle expiry (the alarm).
 *
 * - The live session (the McpServer with its running handlers, and its transport) is memory
 *   only, and dies with the instance. This class holds it: `open` hands out the one revival
 *   every request of a fresh instance waits for, and ending forgets it first, so a handler
 *   still running finds no session to write to.
 * - A fresh instance revives the session before serving anything (session-revival.ts: its
 *   orphaned calls interrupted, its handshake replayed).
 * - Ending drops everything the session stored, at once (`destroy`); the alarm's clocks are
 *   session-clock.ts, answering the open calls of a session ended from outside open-calls.ts.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.ts';
import { httpErrors } from '../core/errors.ts';
import { errorAnswer } from '../core/jsonrpc.ts';
import { log } from '../core/log.ts';
import { JsonRpcCode } from '../core/wire.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { storedVersion } from '../storage/migrator.ts';
import { logToolErrors } from '../tools/tool-errors.ts';
import { DurableTransport } from './durable-transport.ts';
import type { LiveSession, MessageRouter } from './message-router.ts';
import { answerOpenCalls } from './open-calls.ts';
import type { PendingAnswers } from './pending-answers.ts';
import { SESSION_SCHEMA, upgradeSession } from './schema.ts';
import { isExpired, nextAlarm, type SessionClock } from './session-clock.ts';
import type { SessionContext } from './session-context.ts';
import { interruptOrphanedStreams, replayHandshake } from './session-revival.ts';
import type { SessionRecord, SessionStore } from './session-store.ts';
import type { SessionStreams } from './session-streams.ts';

/** Why a session is ended from outside (OBJECT_ROUTES.end): `data.reason` of its calls' error answers. */
export type EndReason = 'grant_revoked' | 'ended_by_operator';

/** What the lifecycle works with: the object's state and its parts (session-object.ts builds them). */
export interface LifecycleParts {
  readonly ctx: DurableObjectState;
  readonly sessionTtlMs: number;
  readonly sessions: SessionStore;
  readonly streams: SessionStreams;
  readonly router: MessageRouter;
  readonly clock: SessionClock;
  readonly pending: PendingAnswers;
  readonly metrics: Metrics;
  /** The object's `createServer`. */
  readonly createServer: (context: SessionContext) => McpServer;
  /** Who the request being served is from (SessionContext.principal). */
  readonly principal: () => Principal;
}

export class SessionLifecycle {
  readonly #ctx: DurableObjectState;
  readonly #sessionTtlMs: number;
  readonly #sessions: SessionStore;
  readonly #streams: SessionStreams;
  readonly #router: MessageRouter;
  readonly #clock: SessionClock;
  readonly #pending: PendingAnswers;
  readonly #metrics: Metrics;
  readonly #createServer: (context: SessionContext) => McpServer;
  readonly #principal: () => Principal;
  #live: Promise<LiveSession> | undefined;
  /** The live session once it is served here (its epoch goes on every response). */
  #current: LiveSession | undefined;

  constructor(parts: LifecycleParts) {
    this.#ctx = parts.ctx;
    this.#sessionTtlMs = parts.sessionTtlMs;
    this.#sessions = parts.sessions;
    this.#streams = parts.streams;
    this.#router = parts.router;
    this.#clock = parts.clock;
    this.#pending = parts.pending;
    this.#metrics = parts.metrics;
    this.#createServer = parts.createServer;
    this.#principal = parts.principal;
  }

  /** The live session once it is served here, if it is. */
  get current(): LiveSession | undefined {
    return this.#current;
  }

  // ---- Start and revival -----------------------------------------------------------------

  async startServer(sessionId: string): Promise<LiveSession> {
    const principal = this.#principal;
    // A tool that throws is logged with its stack (tools/tool-errors.ts); the client hears what the SDK says.
    const server = logToolErrors(
      this.#createServer({
        sessionId,
        get principal() {
          return principal();
        },
        storage: this.#ctx.storage,
        waitUntil: (task) => this.#ctx.waitUntil(task.catch(() => undefined)),
      }),
    );
    const live: LiveSession = {
      server,
      transport: new DurableTransport(sessionId, (message, related, origin) => {
        if (this.#pending.take(message)) return;
        if (this.#live === undefined) return; // the session was deleted under a running handler
        this.#router.route(live, message, related, origin);
      }),
      record: undefined as unknown as SessionRecord, // set once the session is created or loaded
    };
    // The SDK reports what it cannot hand to anyone (say, a response it failed to send) only
    // here; left unset, those failures vanish.
    server.server.onerror = (error) => log({ msg: 'mcp.session.sdk_error', error: String(error) });
    await server.connect(live.transport);
    return live;
  }

  /** A new session's live session, started here (its handshake not yet accepted): served from now on. */
  adopt(live: LiveSession): void {
    this.#live = Promise.resolve(live);
    this.#current = live;
  }

  /** Forgets the live session: its handshake was refused, and nothing was stored. */
  forget(): void {
    this.#live = undefined;
    this.#current = undefined;
  }

  /** The live session, reviving it in this instance if needed; 404 if there is none. */
  open(sessionId: string): Promise<LiveSession> {
    this.#live ??= this.#revive(sessionId).catch((error: unknown) => {
      // What a failed revival cached (streams it finished, seqs it used) is forgotten and the
      // next request revives anew: its interruptions' transaction rolled back, or committed
      // whole (then the next revival finds no orphans) if it was the server's start that failed.
      this.#live = undefined;
      this.#streams.forget();
      throw error;
    });
    return this.#live;
  }

  /** `live`, as `opened` (open) gave it, serves the request: 404 if the session was deleted while reviving. */
  serve(opened: Promise<LiveSession>, live: LiveSession): void {
    if (this.#live !== opened) throw httpErrors.sessionNotFound(); // deleted while reviving
    this.#current = live;
  }

  async #revive(sessionId: string): Promise<LiveSession> {
    const stored = this.load();
    if (stored === undefined) throw httpErrors.sessionNotFound();
    this.#clock.recorded(stored.lastActiveAt);
    this.#clock.ensureArmed(stored.lastActiveAt + this.#sessionTtlMs);
    const { record, interrupted } = interruptOrphanedStreams(this.#ctx.storage, this.#sessions, this.#streams, stored);
    // Their tools are not stored (only their ids): the points say how many, not which.
    for (let i = 0; i < interrupted; i++) {
      this.#metrics.write({ kind: 'call', tool: '', outcome: 'interrupted', durationMs: 0, events: 0 }, this.#principal().id);
    }
    const live = await this.startServer(sessionId);
    live.record = record;
    await replayHandshake(live.transport, this.#pending, record);
    return live;
  }

  /**
   * The stored session, brought to the current schema first if an older version stored it
   * (the alarm can be the first thing a new deploy runs for a session); undefined, writing
   * nothing, if there is none.
   */
  load(): SessionRecord | undefined {
    const version = storedVersion(this.#ctx.storage.sql, SESSION_SCHEMA);
    if (version === 0) return undefined;
    if (version < SESSION_SCHEMA.version) upgradeSession(this.#ctx.storage);
    return this.#sessions.load();
  }

  // ---- The end ---------------------------------------------------------------------------

  /**
   * Ends the session from outside (principals/principal-control.ts): an operator, or the
   * revocation of its principal's grant. Every call still running is answered first, on its
   * own stream, with an error that says why — so a client reading its stream live gets the
   * explicit end rather than a stream that stops (one behind, or resuming later, finds the
   * session gone) — and then the session is gone: 404 to every request after, as for one
   * that never existed. False, doing nothing, when no session is stored here.
   */
  async end({ reason }: { reason: EndReason }): Promise<boolean> {
    if (this.load() === undefined) return false;
    const live = await this.#live?.catch(() => undefined);
    const message =
      reason === 'grant_revoked'
        ? 'Request ended: the session was ended because the grant it was authorized by was revoked'
        : 'Request ended: the session was ended by the server operator';
    // Each answer is stored in a transaction of its own, then delivered: inside one around them
    // all, a client would get answers that a failure of a later one rolled back. Should one
    // fail, the end fails (500), what was answered stays answered, and ending again goes on.
    answerOpenCalls(this.#streams, (id) => errorAnswer(id, JsonRpcCode.ServerError, message, { reason }));
    await this.destroy(live);
    this.#metrics.write({ kind: 'session', outcome: 'deleted' }, this.#principal().id);
    return true;
  }

  /** Ends the session: connections, handlers, and every byte it stored, in one step. */
  async destroy(live: LiveSession | undefined): Promise<void> {
    // Forget the instance first: anything its handlers still emit finds no session to write to.
    this.#live = undefined;
    this.#current = undefined;
    this.#router.forget();
    this.#streams.closeAll();
    await live?.server.close().catch(() => undefined);
    await this.#clock.disarm();
    await this.#ctx.storage.deleteAll();
  }

  /**
   * Idle expiry, the object's alarm (session-clock.ts). Its work is bounded, whatever the
   * session's length: the session row and its newest stream are read, and an expired session
   * is dropped whole.
   */
  async alarm(): Promise<void> {
    this.#clock.fired();
    const record = this.load();
    if (record === undefined) return;
    const state = {
      now: Date.now(),
      lastActiveAt: record.lastActiveAt,
      busy: (this.#live !== undefined && this.#streams.running) || this.#streams.hasConnections,
      sessionTtlMs: this.#sessionTtlMs,
    };
    if (isExpired(state)) {
      const live = await this.#live?.catch(() => undefined);
      // Nothing but the revival can have run meanwhile; a request that arrived during it
      // touched the session, and then it is not idle any more.
      if ((this.#sessions.load()?.lastActiveAt ?? 0) === record.lastActiveAt) {
        log({ msg: 'mcp.session.expired', idle_ms: state.now - record.lastActiveAt });
        await this.destroy(live);
        // The alarm knows no principal (a session stores none): the point's index is empty.
        this.#metrics.write({ kind: 'session', outcome: 'expired' }, undefined);
        return;
      }
    }
    this.#clock.arm(nextAlarm(state));
  }
}
