/**
 * The task's record is the truth: stored before anyone hears of the task, never `working`
 * after the instance that ran it ended, never run again, its result kept across restarts,
 * and nobody else's to read. Restarts are real ones (`abortAllDurableObjects` ends every
 * object's instance mid-whatever); eviction is the platform's, with nothing running.
 */
import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { answerOf } from '../support/modern-http.ts';
import { createTask, getTask, taskMethod, taskObject, waitForStatus } from '../support/task-http.ts';

describe('an instance that dies mid-task', () => {
  it('leaves the task failed with task_interrupted on the next read, and never runs the tool again', async () => {
    const taskId = await createTask('slow_compute', { seconds: 30, label: 'doomed' });
    await expect.poll(async () => (await getTask(taskId)).result.statusMessage, { timeout: 5000, interval: 50 }).toBe('1 of 30 seconds');

    await abortAllDurableObjects();

    const after = (await getTask(taskId)).result;
    expect(after.status).toBe('failed');
    expect(after.error).toMatchObject({ code: -32603, data: { reason: 'task_interrupted' } });
    expect(after.statusMessage, 'a failed task says why').toBe(after.error.message);
    // The instance that answered runs nothing, and the task stays as it was read.
    expect(await runInDurableObject(taskObject(taskId), (instance) => instance.running)).toBe(false);
    await scheduler.wait(1200);
    expect((await getTask(taskId)).result).toEqual(after);
  });

  it('does not touch a task that was waiting for input: the answer still runs its next round', async () => {
    const taskId = await createTask('confirm_delete', { filename: 'kept.txt' });
    await waitForStatus(taskId, 'input_required');
    await abortAllDurableObjects();
    expect((await getTask(taskId)).result.status).toBe('input_required');
    await answerOf(
      await taskMethod('tasks/update', taskId, { inputResponses: { confirm_delete: { action: 'accept', content: { confirm: true } } } }),
    );
    expect((await waitForStatus(taskId, 'completed')).result.content[0].text).toBe('Deleted kept.txt');
  });
});

describe('a finished task', () => {
  it('keeps its result across a restart', async () => {
    const taskId = await createTask('slow_compute', { seconds: 1, label: 'kept' });
    const done = await waitForStatus(taskId, 'completed');
    await abortAllDurableObjects();
    expect((await getTask(taskId)).result).toEqual(done);
  });

  it('is woken from eviction unchanged (a wake is not a restart)', async () => {
    const taskId = await createTask('slow_compute', { seconds: 0, label: 'evicted' });
    const done = await waitForStatus(taskId, 'completed');
    await evictDurableObject(taskObject(taskId));
    expect((await getTask(taskId)).result).toEqual(done);
  });
});

describe('a task stored by an older schema version', () => {
  it('version 1 (its version in a schema_migrations table) is upgraded by the next instance that reads it, and reads as it did', async () => {
    const taskId = await createTask('slow_compute', { seconds: 0, label: 'old' });
    const done = await waitForStatus(taskId, 'completed');
    // As version 1 stored it: no schema_version or final_seq column, a schema_migrations row.
    await runInDurableObject(taskObject(taskId), (_instance, state) => {
      state.storage.sql.exec(`ALTER TABLE task DROP COLUMN schema_version`);
      state.storage.sql.exec(`ALTER TABLE task DROP COLUMN final_seq`);
      state.storage.sql.exec(`CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`);
      state.storage.sql.exec(`INSERT INTO schema_migrations (id, applied_at) VALUES (1, ?)`, Date.now());
    });
    await abortAllDurableObjects();
    expect((await getTask(taskId)).result).toEqual(done);
    const tables = await runInDurableObject(taskObject(taskId), (_instance, state) => ({
      version: state.storage.sql.exec<{ v: number }>(`SELECT schema_version AS v FROM task`).one().v,
      migrations: state.storage.sql.exec(`SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'`).toArray().length,
    }));
    expect(tables).toEqual({ version: 3, migrations: 0 });
  });

  it('version 2 (no event timeline) is upgraded and reads as it did', async () => {
    const taskId = await createTask('slow_compute', { seconds: 0, label: 'v2' });
    const done = await waitForStatus(taskId, 'completed');
    await runInDurableObject(taskObject(taskId), (_instance, state) => {
      state.storage.sql.exec(`ALTER TABLE task DROP COLUMN final_seq`);
      state.storage.sql.exec(`UPDATE task SET schema_version = 2`);
    });
    await abortAllDurableObjects();
    expect((await getTask(taskId)).result).toEqual(done);
    const row = await runInDurableObject(taskObject(taskId), (_instance, state) =>
      state.storage.sql.exec<{ v: number; f: number | null }>(`SELECT schema_version AS v, final_seq AS f FROM task`).one(),
    );
    // Its terminal event is at seq 1 (nothing was stored between): final_seq stays null.
    expect(row).toEqual({ v: 3, f: null });
  });
});
