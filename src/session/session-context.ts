/** What a tool implementation may use of its session: handed to `createServer`. */
export interface SessionContext {
  readonly sessionId: string;
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
