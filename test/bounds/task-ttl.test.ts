/**
 * A task lives until `createdAt + ttlMs` (TASK_TTL_MS is 1 s in this project), then its alarm
 * deletes it: tasks/get answers -32602 and the object holds nothing.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { callDeclared, createTask, getTask, taskObject, waitForStatus } from '../support/task-http.ts';

// The first modern request of a file loads the SDK (seconds on 2 cores): not within a task's 1 s.
beforeAll(() => callDeclared('greet', { name: 'warm-up' }));

const tablesOf = (taskId: string) =>
  runInDurableObject(
    taskObject(taskId),
    (_instance, state) =>
      state.storage.sql
        .exec<{ n: number }>(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'`)
        .one().n,
  );

describe('a task past its TTL', () => {
  it('is kept until then (an early alarm only sets itself again), then purged by its alarm and unknown', async () => {
    const taskId = await createTask('slow_compute', { seconds: 0, label: 'brief' });
    const done = await waitForStatus(taskId, 'completed', 900);
    expect(done.ttlMs).toBe(1000);
    expect(await runDurableObjectAlarm(taskObject(taskId))).toBe(true);
    expect((await getTask(taskId)).result.status).toBe('completed');

    // The alarm the object set at creation fires at createdAt + ttlMs, by itself.
    await expect.poll(() => tablesOf(taskId), { timeout: 5000, interval: 100 }).toBe(0);
    expect((await getTask(taskId)).error.code).toBe(-32602);
  });

  it('is unknown from the moment it expires, even if its alarm has not run', async () => {
    const taskId = await createTask('slow_compute', { seconds: 0, label: 'expired' });
    const done = await waitForStatus(taskId, 'completed', 900);
    await runInDurableObject(taskObject(taskId), (_instance, state) => state.storage.deleteAlarm());
    await scheduler.wait(Math.max(0, Date.parse(done.createdAt) + 1000 - Date.now()));
    expect(await tablesOf(taskId), 'still stored (its one table): only the read can tell').toBe(1);
    expect((await getTask(taskId)).error.code).toBe(-32602);
    expect(await tablesOf(taskId), 'the read purged it').toBe(0);
  });
});
