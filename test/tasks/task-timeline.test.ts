/**
 * A task's timeline in its object's storage (src/tasks/task-timeline.ts): seq 0 is the task's
 * creation and the last its terminal status, both read from the task itself; what happens
 * between is one row each, created with the first; past the bound the oldest go and the
 * timeline starts later — with core/task-stream.ts's verdicts, never a silent gap.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { encodeBody, notificationEvent, statusEvent, TASK_EVENT_TYPES } from '../../src/core/task-events.ts';
import { decideTaskStream } from '../../src/core/task-stream.ts';
import { afterOutcome, newTask, type TaskRecord } from '../../src/core/task.ts';
import { BATCH_ROWS, TaskTimeline } from '../../src/tasks/task-timeline.ts';

/** Runs `body` on the storage of a fresh object; `written()`: the rows its statements wrote so far. */
function inFreshObject<T>(body: (sql: SqlStorage, written: () => Promise<number>) => T | Promise<T>): Promise<T> {
  const stub = env.MCP_TASKS.get(env.MCP_TASKS.idFromName(`timeline-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_instance, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
    sql.exec = ((query: string, ...bindings: unknown[]) => {
      const cursor = exec(query, ...bindings);
      cursors.push(cursor);
      return cursor;
    }) as SqlStorage['exec'];
    // Counted once the statements' cursors are done with (a microtask later).
    const written = () =>
      new Promise<number>((resolve) => queueMicrotask(() => resolve(cursors.reduce((sum, c) => sum + c.rowsWritten, 0))));
    return body(sql, written);
  });
}

const task = newTask('task-1', 1_000, 60_000, 1_000);
const progress = (n: number) => notificationEvent('notifications/progress', { progressToken: 'task', progress: n })!;
/** The task completed now, with the terminal seq the timeline gives it (as the task object keeps it). */
const completed = (t: TaskRecord, finalSeq: number | null = null) => ({
  ...afterOutcome(t, { kind: 'result', result: { content: [] } }, 5_000),
  finalSeq,
});

describe('a task timeline', () => {
  it('is the creation at seq 0 and the end after it, with no event row, for a task with nothing between', async () => {
    const result = await inFreshObject((sql) => {
      const timeline = new TaskTimeline(sql, { maxEvents: 10 });
      const finalSeq = timeline.finalSeq();
      const done = completed(task, finalSeq);
      return {
        finalSeq,
        events: timeline.events(done, 0),
        state: timeline.state(done),
        tables: sql.exec(`SELECT name FROM sqlite_master WHERE name = 'task_events'`).toArray().length,
      };
    });
    expect(result).toEqual({
      finalSeq: 1,
      events: [
        { seq: 0, ...statusEvent(task) },
        { seq: 1, ...statusEvent(completed(task, 1)) },
      ],
      state: { nextSeq: 2, earliestSeq: 0, terminal: true },
      tables: 0,
    });
  });

  it('numbers what happens between 1, 2, … and ends with the terminal status after it; replays from any seq', async () => {
    const result = await inFreshObject((sql) => {
      const timeline = new TaskTimeline(sql, { maxEvents: 10 });
      const seqs = [1, 2, 3].map((n) => timeline.append(task, progress(n), 2_000 + n));
      const finalSeq = timeline.finalSeq();
      const done = completed(task, finalSeq);
      // A new instance reads the same timeline.
      const again = new TaskTimeline(sql, { maxEvents: 10 });
      return {
        seqs,
        finalSeq,
        all: again.events(done, 0),
        from: [0, 1, 2, 3, 4, 5].map((from) => again.events(done, from).map((e) => e.seq)),
        line: again.statusLine(),
      };
    });
    expect(result.seqs).toEqual([1, 2, 3]);
    expect(result.finalSeq).toBe(4);
    expect(result.all.map((e) => [e.seq, e.type])).toEqual([
      [0, TASK_EVENT_TYPES.status],
      [1, TASK_EVENT_TYPES.progress],
      [2, TASK_EVENT_TYPES.progress],
      [3, TASK_EVENT_TYPES.progress],
      [4, TASK_EVENT_TYPES.status],
    ]);
    expect(result.all[2]).toEqual({ seq: 2, type: TASK_EVENT_TYPES.progress, payload: { progress: 2 } });
    expect(result.from).toEqual([[0, 1, 2, 3, 4], [1, 2, 3, 4], [2, 3, 4], [3, 4], [4], []]);
    // The newest line and when it was stored: what tasks/get reports of a working task.
    expect(result.line).toEqual({ line: '3', at: 2_003 });
  });

  it('past maxEvents drops the oldest: the timeline starts later, and an older cursor is events_gone', async () => {
    const result = await inFreshObject((sql) => {
      const timeline = new TaskTimeline(sql, { maxEvents: 3 });
      for (let n = 1; n <= 6; n++) timeline.append(task, progress(n), 2_000);
      const state = timeline.state(task);
      return {
        stored: sql
          .exec<{ seq: number }>(`SELECT seq FROM task_events ORDER BY seq`)
          .toArray()
          .map((row) => row.seq),
        state,
        fromStart: timeline.events(task, 0).map((e) => e.seq),
        verdicts: [undefined, 0, 2, 3, 6].map((after) => decideTaskStream(after, state)),
      };
    });
    expect(result).toEqual({
      stored: [4, 5, 6],
      state: { nextSeq: 7, earliestSeq: 4, terminal: false },
      fromStart: [4, 5, 6],
      verdicts: [
        { kind: 'stream', fromSeq: 4 },
        { kind: 'gone', earliestSeq: 4 },
        { kind: 'gone', earliestSeq: 4 },
        { kind: 'stream', fromSeq: 4 },
        { kind: 'stream', fromSeq: 7 },
      ],
    });
  });

  it('takes nothing once the task ended: its terminal status is its last event', async () => {
    await expect(
      inFreshObject((sql) => new TaskTimeline(sql, { maxEvents: 3 }).append(completed(task), progress(1), 2_000)),
    ).rejects.toThrow('task task-1 has ended: its timeline is closed');
  });

  it('costs a row per stored event, its table once, and a row per event dropped past the bound', async () => {
    const rows = await inFreshObject(async (sql, written) => {
      const timeline = new TaskTimeline(sql, { maxEvents: 2 });
      const counts: number[] = [];
      for (let n = 1; n <= 4; n++) {
        const before = await written();
        timeline.append(task, progress(n), 2_000);
        counts.push((await written()) - before);
      }
      return counts;
    });
    // The first creates the table (2 rows) and stores itself; the third and fourth drop one each.
    expect(rows).toEqual([3, 1, 2, 2]);
  });

  it('stores a batch as consecutive seqs, in statements of at most BATCH_ROWS, as one append each would', async () => {
    const n = 2 * BATCH_ROWS + 3;
    const result = await inFreshObject(async (sql, written) => {
      const timeline = new TaskTimeline(sql, { maxEvents: 10 * BATCH_ROWS });
      const statements: string[] = [];
      const exec = sql.exec.bind(sql);
      sql.exec = ((query: string, ...bindings: unknown[]) => {
        if (query.startsWith('INSERT')) statements.push(query);
        return exec(query, ...bindings);
      }) as SqlStorage['exec'];
      const first = timeline.appendAll(
        task,
        Array.from({ length: n }, (_, i) => encodeBody(progress(i + 1))),
        2_000,
      );
      const rows = await written();
      const next = timeline.append(task, progress(n + 1), 2_001);
      const done = completed(task, timeline.finalSeq());
      return { first, next, rows, statements: statements.length, events: timeline.events(done, 0), line: timeline.statusLine() };
    });
    expect(result.first).toBe(1);
    expect(result.next).toBe(n + 1);
    expect(result.statements).toBe(4); // 3 for the batch, 1 for the append
    expect(result.rows).toBe(n + 2); // and the table (2 rows) once
    expect(result.events.map((event) => event.seq)).toEqual(Array.from({ length: n + 3 }, (_, i) => i));
    expect(result.events.slice(1, -1).map((event) => event.payload.progress)).toEqual(Array.from({ length: n + 1 }, (_, i) => i + 1));
  });

  it('past maxEvents, a batch drops the oldest with one DELETE, as its events would one by one', async () => {
    const result = await inFreshObject((sql) => {
      const timeline = new TaskTimeline(sql, { maxEvents: 5 });
      timeline.appendAll(
        task,
        [1, 2, 3].map((n) => encodeBody(progress(n))),
        2_000,
      );
      timeline.appendAll(
        task,
        [4, 5, 6, 7].map((n) => encodeBody(progress(n))),
        2_001,
      );
      return { state: timeline.state(task), seqs: timeline.events(task, 0).map((event) => event.seq) };
    });
    expect(result.state).toEqual({ nextSeq: 8, earliestSeq: 3, terminal: false });
    expect(result.seqs).toEqual([3, 4, 5, 6, 7]);
  });
});
