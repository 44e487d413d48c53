/**
 * One task's storage: a single row in its own object's SQLite, written in one statement per
 * change. The row holds the task (core/task.ts `TaskRecord`) and the `tools/call` that
 * created it, which each later round of the tool (after `tasks/update`) is run from.
 *
 * The schema is created with the task, never for an unknown id: an object addressed with an
 * id nobody created (or another principal's) writes nothing and answers "unknown".
 */
import type { Principal } from '../auth/principal.ts';
import type { TaskError, TaskRecord, TaskStatus } from '../core/task.ts';
import { createSchema, storedVersion, upgradeSchema, type Schema } from '../storage/migrator.ts';

/**
 * One table: creating it is two rows written, the task's INSERT a third (storage/migrator.ts).
 * Its events between creation and end are in task_events (task-timeline.ts), made with the first.
 */
const TASK_SCHEMA: Schema = {
  version: 3,
  record: { table: 'task', column: 'schema_version' },
  create: [
    `CREATE TABLE task (
         singleton         INTEGER PRIMARY KEY CHECK (singleton = 1),
         schema_version    INTEGER NOT NULL DEFAULT 3,
         task_id           TEXT    NOT NULL,
         status            TEXT    NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
         status_message    TEXT,
         created_at        INTEGER NOT NULL,
         updated_at        INTEGER NOT NULL,
         ttl_ms            INTEGER NOT NULL,
         poll_interval_ms  INTEGER NOT NULL,
         -- JSON. The call is the client's tools/call request and the headers it came with.
         call              TEXT    NOT NULL,
         input_requests    TEXT,
         answers           TEXT,
         asked_keys        TEXT    NOT NULL,
         request_state     TEXT,
         result            TEXT,
         error             TEXT,
         -- The terminal status's seq in the task's event timeline, once it ended.
         final_seq         INTEGER
       )`,
  ],
  upgrades: {
    // Version 1 kept its version in a schema_migrations table.
    1: [`ALTER TABLE task ADD COLUMN schema_version INTEGER NOT NULL DEFAULT 2`, `DROP TABLE schema_migrations`],
    // Version 2 had no event timeline: a task of it that ended has its terminal event at seq 1.
    2: [`ALTER TABLE task ADD COLUMN final_seq INTEGER`],
  },
};

/**
 * The `tools/call` a task runs: the client's JSON-RPC request, the headers the tool may read
 * (`Mcp-*`), and who asked (never the token: a task's rounds see the principal and its
 * scopes and claims as they were when the task was created).
 */
export interface TaskCall {
  readonly message: {
    readonly jsonrpc: '2.0';
    readonly id: string | number;
    readonly method: 'tools/call';
    readonly params: Record<string, unknown>;
  };
  readonly headers: Readonly<Record<string, string>>;
  readonly principal: Principal;
}

type Row = {
  task_id: string;
  status: string;
  status_message: string | null;
  created_at: number;
  updated_at: number;
  ttl_ms: number;
  poll_interval_ms: number;
  call: string;
  input_requests: string | null;
  answers: string | null;
  asked_keys: string;
  request_state: string | null;
  result: string | null;
  error: string | null;
  final_seq: number | null;
};

const json = (value: unknown): string | null => (value === null ? null : JSON.stringify(value));

/** The columns a task's life changes, in the order `changing` gives their values. */
const CHANGING = [
  'status',
  'status_message',
  'updated_at',
  'input_requests',
  'answers',
  'asked_keys',
  'request_state',
  'result',
  'error',
  'final_seq',
] as const;

const changing = (task: TaskRecord): (string | number | null)[] => [
  task.status,
  task.statusMessage,
  task.updatedAt,
  json(task.inputRequests),
  json(task.answers),
  JSON.stringify(task.askedKeys),
  task.requestState,
  json(task.result),
  json(task.error),
  task.finalSeq,
];
const parsed = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export class TaskStore {
  readonly #storage: DurableObjectStorage;
  /** The task as last read or written: this instance is its only writer, so it is read once. */
  #task: TaskRecord | undefined;

  private constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** The store of an object that holds a task; undefined for one that never did (or was purged). */
  static open(storage: DurableObjectStorage): TaskStore | undefined {
    const version = storedVersion(storage.sql, TASK_SCHEMA);
    if (version === 0) return undefined;
    if (version < TASK_SCHEMA.version) storage.transactionSync(() => upgradeSchema(storage.sql, TASK_SCHEMA));
    const store = new TaskStore(storage);
    return store.#row() === undefined ? undefined : store;
  }

  /** Stores a new task, its schema first, in one transaction: nobody hears of the task before this returns. */
  static create(storage: DurableObjectStorage, task: TaskRecord, call: TaskCall): TaskStore {
    storage.transactionSync(() => {
      createSchema(storage.sql, TASK_SCHEMA);
      storage.sql.exec(
        `INSERT INTO task (singleton, task_id, created_at, ttl_ms, poll_interval_ms, call, ${CHANGING.join(', ')})
         VALUES (1, ?, ?, ?, ?, ?, ${CHANGING.map(() => '?').join(', ')})`,
        task.taskId,
        task.createdAt,
        task.ttlMs,
        task.pollIntervalMs,
        JSON.stringify(call),
        ...changing(task),
      );
    });
    return new TaskStore(storage);
  }

  read(): TaskRecord {
    if (this.#task !== undefined) return this.#task;
    const row = this.#row();
    if (row === undefined) throw new Error('the task row is gone');
    this.#task = {
      taskId: row.task_id,
      status: row.status as TaskStatus,
      statusMessage: row.status_message,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      ttlMs: row.ttl_ms,
      pollIntervalMs: row.poll_interval_ms,
      inputRequests: parsed(row.input_requests),
      answers: parsed(row.answers),
      askedKeys: JSON.parse(row.asked_keys) as string[],
      requestState: row.request_state,
      result: parsed(row.result),
      error: parsed<TaskError>(row.error),
      finalSeq: row.final_seq,
    };
    return this.#task;
  }

  call(): TaskCall {
    return JSON.parse(this.#storage.sql.exec<{ call: string }>(`SELECT call FROM task`).one().call) as TaskCall;
  }

  /** Writes what changed of the task; the id, creation time and call never change. */
  write(task: TaskRecord): void {
    this.#storage.sql.exec(`UPDATE task SET ${CHANGING.map((column) => `${column} = ?`).join(', ')}`, ...changing(task));
    this.#task = task;
  }

  /** Reads the row again next time: a transaction that wrote it was rolled back. */
  forget(): void {
    this.#task = undefined;
  }

  #row(): Row | undefined {
    return this.#storage.sql.exec<Row>(`SELECT * FROM task`).toArray()[0];
  }
}
