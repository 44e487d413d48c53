import type { Principal } from '../auth/principal.ts';

/** What a tool implementation may use of its session: handed to `createServer`. */
export interface SessionContext {
  readonly sessionId: string;
  /**
   * Who is asking: the principal of the request being served, with the scopes and claims of
   * its current token (read it when a call runs: a refreshed token updates it). Always the same
   * identity: a session belongs to the principal that opened it.
   */
  readonly principal: Principal;
  /** The session's own durable storage; deleted with the session. */
  readonly storage: DurableObjectStorage;
  /**
   * Registers work that outlives the call that started it (a call's own work needs nothing:
   * a running call keeps the object resident by itself, residency.ts). The object stays
   * resident until `task` settles, with or without a client connected: the runtime's
   * pending-I/O keep-alive, the default from compatibility date 2026-10-01. What such a task
   * keeps in memory still dies with the instance (a deploy, a crash).
   */
  readonly waitUntil: (task: Promise<unknown>) => void;
}
