/**
 * The durable floor's task rows (index.ts `FloorTask`), shared with the SDK floor's tasks
 * (../sdk-floor/tasks.ts), which store exactly these: a Worker's main module exports only its
 * handler and its object classes.
 */
export const MODERN = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** 128 bits as base64url: 21 full characters, then one whose low 4 bits are zero. */
export const TASK_ID = /^[A-Za-z0-9_-]{21}[AQgw]$/;

/** A new task id: 128 random bits, base64url. */
export function newTaskId(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** Creates the task's table and its row, `working` (and, for a `progress_task`, its events table). */
export function storeWorkingTask(sql: SqlStorage, taskId: string, now: number, withEvents: boolean): void {
  sql.exec(
    'CREATE TABLE task (task_id TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, result TEXT)',
  );
  if (withEvents) sql.exec('CREATE TABLE events (seq INTEGER PRIMARY KEY, data TEXT NOT NULL)');
  sql.exec("INSERT INTO task VALUES (?, 'working', ?, ?, NULL)", taskId, now, now);
}

/** The task `completed` with `result`. */
export function storeCompleted(sql: SqlStorage, result: unknown): void {
  sql.exec("UPDATE task SET status = 'completed', updated_at = ?, result = ?", Date.now(), JSON.stringify(result));
}
