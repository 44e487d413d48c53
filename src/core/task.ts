/**
 * The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) as plain data: the stored
 * record of one task, its wire forms, and the decisions on it — what an outcome of a run, an
 * answer to `tasks/update`, a cancel, a lost instance or the passing of its TTL does to it.
 * No I/O: the task object (src/tasks/task-object.ts) stores what these functions return.
 */

import { randomBase64Url } from './base64url.ts';
import { utf8Length } from './utf8.ts';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What a request that needs the extension is refused with: -32021's `data`. */
export const TASKS_REQUIRED = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as const;

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

export const isTerminal = (status: TaskStatus): boolean => TERMINAL.has(status);

/** A JSON-RPC error as a `failed` task inlines it. */
export interface TaskError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** One task, as its object stores it. Times are epoch milliseconds. */
export interface TaskRecord {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  /** `input_required`: what the client is asked; keys it already answered are in `answers`. */
  readonly inputRequests: Readonly<Record<string, unknown>> | null;
  readonly answers: Readonly<Record<string, unknown>> | null;
  /** Every key the task has asked, in any round: "keys MUST be unique" within a task's life. */
  readonly askedKeys: readonly string[];
  /** `input_required`: the state the tool asked to get back with the answers (never sent to the client). */
  readonly requestState: string | null;
  readonly result: Readonly<Record<string, unknown>> | null;
  readonly error: TaskError | null;
  /**
   * Once the task has ended: the seq of its terminal status in its event timeline (SEP-2694),
   * one past every event stored before it. Null while it runs.
   */
  readonly finalSeq: number | null;
}

/** What one run of the tool ended with. */
export type RunOutcome =
  | { readonly kind: 'result'; readonly result: Readonly<Record<string, unknown>> }
  | { readonly kind: 'input_required'; readonly inputRequests: Readonly<Record<string, unknown>>; readonly requestState: string | null }
  | { readonly kind: 'error'; readonly error: TaskError };

/** The errors a task can end with that no tool chose. Part of the wire contract (`error.data.reason`). */
export const TASK_ERRORS = {
  /**
   * The instance running the task ended (a restart, a deploy, a crash) before the tool did.
   * The tool is never run again: with no record of how far it got, a re-run could repeat a side
   * effect, or go on from default state as if it had not run.
   */
  interrupted: {
    code: -32603,
    message: 'Task interrupted: the instance running it ended before the tool finished, and it is not re-run',
    data: { reason: 'task_interrupted' },
  },
  /** The run ended with no JSON-RPC answer (a bug, or the runtime cut it short). */
  noAnswer: { code: -32603, message: 'Task failed: the tool ended without an answer', data: { reason: 'no_answer' } },
  /** The tool's outcome could not be stored (a result over SQLite's 2 MB value limit). */
  notStored: {
    code: -32603,
    message: 'Task failed: its outcome could not be stored (a result over 2 MB?)',
    data: { reason: 'outcome_not_stored' },
  },
  /** A round asked a key an earlier round of the task had asked: its answer would be ambiguous. */
  reusedKey: {
    code: -32603,
    message: 'Task failed: the tool asked again under an input key it had used before in this task',
    data: { reason: 'input_key_reused' },
  },
  /** The grant of the principal that created it was revoked (principals/principal-control.ts); the tool was stopped. */
  revoked: {
    code: -32603,
    message: 'Task failed: the grant of the principal that created it was revoked',
    data: { reason: 'grant_revoked' },
  },
  /** An MRTR round with nothing to answer (only `requestState`) would leave the task waiting forever. */
  nothingAsked: {
    code: -32603,
    message: 'Task failed: the tool asked for input without inputRequests',
    data: { reason: 'no_input_requests' },
  },
} as const satisfies Record<string, TaskError>;

export function newTask(taskId: string, now: number, ttlMs: number, pollIntervalMs: number): TaskRecord {
  return {
    taskId,
    status: 'working',
    statusMessage: null,
    createdAt: now,
    updatedAt: now,
    ttlMs,
    pollIntervalMs,
    inputRequests: null,
    answers: null,
    askedKeys: [],
    requestState: null,
    result: null,
    error: null,
    finalSeq: null,
  };
}

/** Purged at `createdAt + ttlMs`: "ttlMs counts from createdAt". */
export const expiresAt = (task: TaskRecord): number => task.createdAt + task.ttlMs;

export const isExpired = (task: TaskRecord, now: number): boolean => now >= expiresAt(task);

/**
 * A run's outcome lands only on a task still waiting for it: a cancelled task stays cancelled.
 * A failed task's status message says why.
 */
export function afterOutcome(task: TaskRecord, outcome: RunOutcome, now: number): TaskRecord {
  if (task.status !== 'working') return task;
  const base = { ...task, updatedAt: now, inputRequests: null, answers: null, requestState: null };
  switch (outcome.kind) {
    case 'result':
      return { ...base, status: 'completed', result: outcome.result };
    case 'error':
      return { ...base, status: 'failed', error: outcome.error, statusMessage: outcome.error.message };
    case 'input_required': {
      const keys = Object.keys(outcome.inputRequests);
      if (keys.some((key) => task.askedKeys.includes(key))) {
        return { ...base, status: 'failed', error: TASK_ERRORS.reusedKey, statusMessage: TASK_ERRORS.reusedKey.message };
      }
      const { inputRequests, requestState } = outcome;
      return { ...base, status: 'input_required', inputRequests, answers: {}, askedKeys: [...task.askedKeys, ...keys], requestState };
    }
  }
}

/** Longer status lines are cut: a status line is news, not a payload. */
export const MAX_STATUS_MESSAGE_CHARS = 1024;

