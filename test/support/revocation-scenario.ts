/**
 * One revocation, end to end, whatever revokes (the operator's route with AUTH=jwt, the OAuth
 * token endpoint with AUTH=oauth): alice holds a session with a running call, a task and a
 * listen stream, and so does bob; alice's grant is revoked. Afterwards her call's stream has
 * ended with an explicit error, her listen stream too, her session answers 404 and her task
 * reads failed with the reason; bob's are as they were.
 */
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { busShardName, busShardSockets } from '../../src/stateless/event-bus.ts';
import { callTool, errorOf, openSession, type Session } from './mcp-http.ts';
import { answerOf, modernRequest } from './modern-http.ts';
import { ENDED, message, SseReader, TIMED_OUT } from './sse-reader.ts';
import { createTask, getTask, TASKS } from './task-http.ts';

export interface RevocationScenario {
  /** Headers of alice's requests and bob's. */
  readonly alice: Record<string, string>;
  readonly bob: Record<string, string>;
  /** Revokes alice's grant; resolves once the server says it is done. */
  revoke(): Promise<void>;
  /** Alice's headers after the revocation (a new grant's token, where the old one stopped working). */
  aliceAfter(): Promise<Record<string, string>>;
}

interface Holdings {
  readonly session: Session;
  readonly call: SseReader;
  readonly taskId: string;
  readonly listen: SseReader;
}

async function hold(auth: Record<string, string>, label: string): Promise<Holdings> {
  const session = await openSession('2025-11-25', {}, auth);
  const response = await session.post(callTool(`call-${label}`, 'slow_compute', { seconds: 60, label }));
  expect(response.status).toBe(200);
  const call = new SseReader(response);
  // Its priming event: the call's stream is open (nothing else comes before the call ends).
  const priming = await call.next();
  expect(priming !== ENDED && priming !== TIMED_OUT && priming.data === '').toBe(true);
  const taskId = await createTask('slow_compute', { seconds: 60, label }, auth);
  const listen = new SseReader(await modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } }, {}, auth));
  const [ack] = await listen.take(1);
  expect(message(ack!).method).toBe('notifications/subscriptions/acknowledged');
  return { session, call, taskId, listen };
}

/** The messages left on a stream until it ends (failing if it does not end within `ms`). */
export async function rest(reader: SseReader, ms = 5_000): Promise<Record<string, unknown>[]> {
  const messages: Record<string, unknown>[] = [];
  for (;;) {
    const event = await reader.next(ms);
    if (event === ENDED) return messages;
    if (event === TIMED_OUT) throw new Error(`the stream did not end within ${ms} ms; it carried ${JSON.stringify(messages)}`);
    if (event.data !== '') messages.push(message(event));
  }
}

/** Listen streams' sockets, on every shard of the project's bus, once they number at least `n`. */
export async function listening(n: number): Promise<void> {
  const shards = Number((env as { BUS_SHARDS?: string }).BUS_SHARDS ?? 1);
  const shard = (index: number) => env.MCP_BUS.get(env.MCP_BUS.idFromName(busShardName(index)));
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await busShardSockets(shard, shards)).reduce((a, b) => a + b, 0) >= n) return;
    await scheduler.wait(10);
  }
  throw new Error(`fewer than ${n} listen sockets`);
}

export async function runRevocationScenario(scenario: RevocationScenario): Promise<void> {
  const alice = await hold(scenario.alice, 'alice');
  const bob = await hold(scenario.bob, 'bob');
  await listening(2);
  await scenario.revoke();

  // Her running call: answered with the error, then its stream ends.
  const answers = (await rest(alice.call)).filter((m) => m.id === 'call-alice');
  expect(answers).toHaveLength(1);
  expect(answers[0]).toMatchObject({ error: { data: { reason: 'grant_revoked' } } });
  // Her listen stream: ended with an error for the listen request, not a silent stop.
  const lastListen = (await rest(alice.listen)).at(-1);
  expect(lastListen).toMatchObject({ error: { data: { reason: 'grant_revoked' } } });

  const after = await scenario.aliceAfter();
  // Her session is gone: 404, as for one that never existed.
  const posted = await alice.session.post({ jsonrpc: '2.0', id: 'after', method: 'tools/list' }, after);
  expect((await errorOf(posted)).status).toBe(404);
  // Her task failed, saying why.
  const task = (await getTask(alice.taskId, after)).result;
  expect(task).toMatchObject({ status: 'failed', error: { data: { reason: 'grant_revoked' } } });

  // Bob's: his call still runs, his listen is open, his session serves, his task works.
  expect(await bob.call.next(300)).toBe(TIMED_OUT);
  expect(await bob.listen.next(50)).toBe(TIMED_OUT);
  const echo = await bob.session.call('tools/call', { name: 'echo', arguments: { text: 'still here' } });
  expect(JSON.stringify(echo.filter((e) => e.data !== '').map(message))).toContain('still here');
  expect((await getTask(bob.taskId, scenario.bob)).result.status).toBe('working');
  await Promise.all([bob.call.cancel(), bob.listen.cancel()]);
  // Cleanup: bob's task stops working (it would run for a minute).
  const cancelled = await answerOf(await modernRequest('tasks/cancel', { taskId: bob.taskId }, TASKS, scenario.bob));
  expect(cancelled.error).toBeUndefined();
}
