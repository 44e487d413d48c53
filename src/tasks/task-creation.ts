/**
 * The create request: what the Worker sends a task's object to create a task (written by
 * task-directory.ts at the edge, read by task-object.ts), and the bound on the call it carries.
 *
 * A module of its own, below both, because both need it: the directory used to import it from
 * the object, and the object imports the round (task-round.ts), which imports runTask's scope
 * (run-task.ts), which names the directory, so the four made an import circle. Now the edge's
 * directory imports only this message, and the object stays above it.
 */
import type { TaskCall } from './task-store.ts';

/** What the Worker sends to create a task (task-directory.ts). */
export interface TaskCreation {
  readonly taskId: string;
  readonly call: TaskCall;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
}

/** The largest call, in UTF-8 bytes of its JSON as stored, that becomes a task. */
export const MAX_CALL_BYTES = 1024 * 1024;