/** A progress or status line from the running tool, kept while it is still its task's news. */
export function afterStatusMessage(task: TaskRecord, line: string, now: number): TaskRecord {
  const statusMessage = line.length > MAX_STATUS_MESSAGE_CHARS ? `${line.slice(0, MAX_STATUS_MESSAGE_CHARS - 1)}…` : line;
  if (task.status !== 'working' || task.statusMessage === statusMessage) return task;
  return { ...task, statusMessage, updatedAt: now };
}

/**
 * The most UTF-8 bytes of JSON a task keeps of answers while it waits for the rest: they share
 * the task's row (2 MB on the platform) with its call (at most 1 MiB) and the tool's questions.
 * The body bound (4 MiB a request, each key answered once) bounds what is sent, not this: past
 * the row's size the write would fail, untyped, where local SQLite would take it.
 */
export const MAX_KEPT_ANSWERS_BYTES = 512 * 1024;

/**
 * `tasks/update`: answers to keys the task asked and has not had answered are kept; others
 * are ignored ("Unknown or already-answered keys SHOULD be ignored"). Once every key is
 * answered the task is working again, and `rerun` carries the answers to the tool's next round
 * (nothing is kept). Answers that would be kept over MAX_KEPT_ANSWERS_BYTES are refused whole
 * (`tooLarge`, their size), the task unchanged.
 */
export function afterAnswers(
  task: TaskRecord,
  responses: Readonly<Record<string, unknown>>,
  now: number,
): {
  readonly task: TaskRecord;
  readonly rerun?: { readonly inputResponses: Record<string, unknown>; readonly requestState: string | null };
  readonly tooLarge?: number;
} {
  if (task.status !== 'input_required' || task.inputRequests === null) return { task };
  const answers: Record<string, unknown> = { ...task.answers };
  let changed = false;
  for (const [key, response] of Object.entries(responses)) {
    if (Object.hasOwn(task.inputRequests, key) && !Object.hasOwn(answers, key)) {
      answers[key] = response;
      changed = true;
    }
  }
  if (!changed) return { task };
  const complete = Object.keys(task.inputRequests).every((key) => Object.hasOwn(answers, key));
  if (!complete) {
    const bytes = utf8Length(JSON.stringify(answers)); // as the task's row stores them (task-store.ts)
    return bytes > MAX_KEPT_ANSWERS_BYTES ? { task, tooLarge: bytes } : { task: { ...task, answers, updatedAt: now } };
  }
  const rerun = { inputResponses: answers, requestState: task.requestState };
  return { task: { ...task, status: 'working', inputRequests: null, answers: null, requestState: null, updatedAt: now }, rerun };
}

/** `tasks/cancel`: a live task is cancelled at once (its tool is told, cooperatively); a finished one is left as it is. */
export function afterCancel(task: TaskRecord, now: number): TaskRecord {
  if (isTerminal(task.status)) return task;
  return { ...task, status: 'cancelled', inputRequests: null, answers: null, requestState: null, updatedAt: now };
}

/** The principal's grant was revoked: a task not yet ended fails, saying so, whatever it was waiting for. */
export function afterRevocation(task: TaskRecord, now: number): TaskRecord {
  if (isTerminal(task.status)) return task;
  return afterOutcome({ ...task, status: 'working' }, { kind: 'error', error: TASK_ERRORS.revoked }, now);
}

/** A new instance found the task working: whatever ran it is gone. */
export function afterInterruption(task: TaskRecord, now: number): TaskRecord {
  if (task.status !== 'working') return task;
  return afterOutcome(task, { kind: 'error', error: TASK_ERRORS.interrupted }, now);
}

/** `Task`: what `tools/call` answers (with `resultType: "task"`) and every task method starts from. */
export function taskOnWire(task: TaskRecord): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== null && { statusMessage: task.statusMessage }),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.updatedAt).toISOString(),
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
}

/**
 * `DetailedTask`: what `tasks/get` and `notifications/tasks` carry. The questions still open
 * on `input_required` (answered keys are not asked again), the result on `completed`, the
 * error on `failed`. Never `requestState`: "servers MUST NOT include requestState" on tasks.
 */
export function detailedTaskOnWire(task: TaskRecord): Record<string, unknown> {
  const wire = taskOnWire(task);
  if (task.status === 'input_required' && task.inputRequests !== null) {
    const open = Object.entries(task.inputRequests).filter(([key]) => !Object.hasOwn(task.answers ?? {}, key));
    return { ...wire, inputRequests: Object.fromEntries(open) };
  }
  if (task.status === 'completed' && task.result !== null) return { ...wire, result: task.result };
  if (task.status === 'failed' && task.error !== null) return { ...wire, error: task.error };
  return wire;
}

/**
 * Whether a request declared the extension: "Clients MUST declare support ... on every
 * request" in `_meta["io.modelcontextprotocol/clientCapabilities"].extensions`.
 */
export function declaresTasks(params: unknown): boolean {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  return capabilitiesDeclareTasks(meta?.['io.modelcontextprotocol/clientCapabilities']);
}

/** The same, given the client capabilities object itself. */
export function capabilitiesDeclareTasks(capabilities: unknown): boolean {
  const declared = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[TASKS_EXTENSION];
  return typeof declared === 'object' && declared !== null;
}

/**
 * Task ids: 128 random bits, base64url (22 characters): "task IDs MUST be generated with
 * enough entropy that they cannot be guessed". Only a well-formed id wakes an object.
 */
export function newTaskId(): string {
  return randomBase64Url(16);
}

// 128 bits are 21 full base64 characters plus 2 bits: the last character's low 4 bits are zero.
const TASK_ID = /^[A-Za-z0-9_-]{21}[AQgw]$/;

export const isWellFormedTaskId = (value: string): boolean => TASK_ID.test(value);
