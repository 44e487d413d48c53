/**
 * A task's admission by the principal's registry around its creation: forgotten only when the
 * object refused the task, kept when the outcome is unknown (the object may be running it).
 */
import { describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../src/auth/principal.ts';
import { type TaskAdmission, TaskDirectory, type TaskNamespace } from '../../src/tasks/task-directory.ts';
import type { TaskCall } from '../../src/tasks/task-store.ts';

const CALL: TaskCall = {
  message: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'work', arguments: {} } },
  headers: {},
  principal: ANONYMOUS,
};

/** A namespace whose every object answers `create` with `answer`. */
function namespace(answer: () => Promise<Response>): TaskNamespace {
  return {
    idFromName: (name) => ({ name, toString: () => name, equals: () => false }) as unknown as DurableObjectId,
    get: () => ({ fetch: answer }),
  };
}

function admission() {
  const log: string[] = [];
  const registry: TaskAdmission = {
    admitTask: async (taskId) => void log.push(`admit ${taskId}`),
    forget: async (_kind, taskId) => void log.push(`forget ${taskId}`),
  };
  return { log, registry };
}

const settings = { ttlMs: 60_000, pollIntervalMs: 1_000 };

describe('a task admitted before its object creates it', () => {
  it.each<[string, () => Promise<Response>]>([
    ['no answer (the connection to the object was lost)', () => Promise.reject(new Error('Network connection lost.'))],
    ['a 500', async () => new Response('', { status: 500 })],
    ['a 503', async () => new Response('', { status: 503 })],
  ])('stays admitted after %s: the object may be running it', async (_name, answer) => {
    const { log, registry } = admission();
    await expect(new TaskDirectory(namespace(answer), ANONYMOUS, settings, registry).create(CALL)).rejects.toThrow();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/^admit /);
  });

  it.each([400, 409, 413])('is forgotten when the object refused it (%i)', async (status) => {
    const { log, registry } = admission();
    const directory = new TaskDirectory(
      namespace(async () => new Response('', { status })),
      ANONYMOUS,
      settings,
      registry,
    );
    await expect(directory.create(CALL)).rejects.toThrow();
    const taskId = log[0]!.slice('admit '.length);
    expect(log).toEqual([`admit ${taskId}`, `forget ${taskId}`]);
  });

  it('is kept when created', async () => {
    const { log, registry } = admission();
    const created = { task: { taskId: 'x', status: 'working' } };
    const directory = new TaskDirectory(
      namespace(async () => Response.json(created)),
      ANONYMOUS,
      settings,
      registry,
    );
    expect(await directory.create(CALL)).toEqual(created);
    expect(log).toHaveLength(1);
  });
});
